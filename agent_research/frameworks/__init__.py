"""The same reconciliation pipeline (ensemble -> aggregate -> debate + supervisor -> combine) in three
orchestrations: plain Python (:class:`agent_research.ForecastPipeline`), a LangGraph state graph
(:mod:`.langgraph_pipeline`) and a crew of OpenAI Agents SDK role agents (:mod:`.agents_sdk_pipeline`).

All three take the same inputs (:class:`agent_research.RoleProviders`, a ``ToolExecutor``,
:class:`agent_research.PipelineConfig`) and the same agents (:meth:`agent_research.ForecastPipeline.from_config`);
the framework versions only orchestrate the agents' public steps (requests, calls, answer reading,
artifacts), reach the providers through the adapters in :mod:`.bridge`, and return a
:class:`agent_schemas.PipelineTrace`.

>>> from agent_research.frameworks import FRAMEWORKS, build_pipeline  # doctest: +SKIP
>>> trace = build_pipeline("langgraph", RoleProviders.single(p), executor, PipelineConfig()).run(q)  # doctest: +SKIP

The LangGraph and Agents SDK implementations need ``pip install 'forecast-reconcile[frameworks]'``; the
framework modules are imported only when built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_providers import Provider
from agent_research.config import PipelineConfig, RoleProviders
from agent_research.pipeline import ForecastPipeline
from agent_tools import ToolExecutor

#: Implementation names accepted by :func:`build_pipeline`, in table order.
FRAMEWORKS: tuple[str, ...] = ("python", "langgraph", "openai-agents")


def build_pipeline(framework: str, providers: RoleProviders | Sequence[Provider] | Provider, executor: ToolExecutor | None = None,
                   config: PipelineConfig | None = None) -> Any:
    """Build one implementation of the pipeline.

    Parameters
    ----------
    framework : {"python", "langgraph", "openai-agents"}
    providers : RoleProviders, sequence of Provider or Provider
        Providers of members, bull, bear and supervisor (as for :meth:`ForecastPipeline.from_config`).
    executor : ToolExecutor, optional
        Search with the cutoff-date guard, shared by forecasters and supervisor; no research when None.
    config : PipelineConfig, optional

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
    spec = ForecastPipeline.from_config(providers, executor, config)
    if framework == "python":
        return spec
    if framework == "langgraph":
        from agent_research.frameworks.langgraph_pipeline import LangGraphPipeline

        return LangGraphPipeline(spec)
    from agent_research.frameworks.agents_sdk_pipeline import AgentsSDKPipeline

    return AgentsSDKPipeline(spec)


__all__ = ["FRAMEWORKS", "PipelineConfig", "RoleProviders", "build_pipeline"]
