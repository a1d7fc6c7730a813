"""A question's trace and its ``results.jsonl`` record: every method and baseline read from the one shared
pipeline run, the usage ledger and the leakage audit of the prompts sent."""

from __future__ import annotations

import logging
from typing import Any

from agent_research import ForecastPipeline
from agent_schemas import PipelineTrace, Question, as_reconcile_error
from benchmarks.harness.config import RunConfig
from benchmarks.protocol.baselines import compute_baselines
from benchmarks.protocol.clusters import ClusterAssignment
from benchmarks.protocol.leakage import leakage_audit
from benchmarks.protocol.methods import method_rows
from benchmarks.run_folder.record import QuestionRecord

__all__ = ["baseline_table", "failed_trace", "question_record", "run_trace"]

log = logging.getLogger(__name__)


async def run_trace(pipeline: ForecastPipeline, q: Question, config: RunConfig) -> PipelineTrace:
    """The pipeline's trace of one question in a run of ``config``: what the agents may see of it
    (:meth:`Question.visible`, with the crowd when ``config.show_crowd``), every search capped at the run's
    evidence cutoff (:meth:`Question.evidence_cutoff_date`); anything the pipeline raises gives a failed trace with
    the typed error (:func:`failed_trace`)."""
    show_crowd = config.show_crowd
    try:
        return await pipeline.arun(q.visible(show_crowd=show_crowd), cutoff_date=q.evidence_cutoff_date(config.evidence_cutoff))
    except Exception as exc:
        return failed_trace(q, exc, show_crowd=show_crowd)


def failed_trace(q: Question, exc: BaseException, *, show_crowd: bool) -> PipelineTrace:
    """The trace of a question whose run raised ``exc`` (status "failed", the typed error); logged, the run goes on."""
    log.warning("question %s failed with an unexpected %s: %s (the run goes on)", q.id, type(exc).__name__, exc)
    return PipelineTrace(question=q.visible(show_crowd=show_crowd), status="failed",
                         error=as_reconcile_error(exc).to_info(), final_source="question failed")


def question_record(q: Question, trace: PipelineTrace, *, config: RunConfig, clusters: ClusterAssignment,
                    baselines: dict[str, dict[str, dict[str, Any]]]) -> QuestionRecord:
    """The ``results.jsonl`` record of one finished question: ``config``'s methods read from ``trace``, the
    question's bootstrap cluster and its row of ``baselines`` (:func:`baseline_table`)."""
    return QuestionRecord(
        question_id=q.id,
        status=trace.status,
        error=trace.error.model_dump() if trace.error else None,
        outcome=q.outcome,
        source=q.source,
        question_type=q.question_type,
        cluster=clusters.labels.get(q.id, q.cluster_id),
        horizon_days=q.horizon_days,
        forecast_date=q.forecast_date.isoformat(),
        resolution_date=q.resolution_date.isoformat() if q.resolution_date else None,
        methods=method_rows(trace, config.methods, min_spread=config.pipeline.reconcile_min_spread),
        baselines=baselines.get(q.id, {}),
        ledger=trace.ledger.to_records(),
        audit=leakage_audit(trace, q, cutoff_date=q.evidence_cutoff_date(config.evidence_cutoff)),
        wall_time_s=trace.wall_time_s,
        trace=trace,
    )


def baseline_table(questions: list[Question], names: list[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """Baseline forecasts per question, ``{qid: {name: {<the kind's forecast field>, "status", "note"}}}`` for the
    ``names`` a question's kind has: ForecastBench's reference forecasts for a kind that has them
    (:attr:`~agent_schemas.kinds.base.QuestionKind.forecastbench_baselines`: binary, ``p_yes``), else the kind's own
    (:meth:`~agent_schemas.kinds.base.QuestionKind.baselines`: the crowd, the uninformed forecast)."""
    out: dict[str, dict[str, dict[str, Any]]] = {q.id: {} for q in questions}
    reference = [q for q in questions if q.kind.forecastbench_baselines]
    if reference:
        df = compute_baselines(reference)
        for qid, method, p_yes, detail in zip(df["question_id"], df["method"], df["p_yes"], df["detail"]):
            if method not in names:
                continue
            p = None if p_yes != p_yes else float(p_yes)  # NaN: not available
            out[qid][method] = {"p_yes": p, "status": "ok" if p is not None else "unavailable", "note": detail}
    for q in questions:
        if q.kind.forecastbench_baselines:
            continue
        for name, (forecast, note) in q.kind.baselines(q).items():
            if name in names:
                out[q.id][name] = {**q.kind.fields(forecast), "status": "ok" if forecast is not None else "unavailable", "note": note}
    return out
