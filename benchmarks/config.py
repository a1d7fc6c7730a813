"""The configuration of one benchmark run (stored in ``manifest.json``)."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from benchmarks.methods import DEFAULT_METHODS, validate_methods

BASELINE_NAMES = ("crowd", "superforecaster_median", "base_rate", "always_0.5")
#: Longest run id accepted (characters): a folder name on every common file system.
MAX_RUN_ID_CHARS = 200


def validate_run_id(run_id: str) -> str:
    """Return ``run_id`` if it is a plain folder name, so a run folder stays inside its output folder.

    Raises
    ------
    ValueError
        For an empty id, an id with a path separator (``/`` or ``\\``), ``..``, a control character,
        or more than :data:`MAX_RUN_ID_CHARS` characters (the message shows the id as given).
    """
    bad = (not run_id or run_id.strip() != run_id or "/" in run_id or "\\" in run_id or ".." in run_id
           or run_id == "." or len(run_id) > MAX_RUN_ID_CHARS or any(not c.isprintable() for c in run_id))
    if bad:
        raise ValueError(f"run id {run_id!r} is not a plain folder name: use at most {MAX_RUN_ID_CHARS} printable "
                         "characters, without '/', '\\', '..' or surrounding spaces")
    return run_id


class RunConfig(BaseModel):
    """Everything that defines a run; two runs with equal configs and caches give equal results."""

    run_id: str | None = Field(None, description="Folder name under output_dir; default a timestamp.")
    output_dir: str = Field("runs", description="Parent folder of run folders.")
    providers: list[str] = Field(default_factory=list, description="Provider specs cycled over members; empty = auto_provider().")
    n_members: int = Field(3, ge=1, le=32, description="Ensemble size (count).")
    methods: list[str] = Field(default_factory=lambda: list(DEFAULT_METHODS), description="Reconciliation methods to score.")
    baselines: list[str] = Field(default_factory=lambda: list(BASELINE_NAMES), description="Baselines to score.")
    # question selection
    questions_file: str | None = Field(None, description="User question file (CSV/JSONL/Parquet); default: bundled ForecastBench.")
    sources: list[str] | None = Field(None, description="ForecastBench sources to keep, e.g. ['polymarket'].")
    question_type: Literal["market", "dataset"] | None = Field("market", description="ForecastBench question type.")
    forecast_date_from: dt.date | None = Field(None, description="Keep questions with forecast date on or after this date.")
    forecast_date_to: dt.date | None = Field(None, description="Keep questions with forecast date on or before this date.")
    after_model_cutoff: bool = Field(
        True,
        description=(
            "Keep only questions whose forecast date is after every model's training cutoff (plus "
            "cutoff_margin_days). A model with no known cutoff stops the run unless forecast_date_from is set; "
            "False accepts contaminated questions explicitly."
        ),
    )
    cutoff_margin_days: int = Field(0, ge=0, description="Safety margin in days added after the latest training cutoff (a published month may understate it).")
    close_by_snapshot: bool = Field(
        True,
        description=(
            "Bundled data: keep only questions whose scheduled close date is on or before the outcome snapshot "
            "(benchmarks.questions.DATA_SNAPSHOT_DATE), which removes the survivorship bias of early-resolved markets."
        ),
    )
    one_per_source_question: bool = Field(True, description="One row per source question (no repeated markets).")
    sample_n: int | None = Field(6, ge=1, description="Seeded sample size; None = all matching questions.")
    seed: int = Field(0, description="Seed of the question sample, member sampling and fault injection.")
    # agents
    show_crowd: bool = Field(False, description="Show the crowd / market probability at freeze in the case facts (off: the models forecast without it).")
    temperature: float | None = Field(0.7, description="Member sampling temperature.")
    max_tokens: int = Field(512, ge=16, description="Max generated tokens per call (tokens).")
    search: Literal["local", "ddg", "none"] = Field("local", description="Research backend: bundled dated corpus, DuckDuckGo, or none.")
    n_queries: int = Field(1, ge=0, description="Research queries per member (count).")
    max_evidence: int = Field(1, ge=0, le=5, description="Key-evidence items per forecast (each costs about 60 generated tokens).")
    max_results: int = Field(2, ge=1, description="Search results per query that reach the prompt (count).")
    snippet_chars: int = Field(200, ge=20, description="Snippet length in prompts (characters).")
    debate_rounds: int = Field(2, ge=1, description="Maximum debate rounds.")
    consensus_threshold: float = Field(0.05, gt=0, lt=1, description="Debate stops when |bull - bear| is below this.")
    supervisor_queries: int = Field(2, ge=0, description="Clarifying searches of the supervisor (count).")
    reconcile_min_spread: float = Field(0.0, ge=0, le=1, description="Run debate/supervisor only when member spread >= this.")
    # execution
    concurrency: int | None = Field(None, ge=1, description="Questions in flight at once; default 1 for embedded models (one model, calls serialised; sequential questions reuse llama.cpp's prompt prefix) and 8 otherwise.")
    member_timeout_s: float = Field(300.0, gt=0, description="Per-member deadline in seconds.")
    min_success_fraction: float = Field(0.5, gt=0, le=1, description="Members that must succeed.")
    max_attempts: int = Field(4, ge=1, description="Provider attempts per call (retry layer).")
    cache: bool = Field(True, description="Persistent response cache (resume and re-runs cost no tokens).")
    cache_dir: str | None = Field(None, description="Response cache folder; default <run folder>/cache. Share one between runs to re-run for free.")
    n_threads: int | None = Field(None, description="Threads of the embedded llama.cpp model.")

    @field_validator("run_id")
    @classmethod
    def _run_id(cls, v: str | None) -> str | None:
        return None if v is None else validate_run_id(v)

    @field_validator("methods")
    @classmethod
    def _methods(cls, v: list[str]) -> list[str]:
        return validate_methods(v)

    @field_validator("baselines")
    @classmethod
    def _baselines(cls, v: list[str]) -> list[str]:
        unknown = [b for b in v if b not in BASELINE_NAMES]
        if unknown:
            raise ValueError(f"unknown baselines {unknown}; valid: {', '.join(BASELINE_NAMES)}")
        return v
