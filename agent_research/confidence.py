"""Confidence grounded in evidence: the supervisor's stated confidence capped by what it found, and a
question's overall confidence as its weakest link.

Why
---
A model's self-reported confidence is cheap: on the embedded model the supervisor said "high" on every
question, also when every clarifying search had failed, and the combination rule let it replace the
ensemble. Here the supervisor's confidence is what it said *capped by the evidence it obtained*, by a
fixed rule recorded in the trace, and the combination rule reads that effective value.

The supervisor's rule (:func:`ground_supervisor`, :data:`GROUNDING_RULE`)
-------------------------------------------------------------------------
Levels are ordered ``low < medium < high``; the effective confidence is the lowest of the stated one and
every cap that applies:

* searches were run and **every one failed** (access failures): at most **low**. There is no evidence
  beyond the members', and a failure says nothing about the world;
* **no disagreement supported** by evidence (every coverage note a gap: no result both relevant to
  the question and the disagreement and dated on or before the cutoff, no query proposed, no search
  configured), or no disagreement named at all: at most **medium**. It reconciled by judgement alone:
  one more opinion, never a replacement;
* **some disagreements left open** (a coverage gap): at most **medium**. The members those
  disagreements name were not reconciled.

So "high" stands only when every named disagreement's search returned a relevant result dated on or
before the cutoff. Evidence is counted, not hits: a coverage note is "supported" only by such a result
(the supervisor judges each result by the rule of :mod:`agent_tools.relevance`,
:data:`agent_tools.relevance.RELEVANCE_RULE`: never a forecasting question's listing, naming the question's
subject, sharing its content words; it records each judgement in the note's ``evidence``); a query of
"2025-10-26" that returned chess ratings, a sibling market's page, or a relevant page with no date, supports
nothing.

A failed supervisor has no confidence (None). The rule reads only the supervisor's artifact (its
disagreements, coverage notes and search outcomes), so the combination rule can apply it to any
artifact, recorded or not (:func:`effective_confidence`). In traces written before results were judged
(notes without ``evidence``, grounding rule ``v1``) "supported" meant any dated result; their recorded
grounding is read as it was. The caps are this project's rule, not a published method; the report's
confidence-band table measures whether the result means anything.

A question's overall confidence (:func:`question_confidence`)
------------------------------------------------------------
The minimum over the successful members' stated confidences and the supervisor's effective one (the
weakest link, never their mean); members that stated none are left out. QA flags:
``low_confidence`` when the overall level is low, ``unresolved_disagreement`` when the supervisor left a
named disagreement open (a coverage gap) or failed.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_schemas import Forecast, GroundedConfidence, QuestionConfidence, SupervisorArtifact
from agent_tools.relevance import RELEVANCE_RULE

__all__ = ["CONFIDENCE_LEVELS", "GROUNDING_RULE", "effective_confidence", "ground_supervisor", "grounded",
           "lowest", "question_confidence"]

#: Confidence levels from lowest to highest.
CONFIDENCE_LEVELS: tuple[str, ...] = ("low", "medium", "high")
#: Name and version of the supervisor's grounding rule, recorded with every grounded confidence.
GROUNDING_RULE = ("evidence caps v2: all searches failed -> low; no disagreement supported by a relevant result dated "
                  f"on or before the cutoff -> medium; a gap -> medium (relevance: {RELEVANCE_RULE})")


def lowest(levels: Sequence[str | None]) -> str | None:
    """The lowest of ``levels`` (``low < medium < high``), ignoring None; None when none is given.

    Raises
    ------
    ValueError
        For a level other than low, medium or high.

    Examples
    --------
    >>> lowest(["high", None, "medium"])
    'medium'
    """
    given = [lv for lv in levels if lv is not None]
    bad = [lv for lv in given if lv not in CONFIDENCE_LEVELS]
    if bad:
        raise ValueError(f"confidence must be one of {', '.join(CONFIDENCE_LEVELS)}, got {bad[0]!r}")
    return min(given, key=CONFIDENCE_LEVELS.index) if given else None


def ground_supervisor(artifact: SupervisorArtifact) -> GroundedConfidence:
    """Apply the evidence rule (module docstring) to a supervisor artifact.

    Parameters
    ----------
    artifact : SupervisorArtifact
        A supervisor's result; its ``confidence`` is the self-report.

    Returns
    -------
    GroundedConfidence
        ``reported`` (the self-report), ``effective`` (capped; None for a failed artifact) and one reason
        line per cap that applies ("at most medium: ..."), whether or not it lowered the self-report.
    """
    reported = artifact.confidence
    if artifact.status != "ok" or reported is None:
        return GroundedConfidence(reported=reported, effective=None, rule=GROUNDING_RULE,
                                  reasons=["the supervisor failed: no reconciliation to be confident in"]
                                  if artifact.status != "ok" else [])
    caps: list[tuple[str, str]] = []
    searches = artifact.search_outcomes
    failed = [o for o in searches if not o.ok]
    gaps = [c for c in artifact.coverage if c.status == "gap"]
    if searches and len(failed) == len(searches):
        kinds = ", ".join(sorted({o.failure_type or "unknown" for o in failed}))
        caps.append(("low", f"every clarifying search failed ({len(failed)} of {len(searches)}: {kinds}): "
                            "no evidence beyond the members'"))
    if not artifact.disagreements:
        caps.append(("medium", "no disagreement was named, so nothing was checked against evidence"))
    elif artifact.coverage and len(gaps) == len(artifact.coverage):
        reasons = "; ".join(sorted({g.reason for g in gaps if g.reason}))
        caps.append(("medium", "no disagreement is supported by a relevant result dated on or before the cutoff "
                               f"({len(gaps)} gap(s): {reasons or 'no reason given'})"))
    elif gaps:
        open_topics = {g.topic for g in gaps}
        members = sorted({a for d in artifact.disagreements if d.topic in open_topics for a in d.agents})
        who = f": members {', '.join(members)} not reconciled" if members else ""
        caps.append(("medium", f"{len(gaps)} of {len(artifact.coverage)} disagreements left open (coverage gaps){who}"))
    effective = lowest([reported, *(level for level, _ in caps)])
    return GroundedConfidence(reported=reported, effective=effective, rule=GROUNDING_RULE,
                              reasons=[f"at most {level}: {reason}" for level, reason in caps])


def grounded(artifact: SupervisorArtifact | None) -> SupervisorArtifact | None:
    """A copy of ``artifact`` with its :attr:`~agent_schemas.SupervisorArtifact.grounding` set by
    :func:`ground_supervisor` (None stays None). The pipeline records this copy in the trace."""
    if artifact is None:
        return None
    return artifact.model_copy(update={"grounding": ground_supervisor(artifact)})


def effective_confidence(artifact: SupervisorArtifact) -> str | None:
    """The confidence the combination rule reads: the recorded grounding's ``effective`` value, else the
    rule applied now (an artifact that did not come through the pipeline is never taken at its word)."""
    return (artifact.grounding or ground_supervisor(artifact)).effective


def question_confidence(forecasts: Sequence[Forecast], supervisor: SupervisorArtifact | None) -> QuestionConfidence:
    """A question's overall confidence: the weakest link among the successful members' stated confidences
    and the supervisor's effective one, with the QA flags of the module docstring.

    Parameters
    ----------
    forecasts : sequence of Forecast
        The ensemble's forecasts; failed members and members that stated no confidence are left out.
    supervisor : SupervisorArtifact or None
        The supervisor's artifact (grounded or not), or None when it did not run.
    """
    by_agent: dict[str, str | None] = {f.agent_id: f.confidence for f in forecasts if f.ok}
    notes: list[str] = []
    flags: list[str] = []
    if supervisor is not None:
        grounding = supervisor.grounding or ground_supervisor(supervisor)
        if supervisor.status == "ok":
            by_agent["supervisor"] = grounding.effective
        gaps = [c.topic for c in supervisor.coverage if c.status == "gap"]
        if supervisor.status != "ok":
            flags.append("unresolved_disagreement")
            notes.append("the supervisor failed: the members' disagreement was not reconciled")
        elif gaps:
            flags.append("unresolved_disagreement")
            notes.append(f"{len(gaps)} disagreement(s) left open by the supervisor: {'; '.join(gaps)}")
    overall = lowest(list(by_agent.values()))
    if overall == "low":
        flags.insert(0, "low_confidence")
        notes.insert(0, "overall confidence low (weakest: " + ", ".join(a for a, c in by_agent.items() if c == "low") + ")")
    missing = [a for a, c in by_agent.items() if c is None]
    if missing:
        notes.append(f"no confidence stated by {', '.join(missing)} (left out of the minimum)")
    return QuestionConfidence(overall=overall, by_agent=by_agent, flags=flags, notes=notes,  # type: ignore[arg-type]
                              weakest=[a for a, c in by_agent.items() if c is not None and c == overall])
