"""The same reconciliation pipeline (ensemble -> aggregate -> debate + supervisor -> combine) in three
orchestrations: plain Python (:class:`agent_research.ForecastPipeline`), a LangGraph state graph
(:mod:`.langgraph_pipeline`) and a crew of OpenAI Agents SDK role agents (:mod:`.agents_sdk_pipeline`).

All three take the same inputs (:class:`RoleProviders`, a ``ToolExecutor``, :class:`FrameworkConfig`),
build every prompt with the plain-Python agents' ``build_messages`` methods, reach the providers through
the adapters in :mod:`.bridge`, and return a :class:`agent_schemas.PipelineTrace`.

>>> from agent_research.frameworks import FRAMEWORKS, build_pipeline  # doctest: +SKIP
>>> trace = build_pipeline("langgraph", RoleProviders.single(p), executor, FrameworkConfig()).run(q)  # doctest: +SKIP

The LangGraph and Agents SDK implementations need ``pip install 'forecast-reconcile[frameworks]'``; the
framework modules are imported only when built.
"""

from __future__ import annotations

from typing import Any

from agent_research.frameworks.common import FrameworkConfig, RoleProviders, build_plain_pipeline
from agent_tools import ToolExecutor

#: Implementation names accepted by :func:`build_pipeline`, in table order.
FRAMEWORKS: tuple[str, ...] = ("python", "langgraph", "openai-agents")


def build_pipeline(framework: str, providers: RoleProviders, executor: ToolExecutor | None = None,
                   config: FrameworkConfig | None = None) -> Any:
    """Build one implementation of the pipeline.

    Parameters
    ----------
    framework : {"python", "langgraph", "openai-agents"}
    providers : RoleProviders
        Providers of members, bull, bear and supervisor.
    executor : ToolExecutor, optional
        Search with the cutoff-date guard, shared by forecasters and supervisor; no research when None.
    config : FrameworkConfig, optional

    Returns
    -------
    ForecastPipeline, LangGraphPipeline or AgentsSDKPipeline
        Each has ``run(question)`` and ``arun(question)`` returning a PipelineTrace; the framework ones
        keep the plain pipeline that holds the agents as ``.spec``.

    Raises
    ------
    ValueError
        For an unknown framework name.
    ImportError
        When the framework is not installed (names the extra to install).
    """
    if framework not in FRAMEWORKS:
        raise ValueError(f"unknown framework {framework!r}; valid: {', '.join(FRAMEWORKS)}")
    spec = build_plain_pipeline(providers, executor, config or FrameworkConfig())
    if framework == "python":
        return spec
    if framework == "langgraph":
        from agent_research.frameworks.langgraph_pipeline import LangGraphPipeline

        return LangGraphPipeline(spec)
    from agent_research.frameworks.agents_sdk_pipeline import AgentsSDKPipeline

    return AgentsSDKPipeline(spec)


__all__ = ["FRAMEWORKS", "FrameworkConfig", "RoleProviders", "build_pipeline", "build_plain_pipeline"]
