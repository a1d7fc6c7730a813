"""The configuration of one benchmark run (stored in ``manifest.json``): the question selection, the
run's execution, and the pipeline every question runs (an :class:`agent_research.PipelineConfig`)."""

from __future__ import annotations

import datetime as dt
import json
import secrets
import warnings
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, field_validator, model_serializer, model_validator

from agent_providers.gguf_weights import WeightFormat
from agent_providers.llama_sampling import GrammarSampling
from agent_research import DebateSettings, MemberSettings, PipelineConfig, SupervisorSettings
from agent_schemas import DEFAULT_EVIDENCE_CUTOFF, EvidenceCutoff
from agent_schemas.kinds import DEFAULT_KIND, KINDS, QuestionKind, kind_named
from benchmarks.protocol.baselines import BASELINES
from benchmarks.protocol.methods import DEFAULT_METHODS, RECONCILIATION_METHODS, default_methods, validate_methods
from benchmarks.run_folder.layout import MANIFEST_FILE
from benchmarks.run_folder.shards import parse_shard, shard_run_id

#: Longest run id accepted (characters): a folder name on every common file system.
MAX_RUN_ID_CHARS = 200


def __getattr__(name: str) -> Any:
    if name == "BASELINE_NAMES":  # was a copy of benchmarks.protocol.baselines.BASELINES; goes in the next release
        warnings.warn("benchmarks.harness.config.BASELINE_NAMES is deprecated; use benchmarks.protocol.baselines.BASELINES", DeprecationWarning, stacklevel=2)
        return BASELINES
    raise AttributeError(f"module 'benchmarks.harness.config' has no attribute {name!r}")


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


#: The smallest member spread (max - min ``p_yes``, probability units) a run reconciles by default: 0, every
#: question. With ``--reconcile-min-spread 0.1`` debate and supervisor run only on questions whose members
#: disagree by at least 10 points; where they agree the reconciliation methods equal the mean at no extra
#: cost and are scored as ``debate_gated``, ``supervisor_gated`` and ``pipeline_gated``
#: (``benchmarks.protocol.methods``). Off by default: on the embedded model's main job (SmolLM2's members often
#: answer 0 and 100 on one question) a 0.1 gate still reconciled 9 of 12 questions and saved only 10% of
#: the calls (7.0 -> 6.33 per question), not worth changing the default leaderboard's labels.
RECONCILE_MIN_SPREAD = 0.0

#: The pipeline of a run unless the config gives another: answers sized for small models (512 tokens,
#: one evidence item, two search results per member query), every member at once, 2 debate rounds,
#: 2 clarifying searches of 5 results, every question reconciled (:data:`RECONCILE_MIN_SPREAD`).
RUN_PIPELINE = PipelineConfig(
    concurrency=None,
    max_tokens=512,
    reconcile_min_spread=RECONCILE_MIN_SPREAD,
    member=MemberSettings(n_queries=1, max_results=2, max_evidence=1),
    debate=DebateSettings(max_rounds=2),
    supervisor=SupervisorSettings(max_queries=2, max_results=5),
)

#: The command line's pipeline options (flat ``RunConfig`` keywords, also what manifests written before
#: the pipeline was embedded hold) and where each goes in :class:`agent_research.PipelineConfig`.
PIPELINE_OPTIONS: dict[str, tuple[tuple[str, ...], ...]] = {
    "n_members": (("n_members",),),
    "temperature": (("temperatures",),),
    "max_tokens": (("max_tokens",),),
    "n_queries": (("member", "n_queries"),),
    "max_evidence": (("member", "max_evidence"),),
    "max_results": (("member", "max_results"),),
    "debate_rounds": (("debate", "max_rounds"),),
    "consensus_threshold": (("debate", "consensus_threshold"),),
    "supervisor_queries": (("supervisor", "max_queries"),),
    "reconcile_min_spread": (("reconcile_min_spread",),),
    "member_timeout_s": (("member_timeout_s",),),
    "min_success_fraction": (("min_success_fraction",),),
    "evidence": (("evidence",),),
}


def pipeline_with_options(pipeline: PipelineConfig | dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """``pipeline`` (as a dict) with the flat :data:`PIPELINE_OPTIONS` in ``options`` set where they belong
    (``temperature=t`` sets ``temperatures=[t]``)."""
    out = pipeline.model_dump() if isinstance(pipeline, PipelineConfig) else dict(pipeline)
    for key, value in options.items():
        for path in PIPELINE_OPTIONS[key]:
            if len(path) == 1:
                out[path[0]] = [value] if key == "temperature" else value
            elif out.get(path[0]) is not None:  # a stage that is left out stays out
                out[path[0]] = {**dict(out[path[0]]), path[1]: value}
    return out


#: The settings a resumed run may change (:meth:`RunConfig.resumed`): where and how fast it runs, and the cost cap.
RESUME_OVERRIDES = ("executor", "ray_address", "max_cost_usd", "rate_limits")


class RunConfig(BaseModel):
    """Everything that defines a run; two runs with equal configs and caches give equal results.

    The pipeline's settings live in ``pipeline``. For the command line and older manifests the flat
    options of :data:`PIPELINE_OPTIONS` are accepted too (``RunConfig(n_members=5, debate_rounds=3)``) and
    moved into ``pipeline``; ``seed`` seeds the pipeline as well unless ``pipeline`` is given.
    """

    run_id: str | None = Field(None, description="Folder name under output_dir; default a timestamp.")
    output_dir: str = Field("runs", description="Parent folder of run folders.")
    providers: list[str] = Field(default_factory=list, description="Provider specs cycled over members; empty = auto_provider(), or none with a given ensemble whose methods need no model.")
    ensemble: Literal["forecasters", "given"] = Field(
        "forecasters",
        description=(
            "Who the members are. 'forecasters': pipeline.n_members forecasters run on the providers. 'given': their "
            "forecasts are given to the run (a panel's: BenchmarkRunner(ensemble=GivenForecasts(...))), the providers "
            "run only the debate and the supervisor, and with no provider nothing is called (then no method may need "
            "a model, and there is nothing to cap with max_cost_usd). A given ensemble runs in this process: not with "
            "batch or the ray executor."
        ),
    )
    kind: str = Field(DEFAULT_KIND, description=(
        "The kind of question the run forecasts and scores (agent_schemas.kinds: 'binary', 'multiple_choice', "
        "'numeric'); questions of other kinds in the question file are left out. Sets the default methods (the kind's "
        "pooling rules, then debate, supervisor, pipeline) and baselines (the crowd and the kind's uninformed forecast)."))
    methods: list[str] = Field(default_factory=lambda: list(DEFAULT_METHODS), description="Reconciliation methods to score.")
    baselines: list[str] = Field(default_factory=lambda: list(BASELINES), description="Baselines to score.")
    # question selection
    questions_file: str | None = Field(None, description="User question file (CSV/JSONL/Parquet) or a ForecastBench question set (.json); default: bundled ForecastBench.")
    resolutions_file: str | None = Field(None, description="The ForecastBench resolution set of questions_file (outcomes); without it a question set's questions run unresolved.")
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
    sample_n: int | None = Field(12, ge=1, description="Seeded sample size; None = all matching questions.")
    seed: int = Field(0, description="Seed of the question sample, the retry jitter and fault injection; also the pipeline's seed (models) unless pipeline is given.")
    # agents
    show_crowd: bool = Field(False, description="Show the crowd / market probability at freeze in the case facts (off: the models forecast without it).")
    evidence_cutoff: EvidenceCutoff = Field(DEFAULT_EVIDENCE_CUTOFF, description=(
        "The date every search of a question is capped at (agent_schemas.Question.evidence_cutoff_date): 'forecast', its "
        "forecast date; 'freeze', its freeze date, the day of the crowd's price (6-10 days earlier for ForecastBench "
        "questions), so members and supervisor know no more days than the crowd. The prompts state the forecast date "
        "either way; a question without a freeze date stops a 'freeze' run before anything is called."))
    search: Literal["local", "ddg", "none"] = Field("local", description="Research backend: bundled dated corpus, DuckDuckGo, or none.")
    snippet_chars: int = Field(200, ge=20, description="Snippet length in prompts (characters).")
    pipeline: PipelineConfig = Field(default_factory=lambda: RUN_PIPELINE, description="The pipeline every question runs (members, debate, supervisor, combination).")
    # execution
    concurrency: int | None = Field(None, ge=1, description="Questions in flight at once; default for embedded models: one per model context (n_slots, one per core), so each question's calls reuse its context's prompt prefix; 8 otherwise.")
    max_attempts: int = Field(4, ge=1, description="Provider attempts per call (retry layer).")
    cache: bool = Field(True, description="Persistent response cache (resume and re-runs cost no tokens).")
    cache_dir: str | None = Field(None, description="Response cache folder; default <run folder>/cache. Share one between runs to re-run for free.")
    n_threads: int | None = Field(None, ge=1, description="Threads of each context of the embedded llama.cpp model; default cores - 1.")
    n_slots: int | None = Field(None, ge=1, description="Contexts of the embedded model computing at once; default one per core at n_threads threads each.")
    n_threads_batch: int | None = Field(None, ge=1, description="Threads of the embedded model's prompt processing; default n_threads.")
    n_ctx: int | None = Field(None, ge=256, description="Context window of each embedded-model context (tokens, prompt + answer); default agent_providers.local_llama.DEFAULT_N_CTX (4,096).")
    weights: WeightFormat | None = Field(None, description="How the embedded model's weights are stored (default 'q8_0' for the packaged SmolLM2): 'q8_0' re-encodes the packaged Q4_1 weights as Q8_0, whose prompt kernels are faster; 'packaged' loads the file as shipped (before issue 15). See agent_providers.gguf_weights.")
    grammar_sampling: GrammarSampling | None = Field(None, description="How the embedded model's answer grammar constrains sampling (default 'resample'): 'resample' checks each sampled token and filters the vocabulary only on rejection (llama.cpp's way); 'filter' filters every token (llama-cpp-python's chain, before issue 15). See agent_providers.llama_sampling.")

    # execution at scale (benchmarks/executors, agent_providers.ratelimit, agent_providers.batch)
    rate_limits: dict[str, str] = Field(default_factory=dict, description="Rate limits by provider spec or prefix, e.g. {'anthropic': 'rpm:4000,itpm:2000000,otpm:400000'} (agent_providers.ratelimit.parse_rate_limits), set over the provider's defaults.")
    max_cost_usd: float | None = Field(None, gt=0, description="Cost cap in USD over the whole run (every session): no new question starts once spent plus the in-flight estimate would exceed it. A resume may raise it.")
    batch: bool = Field(False, description="Send each pipeline stage of all questions as one provider batch (Anthropic Message Batches, OpenAI Batch API; 50% of list price, up to 24 hours).")
    batch_poll_s: float = Field(30.0, gt=0, description="Seconds between status requests of a running batch (batch mode).")
    executor: Literal["local", "ray"] = Field("local", description="Where questions run: this process (asyncio) or Ray tasks (pip install 'forecast-reconcile[ray]').")
    ray_address: str | None = Field(None, description="Address of an existing Ray cluster (executor 'ray'); default: start a local one.")
    shard: str | None = Field(None, description="'i/n': run only shard i (0-based) of n of the selected questions (a stable hash of the question id); 'leaderboard' merges the shards of one run.")

    def with_run_id(self) -> "RunConfig":
        """This config with its run folder's name as ``run_id``: the given id, else a new one (local time and
        four random hex digits, ``20261201-014230-ab12``); a shard's with its suffix (``-shard0of4``,
        :func:`benchmarks.run_folder.shards.shard_run_id`)."""
        run_id = self.run_id or dt.datetime.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)
        if self.shard:
            run_id = shard_run_id(run_id, self.shard)
        return self.model_copy(update={"run_id": run_id})

    def run_folder(self) -> Path:
        """``<output_dir>/<run_id>`` (call :meth:`with_run_id` first for a config without a run id).

        Raises
        ------
        ValueError
            When ``run_id`` is not set.
        """
        if not self.run_id:
            raise ValueError("the config has no run_id: RunConfig.with_run_id() gives it one")
        return Path(self.output_dir) / self.run_id

    @classmethod
    def resumed(cls, run_dir: str | Path, **overrides: Any) -> "RunConfig":
        """The config of the run in ``run_dir`` (its manifest's), to continue it: the output folder and run id
        are the folder's own, and only the settings of how it executes may change (:data:`RESUME_OVERRIDES`;
        a value of None keeps the recorded one; ``rate_limits`` are set over the recorded ones).

        Raises
        ------
        FileNotFoundError
            When ``run_dir`` has no ``manifest.json``.
        ValueError
            For an override that would change what the run computes (another question set, other methods).
        pydantic.ValidationError
            When the recorded config, with the overrides, is not valid.
        """
        unknown = sorted(set(overrides) - set(RESUME_OVERRIDES))
        if unknown:
            raise ValueError(f"a resumed run keeps its config; only {', '.join(RESUME_OVERRIDES)} may change, not {', '.join(unknown)}")
        run_dir = Path(run_dir)
        manifest = run_dir / MANIFEST_FILE
        if not manifest.exists():
            raise FileNotFoundError(f"{run_dir}: no {MANIFEST_FILE} (not a run folder)")
        config = cls.model_validate(json.loads(manifest.read_text(encoding="utf-8"))["config"])
        execution = {k: v for k, v in overrides.items() if v is not None}
        if "rate_limits" in execution:
            execution["rate_limits"] = {**config.rate_limits, **execution["rate_limits"]}
        return cls.model_validate({**config.model_dump(), **execution, "output_dir": str(run_dir.resolve().parent),
                                   "run_id": validate_run_id(run_dir.resolve().name)})

    def local_model_options(self) -> dict[str, int | str]:
        """The embedded model's options this config sets (``LocalLlamaProvider`` keywords)."""
        return {k: v for k, v in (("n_threads", self.n_threads), ("n_slots", self.n_slots),
                                  ("n_threads_batch", self.n_threads_batch), ("n_ctx", self.n_ctx), ("weights", self.weights),
                                  ("grammar_sampling", self.grammar_sampling)) if v}

    @property
    def question_kind(self) -> QuestionKind:
        """The run's kind of question (:attr:`kind`)."""
        return kind_named(self.kind)

    @model_validator(mode="before")
    @classmethod
    def _kind_defaults(cls, data: Any) -> Any:
        """A run of another kind than binary scores that kind's methods and baselines unless it names its own."""
        if not isinstance(data, dict) or data.get("kind") in (None, DEFAULT_KIND):
            return data
        kind = data["kind"]
        if kind not in KINDS:
            return data  # the field validator names it
        data = dict(data)
        if data.get("methods") is None:
            data["methods"] = list(default_methods(KINDS[kind]))
        if data.get("baselines") is None:
            data["baselines"] = list(KINDS[kind].baseline_names())
        return data

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The config's fields; ``kind`` only when it is not binary and ``evidence_cutoff`` only when it is not
        ``forecast``, so that a default run's manifest is the one it was before either option (and its shard
        digests and resumes are unchanged)."""
        out = handler(self)
        for key, default in (("kind", DEFAULT_KIND), ("evidence_cutoff", DEFAULT_EVIDENCE_CUTOFF)):
            if out.get(key) == default:
                del out[key]
        return out

    @model_validator(mode="before")
    @classmethod
    def _pipeline_options(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not (set(data) & set(PIPELINE_OPTIONS) or ("seed" in data and "pipeline" not in data)):
            return data
        data = dict(data)
        options = {k: data.pop(k) for k in list(data) if k in PIPELINE_OPTIONS}
        pipeline = data.get("pipeline", RUN_PIPELINE)
        seeded = {"seed": data["seed"]} if "seed" in data and "pipeline" not in data else {}
        data["pipeline"] = {**pipeline_with_options(pipeline, options), **seeded}
        return data

    def pipeline_for_methods(self) -> PipelineConfig:
        """The pipeline the run builds: :attr:`pipeline` without the debate or the supervisor when no
        method needs it (``debate`` / ``supervisor`` / ``pipeline``)."""
        needs = set(self.methods)
        return self.pipeline.model_copy(update={
            "debate": self.pipeline.debate if needs & {"debate", "pipeline"} else None,
            "supervisor": self.pipeline.supervisor if needs & {"supervisor", "pipeline"} else None,
        })

    @field_validator("run_id")
    @classmethod
    def _run_id(cls, v: str | None) -> str | None:
        return None if v is None else validate_run_id(v)

    @field_validator("shard")
    @classmethod
    def _shard(cls, v: str | None) -> str | None:
        if v is None:
            return None
        parse_shard(v)
        return v.strip()

    @field_validator("rate_limits")
    @classmethod
    def _rate_limits(cls, v: dict[str, str]) -> dict[str, str]:
        from agent_providers.ratelimit import parse_rate_limits

        for key, text in v.items():
            try:
                parse_rate_limits(text)
            except ValueError as exc:
                raise ValueError(f"--rate-limit {key}={text}: {exc}") from None
        return v

    @model_validator(mode="after")
    def _resolutions_need_questions(self) -> "RunConfig":
        if self.resolutions_file and not self.questions_file:
            raise ValueError("--resolutions is the resolution set of a ForecastBench question set: give the question set with --questions")
        return self

    @model_validator(mode="after")
    def _evidence_needs_search(self) -> "RunConfig":
        mode = self.pipeline.evidence
        if mode != "shared" and self.search == "none":
            raise ValueError(f"--evidence {mode} gives each member its own search results, but --search none makes no search: "
                             "give --search local or ddg, or use --evidence shared")
        if mode != "shared" and self.ensemble == "given":
            raise ValueError(f"--evidence {mode} gives each member its own search results, but a given ensemble's members do not "
                             "search: use --evidence shared")
        return self

    @model_validator(mode="after")
    def _given_ensemble(self) -> "RunConfig":
        if self.ensemble != "given":
            return self
        if self.batch or self.executor == "ray":
            raise ValueError("a given ensemble (ensemble='given') runs in this process: not with --batch or --executor ray")
        if not self.providers:
            need = [m for m in self.methods if m in RECONCILIATION_METHODS]
            if need:
                raise ValueError(f"the methods {', '.join(need)} need a model: give a provider (-p, e.g. -p sim) to run the "
                                 "debate and the supervisor on the given members")
            if self.max_cost_usd is not None:
                raise ValueError("--max-cost caps what providers cost, and a given ensemble without a provider calls none: "
                                 "drop --max-cost or give -p")
        return self

    @model_validator(mode="after")
    def _batch_executor(self) -> "RunConfig":
        if self.batch and self.executor == "ray":
            raise ValueError("--batch sends every question's calls from one process as provider batches; it does not run on --executor ray")
        return self

    @field_validator("methods")
    @classmethod
    def _methods(cls, v: list[str]) -> list[str]:
        return validate_methods(v)

    @field_validator("kind")
    @classmethod
    def _kind(cls, v: str) -> str:
        return kind_named(v).name

    @field_validator("baselines")
    @classmethod
    def _baselines(cls, v: list[str]) -> list[str]:
        valid = list(dict.fromkeys([*BASELINES, *(b for k in KINDS.values() for b in k.baseline_names())]))
        unknown = [b for b in v if b not in valid]
        if unknown:
            raise ValueError(f"unknown baselines {unknown}; valid: {', '.join(valid)}")
        return v

    @model_validator(mode="after")
    def _methods_of_kind(self) -> "RunConfig":
        kind = self.question_kind
        other = [m for m in self.methods if m not in kind.pools and m not in RECONCILIATION_METHODS]
        if other:
            raise ValueError(f"methods {other} are no pooling rule of {kind.label} questions; valid: "
                             f"{', '.join([*kind.pools, *RECONCILIATION_METHODS])}")
        return self
