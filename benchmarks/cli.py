"""The ``forecast-reconcile`` command line: ``run``, ``leaderboard``, ``view``, ``score``, ``aggregate``, ``export``, ``forecast``, ``frameworks``,
``diversity``, ``experiment diversity``.

Progress and usage go to stderr, tables to stdout. Every error a user can cause (a bad file, value,
path or option value, a busy run folder, a full disk) becomes one plain line at one boundary
(:func:`cli_errors`), exit code 2; user data is printed literally (never read as markup); ``--debug``
shows the traceback. A run in which every question failed exits with code 1.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import datetime as dt
import gc
import json
from collections import Counter
import logging
import sys
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import Any, Optional

import typer
import typer.core
from pydantic import ValidationError

from agent_providers.gguf_weights import WEIGHT_FORMATS
from agent_providers.llama_sampling import GRAMMAR_SAMPLING_MODES
from agent_schemas import DEFAULT_EVIDENCE_CUTOFF, EVIDENCE_CUTOFFS, ReconcileError
from agent_schemas.kinds import KINDS

#: click's exception root as typer raises it (typer >= 0.20 vendors click as ``typer._click``).
ClickException = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


class OneLineUsageErrors(typer.core.TyperGroup):
    """The command group, with command-line usage errors (an unknown option, a value that is not a number
    or not one of the choices) printed as one plain line, ``error: ... (see <command> --help)``, exit
    code 2, like every other user error (:func:`cli_errors`)."""

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)
        except ClickException as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # no arguments: the help is the answer
                typer.echo(exc.format_message())
                sys.exit(0)
            where = f" (see '{exc.ctx.command_path} --help')" if getattr(exc, "ctx", None) is not None else ""
            message = " ".join(exc.format_message().replace("Value error, ", "").split())
            typer.echo(f"error: {message}{where}", err=True)
            sys.exit(exc.exit_code)
        except typer.Abort:
            typer.echo("aborted", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(cls=OneLineUsageErrors, add_completion=False, no_args_is_help=True, pretty_exceptions_show_locals=False,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Reconcile LLM forecasts and benchmark aggregation methods on resolved questions.")


def _version(value: bool) -> None:
    if value:
        from benchmarks.harness.provenance import package_version

        typer.echo(f"forecast-reconcile {package_version()} (Python {sys.version.split()[0]})")
        raise typer.Exit()


@app.callback()
def main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit.")) -> None:
    """Reconcile LLM forecasts and benchmark aggregation methods on resolved questions.

    Start here: `forecast-reconcile questions` (browse the bundled questions), `forecast-reconcile forecast
    -p sim` (one question, every step explained, no model), `forecast-reconcile run -p sim --n 50` (a
    simulated benchmark in seconds), `forecast-reconcile run --dry-run` (what a real run would cost).
    """


#: Errors a user can cause (bad files, values, paths, a busy run folder, a full disk): one line, exit code 2.
USER_ERRORS = (ReconcileError, ValueError, OSError, csv.Error, ImportError)
#: Settings of ``RunConfig`` named as the ``run`` options that set them, in error messages.
OPTION_OF_FIELD = {
    "n_members": "--members", "sample_n": "--n", "search": "--search", "question_type": "--question-type",
    "max_tokens": "--max-tokens", "debate_rounds": "--debate-rounds", "supervisor_queries": "--supervisor-queries",
    "concurrency": "--concurrency", "methods": "--methods", "sources": "--sources", "run_id": "--run-id",
    "cutoff_margin_days": "--cutoff-margin-days", "seed": "--seed", "reconcile_min_spread": "--reconcile-min-spread",
    "max_cost_usd": "--max-cost", "shard": "--shard", "executor": "--executor", "rate_limits": "--rate-limit",
    "ray_address": "--ray-address", "batch": "--batch",
    # the same options once moved into the pipeline's configuration (benchmarks.harness.config.PIPELINE_OPTIONS)
    "pipeline.n_members": "--members", "pipeline.max_tokens": "--max-tokens",
    "pipeline.debate.max_rounds": "--debate-rounds", "pipeline.supervisor.max_queries": "--supervisor-queries",
    "pipeline.reconcile_min_spread": "--reconcile-min-spread", "pipeline.evidence": "--evidence", "evidence": "--evidence",
}


def one_line(exc: BaseException) -> str:
    """The user-facing message of ``exc`` on one line: a pydantic error as ``field: problem (value ...)``
    without the "validation error" preamble, an ``OSError`` as ``path: reason``, else its text."""
    if isinstance(exc, ValidationError):
        errors = exc.errors()
        e = errors[0]
        field = ".".join(str(part) for part in e["loc"])
        field = OPTION_OF_FIELD.get(field, field)
        msg = str(e["msg"]).removeprefix("Value error, ")
        text = msg if e["type"] == "value_error" else f"{field}: {msg} (value {e.get('input')!r})"
        if len(errors) > 1:
            text += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
    elif isinstance(exc, OSError) and not isinstance(exc, ReconcileError) and exc.filename is not None:
        target = f"{exc.filename} -> {exc.filename2}" if exc.filename2 is not None else str(exc.filename)
        text = f"{target}: {exc.strerror or exc}"
    else:
        text = str(exc) or type(exc).__name__
    return " ".join(text.split())


def _say(message: str) -> None:
    """One plain line on stderr: user data is never read as markup."""
    typer.echo(message, err=True)


def _tell(message: str) -> None:
    """A progress or summary message on stderr, wrapped to the terminal's width (at most 100 columns,
    :func:`benchmarks.viewer.terminal.text_lines`); an error stays one line (:func:`_say`)."""
    from benchmarks.viewer.terminal import text_lines

    typer.echo(text_lines(message, sys.stderr), err=True)


@contextlib.contextmanager
def cli_errors(debug: bool) -> Iterator[None]:
    """The command line's one error boundary.

    An error a user can cause (:data:`USER_ERRORS`) prints ``error: <one line>`` and exits with code 2;
    anything else (a bug) prints one line and exits with code 1. ``--debug`` re-raises instead, so the
    traceback is shown (without local variables, which could hold keys).
    """
    try:
        yield
    except (typer.Exit, typer.Abort):
        raise
    except USER_ERRORS as exc:
        if debug:
            raise
        _say(f"error: {one_line(exc)}")
        raise typer.Exit(code=2) from None
    except Exception as exc:
        if debug:
            raise
        _say(f"internal error: {type(exc).__name__}: {one_line(exc)} (run again with --debug for the traceback)")
        raise typer.Exit(code=1) from None


def _setup_logging(debug: bool) -> None:
    """Warnings (INFO with --debug) to stderr; the handler's level also mutes libraries that set DEBUG on their own loggers."""
    level = logging.INFO if debug else logging.WARNING
    logging.basicConfig(level=level, stream=sys.stderr)
    for handler in logging.getLogger().handlers:
        handler.setLevel(level)


def _csv(value: Optional[str]) -> Optional[list[str]]:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def _rate_limits(values: list[str]) -> dict[str, str]:
    """``--rate-limit`` values (``<spec or prefix>=<limits>``) as ``RunConfig.rate_limits``."""
    out = {}
    for v in values:
        key, sep, limits = v.partition("=")
        if not sep or not key.strip() or not limits.strip():
            raise ValueError(f"--rate-limit {v!r}: expected <provider spec or prefix>=<limits>, e.g. anthropic=rpm:4000,itpm:2000000")
        out[key.strip()] = limits.strip()
    return out


def _date(value: Optional[str], option: str) -> Optional[dt.date]:
    if not value:
        return None
    from agent_schemas.dates import utc_date

    try:
        return utc_date(value, field=option)
    except ValueError:
        raise ValueError(f"{option} {value!r} is not a date (expected YYYY-MM-DD)") from None


def _input_files(*given: tuple[Optional[Path], str]) -> None:
    """Check each (path, option) given before anything is loaded: a missing path or a folder where a file is
    expected fails at once, one line naming the option and the path."""
    for path, option in given:
        if path is None:
            continue
        if not path.exists():
            raise FileNotFoundError(f"{option} {path}: no such file")
        if path.is_dir():
            raise ValueError(f"{option} {path} is a folder, not a file")


def _folder(path: Path, option: str) -> Path:
    """``path`` if it is a folder or does not exist yet (it is created when results are written)."""
    if path.exists() and not path.is_dir():
        raise ValueError(f"{option} {path} is a file, not a folder")
    return path


def _report(runs: list[Any], out: Path, **kwargs: Any) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """:func:`benchmarks.report.write.write_report` of ``runs`` (folders, shard groups or loaded runs) into ``out``, with
    what the panels' runs among them add (:func:`benchmarks.panels.panel_additions`: the picks' rows, the panel's
    tables), so a panel's report is the same whichever command writes it. Each run is read once.

    Returns the report, the added rows and the extra tables."""
    from benchmarks.panels import panel_additions
    from benchmarks.report.write import write_report
    from benchmarks.run_folder.load import load_run

    loaded = [load_run(r) for r in runs]
    added, tables = panel_additions(loaded, n_resamples=kwargs.get("n_resamples", 1000), seed=kwargs.get("seed", 0))
    return write_report(loaded, out, added=added, extra_tables=tables, **kwargs), added, tables


def _print_kind_leaderboard(rep: Any) -> None:
    """Print the compact leaderboard of a report of one kind of question other than binary (``rep``: a
    :class:`benchmarks.report.write.Report` whose leaderboard has a ``kind`` column), naming the files with every column."""
    from agent_schemas.kinds import kind_named
    from benchmarks.viewer.terminal import compact_kind_leaderboard, print_table

    kind = kind_named(str(rep.leaderboard["kind"].iloc[0]))
    print_table(compact_kind_leaderboard(rep.leaderboard, primary=kind.primary_score,
                                         files=f"{rep.markdown_path.name}, leaderboard_{kind.name}.csv, {rep.html_path.name}"))


def _forecastbench_set(questions_file: Optional[Path]) -> bool:
    """True for a ForecastBench question set (``--questions <date>-llm.json``): a live round forecasts all of it."""
    return questions_file is not None and questions_file.suffix.lower() == ".json"


class Search(str, Enum):
    """A research backend."""

    local = "local"
    ddg = "ddg"
    none = "none"


#: How the embedded model's answer grammar constrains sampling (``agent_providers.llama_sampling``).
WeightsChoice = Enum("WeightsChoice", {m: m for m in WEIGHT_FORMATS}, type=str)
GrammarSamplingChoice = Enum("GrammarSamplingChoice", {m: m for m in GRAMMAR_SAMPLING_MODES}, type=str)


#: What a run caps a question's searches at (``agent_schemas.EvidenceCutoff``).
EvidenceCutoffChoice = Enum("EvidenceCutoffChoice", {c: c for c in EVIDENCE_CUTOFFS}, type=str)


#: A kind of question (``agent_schemas.kinds``).
KindChoice = Enum("KindChoice", {k: k for k in KINDS}, type=str)


class Evidence(str, Enum):
    """Who sees which search results (``agent_research.evidence_modes``)."""

    shared = "shared"
    split = "split"
    private = "private"


class QuestionType(str, Enum):
    """A ForecastBench question type, or any (no filter)."""

    market = "market"
    dataset = "dataset"
    any = "any"


#: The ``run`` options a resumed run reads (where it runs, how fast, its cost cap, what it prints and reports); every
#: other option defines what the run computes, which the run's manifest already fixes (:meth:`RunConfig.resumed`).
RESUME_OPTIONS = ("resume", "retry_failed", "output_dir", "executor", "ray_address", "max_cost", "rate_limit", "progress",
                  "report", "fit_from", "fit_from_any_model", "dry_run", "debug")


def _as_typed(param: Any, value: Any) -> str:
    """An option as a command line gives it: ``--evidence-cutoff freeze``, ``--no-cache``, ``--show-crowd``."""
    if isinstance(value, bool):
        return param.opts[0] if value or not param.secondary_opts else param.secondary_opts[0]
    shown = [getattr(v, "value", v) for v in (value if isinstance(value, (list, tuple)) else [value])]
    return " ".join([param.opts[0], *(str(v) for v in shown)])


def ignored_on_resume(ctx: typer.Context) -> list[str]:
    """The options given on the command line of ``run --resume`` that a resume would not read (not in
    :data:`RESUME_OPTIONS`), each as typed (``--evidence-cutoff freeze``), in the command's order. Values that
    come from an environment variable or a default are not counted: only what the user typed (click's
    ``ParameterSource.COMMANDLINE``, read by name: typer ships its own copy of click)."""
    return [_as_typed(p, ctx.params.get(p.name)) for p in ctx.command.params
            if p.name not in RESUME_OPTIONS and getattr(ctx.get_parameter_source(p.name), "name", None) == "COMMANDLINE"]


@app.command()
def run(
    ctx: typer.Context,
    provider: Optional[str] = typer.Option(None, "--provider", "-p", envvar="FORECAST_RECONCILE_PROVIDER",
                                           help="Provider spec(s), comma-separated, cycled over members: 'sim' (a simulation, no model, $0), 'local/smollm2', 'anthropic/claude-sonnet-4-6', 'openai/gpt-4.1-mini', 'openai-compatible/<model>@<url>'. Default: auto-detect from the environment."),
    n_members: Optional[int] = typer.Option(None, "--members", "-m", help="Ensemble size (default 3; with --ensemble, its counts' sum)."),
    ensemble: Optional[str] = typer.Option(None, "--ensemble", help="A mixed ensemble: each member's provider with its count, 'anthropic/claude-sonnet-4-6:2,openai/gpt-4.1-mini:1,local/smollm2:1', or a .toml/.json file with a 'members' table of spec = count (benchmarks/harness/mixed_ensemble.py). Instead of --provider."),
    methods: Optional[str] = typer.Option(None, help="Comma-separated methods (default: the kind's pooling rules, then debate, supervisor, pipeline; for binary mean, median, min, geomean_odds, extremized, debate, supervisor, pipeline)."),
    kind: Optional[KindChoice] = typer.Option(None, "--kind", help="The kind of question to run: binary (default), multiple_choice or numeric (the bundled questions of that kind, or a --questions file with its columns: see benchmarks/questions/files.py). Each kind is scored on its own leaderboard (leaderboard_<kind>.csv)."),
    sources: Optional[str] = typer.Option(None, help="ForecastBench sources, comma-separated (e.g. polymarket,manifold)."),
    question_type: QuestionType = typer.Option(QuestionType.market, help="ForecastBench question type."),
    n: Optional[int] = typer.Option(None, "--n", help="Seeded sample size (0 = all matching questions; default 12, and all of a ForecastBench question set)."),
    questions_file: Optional[Path] = typer.Option(None, "--questions", help="Your own question file (CSV/JSONL/Parquet; see benchmarks/questions/files.py for columns), or a ForecastBench question set (<date>-llm.json): each dataset question at each of its resolution dates, each market question once."),
    resolutions_file: Optional[Path] = typer.Option(None, "--resolutions", help="The ForecastBench resolution set of the --questions question set (<date>_resolution_set.json): its resolved questions only, with their outcomes (a backtest). Without it a question set runs unresolved (a live round)."),
    date_from: Optional[str] = typer.Option(None, help="Keep questions with forecast date on/after YYYY-MM-DD."),
    date_to: Optional[str] = typer.Option(None, help="Keep questions with forecast date on/before YYYY-MM-DD."),
    include_before_cutoff: bool = typer.Option(False, "--include-before-cutoff", help="Also use questions due before the model's training cutoff (contaminated). Without it, a model whose cutoff is unknown needs --date-from."),
    cutoff_margin_days: int = typer.Option(0, min=0, help="Safety margin in days after the latest model training cutoff."),
    include_unclosed: bool = typer.Option(False, "--include-unclosed", help="Bundled data: also use questions whose scheduled close is after the outcome snapshot (2026-08-20); these over-represent early (mostly Yes) resolutions."),
    show_crowd: bool = typer.Option(False, "--show-crowd", help="Show the crowd / market probability at freeze to the models (recorded in the manifest)."),
    search: Search = typer.Option(Search.local, help="Research backend: the bundled dated corpus, DuckDuckGo, or none."),
    evidence_cutoff: EvidenceCutoffChoice = typer.Option(DEFAULT_EVIDENCE_CUTOFF, "--evidence-cutoff", help="The date every search of a question is capped at: 'forecast', its forecast date; 'freeze', its freeze date, the day the crowd's price was taken (6-10 days earlier on ForecastBench), so the comparison with the crowd rests on the same days of news. The prompts state the forecast date either way; a question without a freeze date is refused (exit code 2). The manifest records freeze (and leaves the default out)."),
    debate_rounds: int = typer.Option(2, help="Maximum debate rounds."),
    supervisor_queries: int = typer.Option(2, help="Clarifying searches of the supervisor."),
    reconcile_min_spread: Optional[float] = typer.Option(None, min=0.0, max=1.0, help="Run debate and supervisor only on questions whose members disagree by at least this much (max - min p_yes); 0 reconciles every question. Default: benchmarks.harness.config.RUN_PIPELINE's (see the README)."),
    evidence: Evidence = typer.Option(Evidence.shared, "--evidence", help="Who sees which search results: 'shared' (every member the same, the default), 'split' (one search per question, its results dealt into disjoint shares, one per member, seeded by --seed), 'private' (each member writes and searches its own queries and sees only its results). Debate and supervisor see what each member saw. Needs --search local or ddg (agent_research/evidence_modes.py)."),
    max_tokens: int = typer.Option(512, help="Max generated tokens per call."),
    concurrency: Optional[int] = typer.Option(None, help="Questions in flight at once (default: one per context of the embedded model, see --slots; 8 otherwise)."),
    seed: int = typer.Option(0, help="Seed of the sample and the models."),
    output_dir: Path = typer.Option(Path("runs"), "--output", "-o", help="Parent folder of run folders."),
    run_id: Optional[str] = typer.Option(None, help="Run folder name (default: timestamp)."),
    resume: Optional[str] = typer.Option(None, "--resume", help="Continue the run with this id (or folder) without redoing finished questions, with the settings it started with (other options that change what it computes are refused; --executor, --ray-address, --max-cost and --rate-limit may change)."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="With --resume: run the questions whose record failed again (their failed records move to results.replaced.jsonl; the folder keeps one record per question)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the questions, calls, estimated tokens and USD per provider, and stop: no provider is called, nothing is written (method: benchmarks/harness/estimate.py)."),
    n_threads: Optional[int] = typer.Option(None, "--threads", "--n-threads", envvar="FORECAST_RECONCILE_THREADS", min=1, help="Threads of each context of the embedded model (default: cores - 1)."),
    n_slots: Optional[int] = typer.Option(None, "--slots", envvar="FORECAST_RECONCILE_SLOTS", min=1, help="Contexts of the embedded model computing at once, one question each (default: one per core at --threads threads each)."),
    n_threads_batch: Optional[int] = typer.Option(None, "--threads-batch", envvar="FORECAST_RECONCILE_THREADS_BATCH", min=1, help="Threads of the embedded model's prompt processing (default: --threads)."),
    n_ctx: Optional[int] = typer.Option(None, "--n-ctx", min=256, help="Context window of each context of the embedded model, in tokens (default 4096)."),
    weights: Optional[WeightsChoice] = typer.Option(None, "--weights", help="How the embedded SmolLM2's weights are stored (default q8_0): 'q8_0' re-encodes the packaged Q4_1 weights as Q8_0 once (llama.cpp's quantizer, about 145 MB in ~/.cache/forecast-reconcile/models or $FORECAST_RECONCILE_MODEL_CACHE), whose prompt kernels are faster; 'packaged' loads the file as shipped."),
    grammar_sampling: Optional[GrammarSamplingChoice] = typer.Option(None, "--grammar-sampling", help="How the embedded model's answer grammar constrains sampling (default resample): 'resample' checks each sampled token and filters the vocabulary only when the grammar rejects it (llama.cpp's way, faster); 'filter' filters every token (llama-cpp-python's chain)."),
    cache: bool = typer.Option(True, "--cache/--no-cache", help="Persistent response cache: a resumed or repeated run pays no call twice."),
    cache_dir: Optional[Path] = typer.Option(None, envvar="FORECAST_RECONCILE_CACHE", help="Response cache folder shared between runs (default: inside the run folder)."),
    report: bool = typer.Option(True, "--report/--no-report", help="Print a compact leaderboard and write leaderboard.csv/.md and report.html when done."),
    fit_from: Optional[str] = typer.Option(None, "--fit-from", help="Earlier run folders (or folders of runs), comma-separated, whose resolved questions the fitted methods also learn from (only those resolved before each question's forecast date); runs of other models are refused (exit code 2) unless --fit-from-any-model, and runs made with other settings (--show-crowd, members, personas, temperatures, evidence, --evidence-cutoff, question kinds, prompt version: benchmarks.protocol.fitted.FIT_SETTINGS) always."),
    fit_from_any_model: bool = typer.Option(False, "--fit-from-any-model", help="Let the fitted methods learn from --fit-from runs of other providers or models (the report names them)."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar on stderr."),
    rate_limit: Optional[list[str]] = typer.Option(None, "--rate-limit", help="Rate limits of a provider, '<spec or prefix>=<limits>', e.g. 'anthropic=rpm:4000,itpm:2000000,otpm:400000' or 'openai=rpm:5000,tpm:4000000,concurrent:64' (keys rpm, tpm, itpm, otpm, concurrent; set over the provider's first-tier defaults). Repeat per provider. Also on --resume."),
    max_cost: Optional[float] = typer.Option(None, "--max-cost", help="Cost cap in USD over the whole run: no new question starts once paid plus the in-flight estimate would exceed it; the manifest says why the run stopped. On --resume it may be raised."),
    batch: bool = typer.Option(False, "--batch", help="Send each pipeline stage of all questions as one provider batch (Anthropic Message Batches, OpenAI Batch API): 50% of list price, results within 24 hours; a resumed run picks up its submitted batches."),
    executor: str = typer.Option("local", "--executor", help="Where questions run: 'local' (this process) or 'ray' (Ray tasks; pip install 'forecast-reconcile[ray]'). Also on --resume."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", envvar="RAY_ADDRESS", help="With --executor ray: address of an existing Ray cluster (default: a local one)."),
    shard: Optional[str] = typer.Option(None, "--shard", help="Run shard i of n (i/n, from 0) of the selected questions, e.g. on n machines; 'leaderboard' merges the shards' folders into one run."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
) -> None:
    """Run every method and baseline on a seeded sample of real resolved questions.

    Exit codes: 0 done; 1 every question failed (the most common reason is printed); 2 bad input (one
    line naming the file, row, column, value or path; nothing is written before inputs validate).
    """
    _setup_logging(debug)
    with cli_errors(debug):  # every path given, checked before anything is imported or loaded
        _input_files((questions_file, "--questions"), (resolutions_file, "--resolutions"))
    from agent_providers import split_specs
    from benchmarks.harness.config import RunConfig, validate_run_id
    from benchmarks.harness.runner import BenchmarkRunner
    from benchmarks.run_folder.layout import MANIFEST_FILE
    from benchmarks.run_folder.load import load_run, run_folders

    with cli_errors(debug):
        _folder(output_dir, "--output")
        earlier = _csv(fit_from) or []
        # a wrong --fit-from folder, or a record in one that is not a record, fails now, before anything is written
        earlier_runs = [load_run(d) for d in run_folders(earlier)] if earlier else []
        if retry_failed and not resume:
            raise ValueError("--retry-failed re-runs the failed questions of an existing run: give --resume <run id>")
        if resume and (ignored := ignored_on_resume(ctx)):
            raise ValueError(f"--resume {resume} continues the run with the settings it started with, so {', '.join(ignored)} "
                             f"would be ignored: drop {'it' if len(ignored) == 1 else 'them'}, or start a new run (a resume may "
                             "change only --executor, --ray-address, --max-cost and --rate-limit)")
        if resume:
            rdir = Path(resume) if Path(resume).is_dir() else output_dir / validate_run_id(resume)
            try:
                config = RunConfig.resumed(rdir, executor=None if executor == "local" else executor, ray_address=ray_address or None,
                                           max_cost_usd=max_cost, rate_limits=_rate_limits(rate_limit) if rate_limit else None)
            except FileNotFoundError:
                raise FileNotFoundError(f"--resume {resume}: no {MANIFEST_FILE} in {rdir}") from None
        else:
            specs = split_specs(provider or "")
            if ensemble is not None:
                from benchmarks.harness.mixed_ensemble import member_specs, parse_ensemble

                if specs:
                    raise ValueError("give --provider or --ensemble, not both (--ensemble names every member's provider; "
                                     "FORECAST_RECONCILE_PROVIDER counts as --provider)")
                specs = member_specs(parse_ensemble(ensemble))
                if n_members is not None and n_members != len(specs):
                    raise ValueError(f"--ensemble gives {len(specs)} members but --members {n_members}: drop --members "
                                     "(the counts give the ensemble's size) or make them agree")
                n_members = len(specs)
            kwargs = dict(
                providers=specs, n_members=3 if n_members is None else n_members, sources=_csv(sources),
                question_type=None if question_type is QuestionType.any else question_type.value,
                sample_n=(n or None) if n is not None else (None if _forecastbench_set(questions_file) else 12),
                # absolute, so that `export` finds the question set from any folder
                questions_file=str(questions_file.absolute()) if questions_file else None,
                resolutions_file=str(resolutions_file.absolute()) if resolutions_file else None,
                forecast_date_from=_date(date_from, "--date-from"), forecast_date_to=_date(date_to, "--date-to"),
                after_model_cutoff=not include_before_cutoff, cutoff_margin_days=cutoff_margin_days,
                close_by_snapshot=not include_unclosed, show_crowd=show_crowd, search=search.value,
                evidence_cutoff=evidence_cutoff.value, debate_rounds=debate_rounds,
                supervisor_queries=supervisor_queries, max_tokens=max_tokens, concurrency=concurrency, seed=seed,
                output_dir=str(output_dir), run_id=run_id, n_threads=n_threads, n_slots=n_slots, n_threads_batch=n_threads_batch,
                n_ctx=n_ctx, weights=weights.value if weights else None,
                grammar_sampling=grammar_sampling.value if grammar_sampling else None, cache=cache,
                cache_dir=str(cache_dir) if cache_dir else None, rate_limits=_rate_limits(rate_limit or []),
                max_cost_usd=max_cost, batch=batch, executor=executor, ray_address=ray_address, shard=shard,
            )
            if methods:
                kwargs["methods"] = _csv(methods)
            if kind is not None:
                kwargs["kind"] = kind.value
            if reconcile_min_spread is not None:
                kwargs["reconcile_min_spread"] = reconcile_min_spread
            if evidence is not Evidence.shared:  # shared is the pipeline's default: the manifest stays the one before modes
                kwargs["evidence"] = evidence.value
            config = RunConfig(**kwargs)
        if dry_run:
            if resume:
                raise ValueError("--dry-run estimates a new run: drop --resume")
            from benchmarks.harness.estimate import ESTIMATE_COLUMNS, estimate_report, estimate_run
            from benchmarks.viewer.terminal import Column, compact_table, print_table, text_lines

            est = estimate_report(estimate_run(config))
            typer.echo(text_lines("\n".join(est.head)))
            more = [f"... and {est.more_questions} more"] if est.more_questions else []
            print_table(compact_table([Column("short id"), Column("forecast"), Column("source"), Column("question", wrap=True)],
                                      est.questions, caption=more))
            print_table(compact_table([Column(h, "left" if h in ("provider", "role") else "right", wrap=h == "provider")
                                       for h in ESTIMATE_COLUMNS], est.rows))
            typer.echo(text_lines("\n".join(est.tail)))
            return
        from benchmarks.harness.provenance import redacted_command_line

        runner = BenchmarkRunner(config, progress=progress, on_start=lambda folder: _say(f"run folder: {folder}"),
                                 command_line=redacted_command_line(sys.argv))
        if earlier:  # another model's, or other settings', --fit-from run fails now, not after the run
            from benchmarks.harness.manifest import prompt_version
            from benchmarks.protocol.fitted import FIT_SETTINGS, fit_sources, refuse_other_models, refuse_other_settings

            mine = {"run_id": runner.run_dir.name, "providers": [{"spec": p.spec, "model": p.model} for p in runner.stack.built()],
                    "config": runner.config.model_dump(mode="json"), "prompt_version": prompt_version()}
            if not fit_from_any_model:
                refuse_other_models(fit_sources({str(runner.run_dir): mine}, {r.name: r.manifest for r in earlier_runs}))
            # the question kinds are known once the questions are selected: the report checks them
            refuse_other_settings({str(runner.run_dir): mine}, {r.name: r.manifest for r in earlier_runs},
                                  only=[name for name in FIT_SETTINGS if name != "question kinds"])
        summary = asyncio.run(runner.arun(resume=bool(resume), retry_failed=retry_failed))
        _say(f"providers: {', '.join(p.spec for p in runner.stack.providers)}")
        retried = f", {summary.n_retried} failed set aside and retried" if summary.n_retried else ""
        _tell(f"{summary.n_questions} questions ({summary.n_done_before} already done{retried}): "
              f"{summary.n_ok} ok, {summary.n_failed} failed in {summary.wall_time_s:.1f} s; {summary.calls_in_words()}")
        if summary.stopped:
            _say(f"stopped: {summary.stopped['note']} (--resume {runner.run_dir.name} --max-cost <USD>)")
        if summary.all_failed:
            _say(f"error: every question failed ({summary.n_failed_total} of {summary.n_questions}); most common reason "
                 f"({summary.n_top_failure} questions): {' '.join((summary.top_failure or 'unknown').split())}")
            raise typer.Exit(code=1)
        if report:
            from benchmarks.report.members import degenerate_members_note
            from benchmarks.report.write import NothingToScore
            from benchmarks.viewer.terminal import print_compact_leaderboard, text_lines

            try:
                rep, _, _ = _report([runner.run_dir], runner.run_dir, baseline=None, fit_from=earlier, fit_from_any_model=fit_from_any_model)
            except NothingToScore as exc:  # a live round: the forecasts are the result, kept as they are
                export = (f"; `forecast-reconcile export {runner.run_dir} --organization <team> --model-organization <lab>` "
                          "writes the ForecastBench submission" if _forecastbench_set(questions_file) else "")
                _say(f"no report: {exc}. The forecasts are kept in {runner.run_dir / 'results.jsonl'}{export}")
                return
            if rep.notice:
                typer.echo(text_lines(rep.notice))
            if "kind" in rep.leaderboard.columns:  # no binary question: the kind's own leaderboard
                _print_kind_leaderboard(rep)
            else:
                print_compact_leaderboard(rep.leaderboard, baseline=rep.baseline, files=f"{rep.markdown_path.name}, {rep.csv_path.name}, {rep.html_path.name}", crowd_note=rep.crowd_note)
            for line in rep.diversity_lines:
                typer.echo(line)
            if rep.members is not None and (note := degenerate_members_note(rep.members)):
                typer.echo(text_lines(note))
            _tell(f"report: {rep.html_path} (forecast-reconcile view {runner.run_dir})")


@app.command()
def leaderboard(
    runs: list[Path] = typer.Argument(..., help="Run folders to compare, or a folder of run folders (e.g. runs/: every run in it)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Folder for the comparison's leaderboard.csv/.md, report.html and fitted.jsonl (default: a new folder comparisons/<n>-runs-<digest>, printed). Never a run folder: a run's own files are written only by that run and by `view`."),
    baseline: str = typer.Option("mean", help="Method that deltas and skill scores are measured against."),
    n_resamples: int = typer.Option(1000, help="Clustered bootstrap resamples."),
    fit_from: Optional[str] = typer.Option(None, "--fit-from", help="Earlier run folders (or folders of runs), comma-separated, whose resolved questions the fitted methods also learn from (only those resolved before each question's forecast date); runs of other models are refused (exit code 2) unless --fit-from-any-model, and runs made with other settings (--show-crowd, members, personas, temperatures, evidence, --evidence-cutoff, question kinds, prompt version: benchmarks.protocol.fitted.FIT_SETTINGS) always."),
    fit_from_any_model: bool = typer.Option(False, "--fit-from-any-model", help="Let the fitted methods learn from --fit-from runs of other providers or models (the report names them)."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
) -> None:
    """Compare runs: print the compact leaderboard and write CSV, Markdown and one self-contained HTML page into a
    comparison folder (never into a run's folder). The shards of one run (run --shard i/n) are merged into one
    run, each question counted once. Runs that share no planned question are compared by the Brier Index alone."""
    _setup_logging(debug)
    from benchmarks.run_folder.comparison import check_output, comparison_folder
    from benchmarks.run_folder.load import ShardGroup, group_shards, run_folders

    with cli_errors(debug):
        folders = run_folders(runs)  # every path given, checked before anything is loaded
        earlier = run_folders(_csv(fit_from)) if fit_from else []
        out = check_output(output if output is not None else comparison_folder(folders), [*folders, *earlier])
        from benchmarks.viewer.terminal import compact_brier_index, print_compact_leaderboard, print_table, text_lines

        runs = group_shards(folders)
        for g in (r for r in runs if isinstance(r, ShardGroup)):
            missing = f"; missing shard(s) {', '.join(map(str, g.missing))}" if g.missing else ""
            _say(f"run {g.run_id}: {len(g.folders)} of {g.count} shards merged{missing}")
        rep, _, _ = _report(runs, out, baseline=baseline, n_resamples=n_resamples, fit_from=_csv(fit_from) or [],
                            fit_from_any_model=fit_from_any_model)
        if rep.notice:
            typer.echo(text_lines(rep.notice))
        files = f"{rep.markdown_path.name}, {rep.csv_path.name}, {rep.html_path.name} in {out}"
        if "kind" in rep.leaderboard.columns:  # no binary question: the kind's own leaderboard, as run prints it
            _print_kind_leaderboard(rep)
        elif rep.shared_questions == 0:
            why = (f"The {len(runs)} runs share no planned question, so their Brier scores are of different questions: "
                   "they are compared by the Brier Index alone (ForecastBench's difficulty-adjusted score).")
            print_table(compact_brier_index(rep.leaderboard, why=why, files=files))
        else:
            print_compact_leaderboard(rep.leaderboard, baseline=rep.baseline, files=files, crowd_note=rep.crowd_note)
        _tell(f"comparison of {len(runs)} run{'s' if len(runs) != 1 else ''} written to {out}/ "
             f"(leaderboard.csv, leaderboard.md, report.html, fitted.jsonl); open {rep.html_path}")


@app.command()
def score(
    forecasts: Path = typer.Argument(..., help="CSV/JSONL/JSON/Parquet with question_id (full or short id), p_yes and optionally method, outcome, cluster; or a ForecastBench forecast set (with --questions and --resolutions); or, for multiple-choice and numeric questions of --questions, probabilities (a JSON object of option: percent), percentile_5 ... percentile_95, or distribution (a JSON array)."),
    questions: Optional[Path] = typer.Option(None, help="Question file with outcomes, or a ForecastBench question set (default: the bundled questions, by id)."),
    resolutions: Optional[Path] = typer.Option(None, "--resolutions", help="The resolution set of a ForecastBench question set given as --questions (the outcomes)."),
    baseline: Optional[str] = typer.Option(None, help="Method the deltas are measured against (default: the file's first method)."),
    baselines: bool = typer.Option(True, "--baselines/--no-baselines", help="Score the bundled baselines (crowd, superforecaster median, base rate, 0.5) on the same questions."),
    skip_unknown: bool = typer.Option(False, "--skip-unknown", help="Leave out (and count) rows whose question has no known outcome instead of stopping."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Folder to write leaderboard.csv and leaderboard.md into."),
    n_resamples: int = typer.Option(1000, min=0, help="Clustered bootstrap resamples."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
) -> None:
    """Score forecasts made by any other system, next to the bundled baselines on the same questions.

    Prints the compact leaderboard (rank, method, n, Brier with its 95% interval, Δ against the baseline); with -o
    the full table (log loss, ECE, ForecastBench's Brier, ...) is written to leaderboard.csv and leaderboard.md.
    A sample file: examples/my_forecasts.csv.

    A file with no p_yes column holds multiple-choice or numeric forecasts (option probabilities, percentiles, or a
    stored distribution: benchmarks/report/kind_score_file.py) of the --questions file's questions: each kind is
    scored on its own leaderboard (leaderboard_<kind>.csv/.md).
    """
    _setup_logging(debug)
    with cli_errors(debug):
        _input_files((forecasts, "FORECASTS"), (questions, "--questions"), (resolutions, "--resolutions"))
        if output is not None:
            _folder(output, "--output")
        from benchmarks.report.kind_score_file import has_kind_forecasts, score_kind_file

        if questions is not None and resolutions is None and has_kind_forecasts(forecasts):
            kinded = score_kind_file(forecasts, questions, baselines=baselines, skip_unknown=skip_unknown, n_resamples=n_resamples)
            if kinded.skipped:
                _tell(f"skipped {len(kinded.skipped)} row(s) whose question has no known outcome: {'; '.join(kinded.skipped[:5])}")
            for note in kinded.notes:
                _tell(note)
            typer.echo(kinded.markdown())
            if output is not None:
                _tell(f"wrote {', '.join(str(p) for p in kinded.write(output))}")
            return
        from benchmarks.report.score_file import score_file
        from benchmarks.viewer.terminal import print_compact_leaderboard

        result = score_file(forecasts, questions_path=questions, baseline=baseline, baselines=baselines,
                            skip_unknown=skip_unknown, n_resamples=n_resamples, resolutions_path=resolutions)
        if result.skipped:
            shown = "; ".join(result.skipped[:5]) + (f"; and {len(result.skipped) - 5} more" if len(result.skipped) > 5 else "")
            _tell(f"skipped {len(result.skipped)} row(s) whose question has no known outcome: {shown}")
        for note in result.notes:
            _tell(note)
        written = ""
        if output is not None:
            csv_path, md_path = result.write(output)
            written = f"{csv_path}, {md_path}"
        print_compact_leaderboard(result.table, baseline=result.reference, label_col="method",
                                  files=written or "leaderboard.csv and leaderboard.md with -o DIR")
        if written:
            _tell(f"wrote {written}")


class ExportFormat(str, Enum):
    """A file format ``export`` writes."""

    forecastbench = "forecastbench"
    panel = "panel"


@app.command()
def export(
    run: Path = typer.Argument(..., help="Run folder (or a run id under runs/)."),
    fmt: ExportFormat = typer.Option(ExportFormat.forecastbench, "--format", help="forecastbench: the forecast set (submission file) of a live ForecastBench round, from a run made with `run --questions <date>-llm.json`. panel: the run's members (an LLM ensemble's or a panel's) as a panel file that `aggregate` reads back."),
    organization: Optional[str] = typer.Option(None, "--organization", help="forecastbench: your team, as ForecastBench knows it (required)."),
    model_organization: Optional[str] = typer.Option(None, "--model-organization", help="forecastbench: who made the model(s), e.g. Anthropic; 'Ensemble' for several makers (required)."),
    model: Optional[str] = typer.Option(None, "--model", help="forecastbench: your entry's name (default: forecast-reconcile <method> (<the run's models>))."),
    method: Optional[str] = typer.Option(None, "--method", help="forecastbench: the run's method whose p_yes is submitted (default: pipeline)."),
    reasoning: Optional[bool] = typer.Option(None, "--reasoning/--no-reasoning", help="forecastbench: write the supervisor's rationale as each forecast's reasoning (supervisor and pipeline methods; default: on)."),
    question_set: Optional[Path] = typer.Option(None, "--question-set", help="forecastbench: the run's question set, when it is no longer where the run read it."),
    resolution_set: Optional[Path] = typer.Option(None, "--resolution-set", help="forecastbench: the run's resolution set (a backtest run), when it is no longer where the run read it."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="File to write, both formats. forecastbench: default <run folder>/<due date>.<organization>.<model>.json. panel: .csv, .jsonl or .parquet by its extension, default <run folder>/panel.csv."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
) -> None:
    """Write a run's forecasts as a file of another format; prints the file's path.

    --format forecastbench (default): a ForecastBench forecast set, the file you upload for a live round. One
    forecast per market question and per (dataset question, resolution date), ids as the question set gives them,
    checked the way ForecastBench reads it (benchmarks/questions/forecastbench_submission.py). Score it once the
    round resolves: `forecast-reconcile score FILE --questions <date>-llm.json --resolutions <date>_resolution_set.json`.

    --format panel: the run's successful members as a panel (question_id, forecaster, p_yes, reasoning, date,
    outcome; benchmarks/panels/files.py); `forecast-reconcile aggregate FILE` reads it back and its pools are the
    run's aggregates. A run of multiple-choice or numeric questions gives a panel of that kind: each member's forecast
    as the run stored it, `distribution` (a JSON array: a probability per option; the 201-point CDF), which `aggregate
    FILE` reads back against the bundled questions (add `--questions QS` for a run made on a question file).
    """
    _setup_logging(debug)
    from benchmarks.panels import panel_of_run, write_panel
    from benchmarks.questions.forecastbench_submission import build_forecast_set, run_question_sets, submission_file_name
    from benchmarks.report.audits import simulation_note
    from benchmarks.run_folder.durable import write_text_atomic
    from benchmarks.run_folder.load import load_run

    with cli_errors(debug):
        rdir = run if run.is_dir() or run.parent != Path(".") else Path("runs") / run
        if output is not None and output.is_dir():
            raise ValueError(f"--output {output} is a folder, not a file")
        if fmt is ExportFormat.panel:
            theirs = [option for option, value in (
                ("--organization", organization), ("--model-organization", model_organization), ("--model", model),
                ("--method", method), ("--reasoning/--no-reasoning", reasoning), ("--question-set", question_set),
                ("--resolution-set", resolution_set)) if value is not None]
            if theirs:
                raise ValueError(f"{', '.join(theirs)}: only for --format forecastbench, not panel")
            loaded = load_run(rdir)
            rows = panel_of_run(loaded)
            path = write_panel(rows, output or rdir / "panel.csv")
            if simulated := simulation_note({loaded.run_id: loaded.manifest}):  # the model column keeps it through aggregate
                _say(f"warning: {simulated} The panel's model column says so, and aggregate labels its results SIMULATED.")
            _say(f"{len(rows)} forecasts by {rows['forecaster'].nunique()} forecasters on {rows['question_id'].nunique()} questions written")
            if "distribution" in rows.columns:  # a kind's panel: aggregate needs the questions the ids name
                qfile = (loaded.manifest.get("config") or {}).get("questions_file")
                _say(f"read it back: forecast-reconcile aggregate {path}" + (f" --questions {qfile}" if qfile else ""))
            typer.echo(str(path))
            return
        method = method or "pipeline"
        for value, option in ((organization, "--organization"), (model_organization, "--model-organization")):
            if not value or not value.strip():
                raise ValueError(f"{option} is required: ForecastBench lists every forecast set under your team and the model's maker")
        loaded = load_run(rdir)
        manifest, records = loaded.manifest, loaded.records
        questions, question_items = run_question_sets(manifest, question_set, resolution_set)
        models = "+".join(dict.fromkeys(p.get("model") or p.get("spec", "") for p in manifest.get("providers", []))) or "unknown model"
        sub = build_forecast_set(manifest, records, questions, question_items, organization=organization or "",
                                 model=model or f"forecast-reconcile {method} ({models})",
                                 model_organization=model_organization or "", method=method, reasoning=reasoning is not False)
        out = output or rdir / submission_file_name(sub.data["forecast_due_date"], sub.data["organization"], sub.data["model"])
        out.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out, json.dumps(sub.data, indent=2, ensure_ascii=False) + "\n")
        simulated = simulation_note({manifest.get("run_id", ""): manifest})
        if simulated:
            _say(f"warning: {simulated} Do not submit it as a forecast.")
        for note in sub.notes:
            _say(note)
        fallback = f" ({sub.n_fallback} as the ensemble mean: {method} gave no probability)" if sub.n_fallback else ""
        _say(f"{sub.n_written} of {sub.n_questions} forecasts of {sub.data['question_set']} written{fallback}")
        if sub.missing:
            share = len(sub.missing) / max(sub.n_questions, 1)
            shown = ", ".join(sub.missing[:5]) + (f" and {len(sub.missing) - 5} more" if len(sub.missing) > 5 else "")
            limit = " ForecastBench leaves a forecast set with more than 5% imputed off its leaderboard." if share > 0.05 else ""
            _say(f"warning: {len(sub.missing)} ({share:.0%}) have no forecast and will be imputed 0.5: {shown}.{limit}")
        typer.echo(str(out))


@app.command()
def forecast(
    question: Optional[str] = typer.Option(None, "--question", "--question-id", "-q", help="A bundled question of any kind: short id, full id or a unique piece of one (default: one seeded question of --kind due after the model's cutoff)."),
    kind: Optional[KindChoice] = typer.Option(None, "--kind", help="Without --question: forecast one seeded bundled question of this kind (binary, the default, multiple_choice or numeric). With --question: the kind that question must be."),
    provider: Optional[str] = typer.Option(None, "--provider", "-p", envvar="FORECAST_RECONCILE_PROVIDER", help="Provider spec, e.g. 'sim' (a simulation, no model) or 'local/smollm2' (default: auto-detect)."),
    n_members: int = typer.Option(3, "--members", "-m", help="Ensemble size."),
    search: Search = typer.Option(Search.local, help="Research backend: the bundled dated corpus, DuckDuckGo, or none."),
    seed: int = typer.Option(0, help="Seed."),
    output_dir: Path = typer.Option(Path("forecasts"), "--output", "-o", help="Folder the trace file is saved in."),
    save: bool = typer.Option(True, "--save/--no-save", help="Save the trace (JSON: the PipelineTrace and the question record)."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
) -> None:
    """Forecast one bundled question (binary, multiple-choice or numeric) with the full pipeline and explain every step.

    Progress goes to stderr; the explanation (members, aggregates, debate turns, the supervisor's
    disagreements, searches and reasoning, the combination arithmetic) to stdout. The trace is saved
    to --output. Exit code 1 when the forecast failed (the reason is printed).
    """
    _setup_logging(debug)
    from agent_providers import redact_spec
    from benchmarks.harness.config import RunConfig
    from benchmarks.harness.one_forecast import ForecastFile, forecast_one, provider_reason, save_forecast
    from benchmarks.harness.provenance import redacted_command_line
    from benchmarks.questions.browse import resolve_question, short_id
    from benchmarks.viewer.trace_text import explain_trace

    with cli_errors(debug):
        _folder(output_dir, "--output")
        chosen = resolve_question(question) if question else None
        if chosen is not None and kind is not None and chosen.kind.name != kind.value:
            raise ValueError(f"--question {question}: question {short_id(chosen.id)} is {chosen.kind.name}, not --kind {kind.value}")
        specs, why = provider_reason(provider)
        kind_name = chosen.kind.name if chosen is not None else kind.value if kind is not None else None
        cfg = RunConfig(providers=specs, n_members=n_members, seed=seed, search=search.value, cache=False,
                        **({"kind": kind_name} if kind_name else {}))

        def start(q, shown_specs, expected):
            from benchmarks.protocol.model_cutoffs import training_cutoff

            _say(f"provider: {', '.join(shown_specs)} ({why})")
            _say(f"question {short_id(q.id)}: {' '.join(q.text.split())[:100]} (forecast date {q.forecast_date})")
            late = [s for s in shown_specs if (c := training_cutoff(s)) is not None and q.forecast_date <= c]
            if late:
                _say(f"warning: the forecast date is on or before the training cutoff of {', '.join(late)}: the model may know the outcome")
            _say(f"running {n_members} members, the debate and the supervisor: at most {expected} provider calls")

        def call(role, done, elapsed):
            _say(f"  [{elapsed:6.1f} s] call {done} done: {role}")

        q, trace = forecast_one(cfg, chosen, on_start=start, on_call=call)
        from benchmarks.viewer.terminal import text_lines

        typer.echo(text_lines(explain_trace(trace, q)))  # long lines wrapped to the terminal (at most 100 columns)
        if save:
            record = ForecastFile(providers=[redact_spec(s) for s in specs], provider_reason=why, question=q, trace=trace,
                                  command_line=redacted_command_line(sys.argv))
            _say(f"trace saved: {save_forecast(record, output_dir)} (JSON: the PipelineTrace and the question record)")
        if trace.status != "ok":
            from benchmarks.run_folder.record import failure_reason

            reason = failure_reason([f.error for f in trace.forecasts if f.error], trace.error)
            _say(f"error: the forecast failed: {' '.join(reason.split())}")
            raise typer.Exit(code=1)


questions_app = typer.Typer(help="Browse the bundled questions: summary, list (filter and search), show one.",
                            context_settings={"help_option_names": ["-h", "--help"]})
app.add_typer(questions_app, name="questions")


@questions_app.callback(invoke_without_command=True)
def questions_summary(ctx: typer.Context) -> None:
    """Counts per source and type, and of the other kinds; `questions list` and `questions show` do the rest."""
    if ctx.invoked_subcommand is not None:
        return
    from benchmarks.questions.browse import bundled_questions, every_bundled_question, summary
    from benchmarks.viewer.terminal import Column, compact_table, print_table, text_lines

    with cli_errors(False):
        head, rows = summary(bundled_questions())
        typer.echo(text_lines(head))
        print_table(compact_table([Column("type"), Column("questions", "right"), Column("by source", wrap=True)], rows))
        others = Counter(q.kind for q in every_bundled_question() if q.kind.spec_columns)  # kinds beyond binary
        if others:
            typer.echo(text_lines("other kinds: " + "; ".join(f"{n:,} {k.label} (questions list --kind {k.name})" for k, n in others.items())))
        typer.echo(text_lines("list: forecast-reconcile questions list --source polymarket --search 'interest rate'\n"
                              "show: forecast-reconcile questions show <short id>  (what forecasters see, what is held back)"))


@questions_app.command("list")
def questions_list(
    search: Optional[str] = typer.Option(None, "--search", "-s", help="Words that must all appear in the question, background or criteria (any case)."),
    sources: Optional[str] = typer.Option(None, "--source", help="Sources, comma-separated (e.g. polymarket,metaculus)."),
    question_type: QuestionType = typer.Option(QuestionType.any, "--type", help="Question type."),
    rounds: Optional[str] = typer.Option(None, "--round", help="Rounds (forecast dates), comma-separated, e.g. 2026-03-29."),
    kind: Optional[KindChoice] = typer.Option(None, "--kind", help="Only questions of this kind: binary, multiple_choice or numeric."),
    questions_file: Optional[Path] = typer.Option(None, "--questions", help="List the questions of this file (CSV/JSONL/Parquet, any kind) instead of the bundled ones."),
    limit: int = typer.Option(20, "--limit", "-n", min=0, help="Lines to print (0 = all)."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
) -> None:
    """List bundled questions (or a file's) with their short ids (use a short id wherever an id is taken)."""
    from benchmarks.questions import load_bundled, load_questions_file
    from benchmarks.questions.browse import bundled_questions, filter_questions, list_columns, list_rows
    from benchmarks.viewer.terminal import Column, compact_table, print_table

    with cli_errors(debug):
        if questions_file:
            _input_files((questions_file, "--questions"))
            pool = list(load_questions_file(questions_file))
        elif kind is not None and kind.value != "binary":  # the bundled questions of that kind
            pool = load_bundled(kind.value)
        else:
            pool = bundled_questions()
        srcs = _csv(sources)
        unknown = sorted(set(srcs or []) - {q.source for q in pool})
        if unknown:
            raise ValueError(f"--source: unknown source(s) {', '.join(unknown)}; valid: {', '.join(sorted({q.source for q in pool}))}")
        found = filter_questions(pool, sources=srcs, question_type=None if question_type is QuestionType.any else question_type.value,
                                 rounds=_csv(rounds), search=search, kind=kind.value if kind else None)
        shown = found if limit == 0 else found[:limit]
        print_table(compact_table([Column(h, wrap=h == "question") for h in list_columns(shown)], list_rows(shown)))
        more = f"; showing {len(shown)} (--limit 0 for all)" if len(shown) < len(found) else ""
        _tell(f"{len(found):,} of {len(pool):,} questions match{more}")


@questions_app.command("show")
def questions_show(
    question: str = typer.Argument(..., help="A short id, a full id, or a unique piece of one."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
) -> None:
    """Show one question in full: what forecasters see (the case facts of every prompt) and what is held back."""
    from benchmarks.questions.browse import format_question, resolve_question

    with cli_errors(debug):
        q = resolve_question(question)
        from benchmarks.viewer.terminal import terminal_width, text_lines

        typer.echo(text_lines(format_question(q, width=terminal_width() - 2)))  # at most 100 columns


classroom_app = typer.Typer(help="A class competition on the bundled questions: split them into a students' file without "
                                 "outcomes and a teacher's file with them; grade the students' forecasts with `score`.",
                            context_settings={"help_option_names": ["-h", "--help"]}, no_args_is_help=True)
app.add_typer(classroom_app, name="classroom")


@classroom_app.command("split")
def classroom_split(
    student_file: Path = typer.Option(..., "--student-file", help="Questions for the students (.csv or .jsonl): what was knowable on each forecast date; no outcome, no resolution date, no URL."),
    teacher_file: Path = typer.Option(..., "--teacher-file", help="The teacher's file (.csv or .jsonl): the same questions with their outcomes. Keep it from the students; grade with `score SUBMISSION --questions TEACHER_FILE`."),
    n: int = typer.Option(50, "--n", min=1, help="Questions in the competition: a seeded sample of resolved bundled questions, one per source question."),
    seed: int = typer.Option(0, help="Seed of the sample: the same seed and filters give the same questions."),
    sources: Optional[str] = typer.Option(None, "--source", help="Sources, comma-separated (e.g. polymarket,metaculus)."),
    question_type: QuestionType = typer.Option(QuestionType.market, "--type", help="Question type."),
    date_from: Optional[str] = typer.Option(None, help="Keep questions with forecast date on/after YYYY-MM-DD."),
    date_to: Optional[str] = typer.Option(None, help="Keep questions with forecast date on/before YYYY-MM-DD."),
    include_unclosed: bool = typer.Option(False, "--include-unclosed", help="Also use questions whose scheduled close is after the outcome snapshot (2026-08-20); these over-represent early (mostly Yes) resolutions."),
    show_crowd: bool = typer.Option(False, "--show-crowd", help="Put the crowd / market probability at freeze (and its date) in the students' file."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace files that exist (by default an existing file is never replaced)."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
) -> None:
    """Write a class competition's questions: the students' file (outcomes held back) and the teacher's (with them).

    Students hand in question_id,p_yes rows (a method column with each one's name lets one file hold the class); `forecast-reconcile score SUBMISSION --questions TEACHER_FILE` grades them next to the crowd and always 0.5, on the same questions.
    """
    _setup_logging(debug)
    from benchmarks.teaching.class_split import class_split, select_class_questions, write_class_split

    with cli_errors(debug):
        questions = select_class_questions(
            n, seed=seed, sources=_csv(sources), question_type=None if question_type is QuestionType.any else question_type.value,
            forecast_date_from=_date(date_from, "--date-from"), forecast_date_to=_date(date_to, "--date-to"),
            include_unclosed=include_unclosed)
        if len(questions) < n:
            _say(f"only {len(questions)} questions match the filters: the competition has {len(questions)}")
        split = class_split(questions, show_crowd=show_crowd)
        write_class_split(split, student_file, teacher_file, overwrite=overwrite)
        _say(f"wrote {student_file}: {len(questions)} questions for the students ({', '.join(split.students.columns)})")
        _say(f"wrote {teacher_file}: the same questions with their outcomes; keep it from the students")
        _say(f"grade a submission (question_id,p_yes[,method]): forecast-reconcile score SUBMISSION --questions {teacher_file}")


@app.command()
def frameworks(
    provider: str = typer.Option("scripted", "--provider", "-p", help="'scripted' (deterministic, --latency-ms per call) or a provider spec such as local/smollm2."),
    n: int = typer.Option(20, "--n", help="Questions in the seeded sample of bundled resolved market questions."),
    seed: int = typer.Option(0, help="Seed of the sample and the models."),
    latency_ms: float = typer.Option(20.0, help="Latency of the scripted provider per call, in milliseconds."),
    n_members: int = typer.Option(3, "--members", "-m", help="Ensemble size."),
    search: str = typer.Option("local", help="Research backend: local (bundled dated corpus) or none."),
    debug: bool = typer.Option(False, help="Show tracebacks."),
) -> None:
    """Compare the pipeline in plain Python, LangGraph and the OpenAI Agents SDK (calls, tokens, overhead, p_yes, Brier, LOC)."""
    _setup_logging(debug)
    with cli_errors(debug):
        from agent_research import PipelineConfig
        from benchmarks.harness.frameworks import arun_benchmark, format_table

        table, runs = asyncio.run(arun_benchmark(provider=provider, n=n, seed=seed, latency_s=latency_ms / 1000,
                                                 config=PipelineConfig(n_members=n_members, seed=seed), search=search))
        typer.echo(format_table(table))
        traces = [t for r in runs.values() for t in r.traces]
        if traces and all(t.status != "ok" for t in traces):
            from benchmarks.run_folder.record import failure_reason

            t = traces[0]
            reason = failure_reason([f.error for f in t.forecasts if f.error], t.error)
            _say(f"error: every question failed ({len(traces)} of {len(traces)} over the frameworks); first reason: {' '.join(reason.split())}")
            raise typer.Exit(code=1)


@app.command()
def aggregate(
    panel_file: Optional[Path] = typer.Argument(None, help="Panel file (.csv, .jsonl, .json or .parquet): question_id, forecaster, p_yes, and optionally reasoning, date, outcome (see benchmarks/panels/files.py); or, without p_yes, a panel of multiple-choice or numeric questions of --questions: question_id, forecaster, and probabilities, percentile_5 ... percentile_95 or distribution (see benchmarks/panels/kind_panel.py); or a hubverse forecast hub folder (with hub-config/ or model-output/; see benchmarks/hubs/read.py)."),
    panel: Optional[str] = typer.Option(None, "--panel", help="A bundled panel instead of a file: 'superforecasters' (40 ForecastBench superforecasters on the 578 resolved items of round 2024-07-21, with their reasoning), or 'flusight' (the CDC FluSight hub, 64 models, 2023-24 and 2024-25; horizons 0-3 by default)."),
    target: Optional[str] = typer.Option(None, "--target", help="A hub's target to score (required when a hub folder has several; --panel flusight: 'wk inc flu hosp' by default, or 'wk flu hosp rate change')."),
    baseline: Optional[str] = typer.Option(None, "--baseline", help="A hub's baseline model, the reference of relative scores (default: the model named *baseline*)."),
    location: Optional[str] = typer.Option(None, "--location", help="A hub's locations to score, comma-separated (default all)."),
    horizon: Optional[str] = typer.Option(None, "--horizon", help="A hub's horizons to score in weeks, comma-separated (default all; --panel flusight: 0,1,2,3)."),
    questions: Optional[Path] = typer.Option(None, "--questions", help="Question file the panel's ids name (text, dates, outcomes); default the bundled questions."),
    min_forecasters: int = typer.Option(1, "--min-forecasters", min=1, help="Keep the questions at least this many forecasters answered (issue 31's figures on the bundled panel: 5)."),
    skip_unknown: bool = typer.Option(False, "--skip-unknown", help="Leave out (and count) rows whose question has no known outcome instead of stopping."),
    min_pick_questions: int = typer.Option(30, "--min-pick-questions", min=1, help="Fewest questions a forecaster needs to be picked as the best, median or worst single forecaster."),
    methods: Optional[str] = typer.Option(None, help="Comma-separated methods (default: mean, median, min, trimmed_mean, geomean_odds, extremized; with --provider also debate, supervisor, pipeline)."),
    provider: Optional[str] = typer.Option(None, "--provider", "-p", help="Provider of a debate and a supervisor that reconcile the panel's members, reading their reasoning (e.g. 'sim'); default none: nothing is called."),
    n: Optional[int] = typer.Option(None, "--n", min=1, help="Seeded sample of the panel's questions (default: all)."),
    seed: int = typer.Option(0, help="Seed of the sample and the reconcilers."),
    search: Search = typer.Option(Search.local, help="The supervisor's research backend (with --provider)."),
    include_before_cutoff: bool = typer.Option(False, "--include-before-cutoff", help="With --provider: also reconcile questions due before the model's training cutoff (contaminated; the bundled panel's questions are due 2024-07-21)."),
    date_from: Optional[str] = typer.Option(None, help="Keep questions whose forecast date is on/after YYYY-MM-DD (needed with a model whose training cutoff is unknown)."),
    max_cost: Optional[float] = typer.Option(None, "--max-cost", help="Cost cap in USD of the reconcilers (with --provider)."),
    output_dir: Path = typer.Option(Path("runs"), "--output", "-o", help="Parent folder of run folders."),
    run_id: Optional[str] = typer.Option(None, help="Run folder name (default: timestamp)."),
    resume: Optional[str] = typer.Option(None, "--resume", help="Continue the panel's run with this id (or folder) with its recorded settings, without redoing its finished questions; give the same panel (file or --panel): its questions must be the run's."),
    n_resamples: int = typer.Option(1000, min=1, help="Clustered bootstrap resamples."),
    fit_from: Optional[str] = typer.Option(None, "--fit-from", help="Earlier run folders (or folders of runs), comma-separated, the fitted methods also learn from (only questions resolved before each question's forecast date)."),
    fit_from_any_model: bool = typer.Option(False, "--fit-from-any-model", help="Let the fitted methods learn from --fit-from runs of other panels or models."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar on stderr."),
    supervisor: bool = typer.Option(False, "--supervisor", help="A hub (quantile target): the SupervisorAgent of --provider weights the members, one call per reference date, from their method summaries and past scores; its pool is the row 'supervisor' with tokens and cost (benchmarks/hubs/supervisor.py)."),
    rounds: Optional[int] = typer.Option(None, "--rounds", min=1, help="With --supervisor: run it on the first N reference dates only (default all)."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
) -> None:
    """Aggregate a panel of forecasts and score every aggregation method against single forecasters.

    Writes a run folder and the same report and page as a run: every pool (mean, median, min, trimmed mean,
    geometric mean of odds, extremized, the walk-forward fitted ones, member weights) against the best, median
    and worst single forecaster (picked in-sample, each on its own questions), the crowd and the bundled
    baselines, on one question set with clustered intervals; a question's page shows each forecaster's p_yes
    and reasoning. Exit codes: 0 done; 2 bad input (one line naming the file, row, column and value).
    """
    _setup_logging(debug)
    with cli_errors(debug):  # every path given, checked before anything is imported or loaded
        # a folder is a forecast hub's (checked where the hub is dispatched below)
        _input_files((None if panel_file is not None and panel_file.is_dir() else panel_file, "PANEL_FILE"), (questions, "--questions"))
    from agent_providers import split_specs
    from benchmarks.harness.config import RunConfig, validate_run_id
    from benchmarks.harness.provenance import redacted_command_line
    from benchmarks.harness.runner import BenchmarkRunner
    from benchmarks.harness.selection import QuestionPool
    from benchmarks.panels import POOL_METHODS, bundled_panel, panel_summary, read_panel
    from benchmarks.protocol.methods import RECONCILIATION_METHODS
    from benchmarks.run_folder.layout import MANIFEST_FILE
    from benchmarks.run_folder.load import run_folders
    from benchmarks.report.members import degenerate_members_note
    from benchmarks.viewer.terminal import print_compact_leaderboard, text_lines

    with cli_errors(debug):
        if (panel_file is None) == (panel is None):
            raise ValueError("give a panel file or --panel superforecasters|flusight, or a hub folder (one of them)")
        from benchmarks.hubs import BUNDLED_HUBS, is_hub_folder

        if panel_file is not None and panel_file.is_dir() and not is_hub_folder(panel_file):
            raise ValueError(f"PANEL_FILE {panel_file} is a folder, not a panel file nor a forecast hub (no hub-config/ or model-output/)")
        if panel in BUNDLED_HUBS or (panel_file is not None and is_hub_folder(panel_file)):
            _aggregate_hub(panel_file, panel, target=target, baseline=baseline, location=location, horizon=horizon,
                           output_dir=output_dir, run_id=run_id, n_resamples=n_resamples, seed=seed,
                           supervisor=(provider or "") if supervisor else None, rounds=rounds)
            return
        if supervisor or rounds is not None:
            raise ValueError("--supervisor and --rounds are for a forecast hub (a hub folder or --panel flusight)")
        if resume and run_id and resume != run_id:
            raise ValueError(f"--resume {resume} continues that run: drop --run-id {run_id}")
        _folder(output_dir, "--output")
        earlier = _csv(fit_from) or []
        # a wrong --fit-from folder, or a record in one that is not a record, fails now, before anything is written
        earlier_runs = [load_run(d) for d in run_folders(earlier)] if earlier else []
        from benchmarks.report.kind_score_file import has_kind_forecasts

        from benchmarks.report.kind_score_file import kind_forecast_columns

        # a panel of multiple-choice or numeric forecasts: of --questions, or without it of the bundled questions
        if panel_file is not None and not resume and has_kind_forecasts(panel_file) and (
                questions is not None or kind_forecast_columns(panel_file)):
            from benchmarks.panels.kind_panel import read_kind_panel

            kinded = read_kind_panel(panel_file, questions, skip_unknown=skip_unknown)
            specs = split_specs(provider or "")
            config = RunConfig(kind=kinded.kind.name, providers=specs, ensemble="given", methods=_csv(methods) or [
                *kinded.kind.default_methods, *(RECONCILIATION_METHODS if specs else ())], sample_n=n, seed=seed,
                search=search.value if specs else "none", question_type=None, after_model_cutoff=not include_before_cutoff,
                forecast_date_from=_date(date_from, "--date-from"), max_cost_usd=max_cost, output_dir=str(output_dir), run_id=run_id)
            runner = BenchmarkRunner(config, questions=QuestionPool(kinded.questions, source=str(panel_file), facts=kinded.describe()),
                                     ensemble=kinded.ensemble(), progress=progress, on_start=lambda folder: _say(f"run folder: {folder}"),
                                     command_line=redacted_command_line(sys.argv))
            summary = asyncio.run(runner.arun())
            _say(f"{summary.n_questions} {kinded.kind.label} questions of panel {kinded.name}: {summary.n_ok} ok, {summary.n_failed} failed")
            from benchmarks.report.write import write_report

            rep = write_report([runner.run_dir], runner.run_dir, n_resamples=n_resamples, seed=seed)
            if rep.notice:
                typer.echo(text_lines(rep.notice))
            _print_kind_leaderboard(rep)
            _say(f"report: {rep.html_path} (forecast-reconcile view {runner.run_dir})")
            return
        chosen = bundled_panel(panel) if panel is not None else read_panel(panel_file, questions_path=questions, skip_unknown=skip_unknown)
        chosen = chosen.with_min_forecasters(min_forecasters)
        for note in chosen.notes:
            _say(note)
        if resume:  # the run's recorded config; the panel is read again and must select the same questions
            rdir = Path(resume) if Path(resume).is_dir() else output_dir / validate_run_id(resume)
            try:
                config = RunConfig.resumed(rdir, max_cost_usd=max_cost)
            except FileNotFoundError:
                raise FileNotFoundError(f"--resume {resume}: no {MANIFEST_FILE} in {rdir}") from None
            if config.ensemble != "given":
                raise ValueError(f"--resume {resume}: {rdir} is a run of forecasters, not of a panel: continue it with `run --resume`")
        else:
            specs = split_specs(provider or "")
            config = RunConfig(providers=specs, ensemble="given", methods=_csv(methods) or [*POOL_METHODS, *(RECONCILIATION_METHODS if specs else ())],
                               sample_n=n, seed=seed, search=search.value if specs else "none", question_type=None,
                               after_model_cutoff=not include_before_cutoff, forecast_date_from=_date(date_from, "--date-from"),
                               max_cost_usd=max_cost, output_dir=str(output_dir), run_id=run_id)
        # the pick minimum goes with the panel's facts, so that every later report of the run (leaderboard, view) picks alike
        facts = {**chosen.describe(), "min_pick_questions": min_pick_questions}
        runner = BenchmarkRunner(config, questions=QuestionPool(chosen.question_list(), source=chosen.label, facts=facts),
                                 ensemble=chosen.ensemble(), progress=progress, on_start=lambda folder: _say(f"run folder: {folder}"),
                                 command_line=redacted_command_line(sys.argv))
        summary = asyncio.run(runner.arun(resume=bool(resume)))
        called = f"; {summary.calls_in_words()}" if runner.config.providers else " (nothing called)"
        _tell(f"{summary.n_questions} questions of panel {chosen.name}: {summary.n_ok} ok, {summary.n_failed} failed in "
              f"{summary.wall_time_s:.1f} s{called}")
        if summary.stopped:
            _say(f"stopped: {summary.stopped['note']}")
        run_dir = runner.run_dir
        # the report reads the run folder: the panel's forecasts, the runner and its ensemble (a million Forecast objects
        # on a large panel) are freed before it, not held beside the records it loads
        del runner, chosen
        gc.collect()
        rep, picks, tables = _report([run_dir], run_dir, n_resamples=n_resamples, seed=seed, fit_from=earlier,
                                     fit_from_any_model=fit_from_any_model)
        if not picks:
            _say(f"no forecaster answered {min_pick_questions} of the questions: no best, median or worst single forecaster "
                 "(--min-pick-questions)")
        if rep.notice:
            typer.echo(text_lines(rep.notice))
        print_compact_leaderboard(rep.leaderboard, baseline="mean", files=f"{rep.markdown_path.name}, {rep.csv_path.name}, {rep.html_path.name}", crowd_note=rep.crowd_note)
        if line := panel_summary(tables):
            typer.echo(text_lines(line))
        for line in rep.diversity_lines:
            typer.echo(line)
        if rep.members is not None and (note := degenerate_members_note(rep.members)):  # e.g. a panel of a weak LLM's members
            typer.echo(text_lines(note))
        _tell(f"report: {rep.html_path} (forecast-reconcile view {run_dir})")


def _aggregate_hub(path: Optional[Path], panel: Optional[str], *, target: Optional[str], baseline: Optional[str], location: Optional[str],
                   horizon: Optional[str], output_dir: Path, run_id: Optional[str], n_resamples: int, seed: int,
                   supervisor: Optional[str] = None, rounds: Optional[int] = None) -> None:
    """``aggregate`` of a forecast hub (benchmarks/hubs): every pool, hub row and member scored as the hubs score."""
    import re

    from benchmarks.hubs import load_hub, run_hub

    _folder(output_dir, "--output")
    horizons = None
    if horizon is not None:
        try:
            horizons = [int(h) for h in _csv(horizon) or []]
        except ValueError:
            raise ValueError(f"--horizon {horizon}: give whole numbers of weeks, comma-separated") from None
    hub, default_horizons = load_hub(path, panel)
    chosen = target or hub.default_target or "target"
    out = output_dir / (run_id or f"hub-{hub.name}-{re.sub(r'[^A-Za-z0-9]+', '-', chosen).strip('-')}")
    llm = None
    if supervisor == "":
        raise ValueError("--supervisor needs --provider (e.g. -p sim: a simulation at no cost)")
    if supervisor is not None:
        from agent_providers import get_provider

        llm = get_provider(supervisor)
    elif rounds is not None:
        raise ValueError("--rounds is for --supervisor")
    result = run_hub(hub, out, target=target, baseline=baseline, locations=_csv(location), horizons=horizons or default_horizons,
                     n_resamples=n_resamples, seed=seed, supervisor=llm, rounds=rounds)
    typer.echo("\n".join(result.lines))
    _say(f"written: {', '.join(str(f) for f in result.files)}")


@app.command()
def diversity(
    runs: list[Path] = typer.Argument(..., help="Run folders (a run's or a panel's, e.g. the one `aggregate --panel superforecasters` wrote), or a folder of run folders."),
    n_resamples: int = typer.Option(1000, min=1, help="Clustered bootstrap resamples."),
    seed: int = typer.Option(0, help="Seed of the bootstrap."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
) -> None:
    """Print each run's ambiguity decomposition: mean member Brier = Brier of the members' mean + diversity, each
    with its clustered interval, the identity's rounding error, and the members' error correlation with the effective
    number of independent members (benchmarks/scoring/diversity.py). Exit codes: 0 done; 2 bad input."""
    _setup_logging(debug)
    from benchmarks.report.diversity import decomposition_text, diversity_report
    from benchmarks.run_folder.load import load_run, run_folders

    with cli_errors(debug):
        loaded = [load_run(r) for r in run_folders(runs)]
        text = decomposition_text(diversity_report(loaded, n_resamples=n_resamples, seed=seed), n_resamples=n_resamples)
        typer.echo(text or "no run has members on a resolved question: nothing to decompose")


experiment_app = typer.Typer(help="Documented experiments: grids of ordinary runs on one question set, compared pairwise.",
                             no_args_is_help=True)
app.add_typer(experiment_app, name="experiment")


@experiment_app.command("diversity")
def experiment_diversity(
    provider: Optional[str] = typer.Option(None, "--provider", "-p", envvar="FORECAST_RECONCILE_PROVIDER",
                                           help="The one-model arm's provider spec, e.g. 'sim/evidence_rho=0.3' (a simulation, $0), 'anthropic/claude-sonnet-4-6'."),
    mixed: Optional[str] = typer.Option(None, "--mixed", help="The mixed arm's members as --ensemble takes them, 'anthropic/claude-sonnet-4-6:1,openai/gpt-4.1-mini:1,local/smollm2:1' (as many as --members). Default for the simulator: each member its own model family (sim, sim/family=b, ...)."),
    n_members: int = typer.Option(3, "--members", "-m", min=2, help="Members per ensemble (every arm)."),
    evidence: Optional[str] = typer.Option(None, "--evidence", help="Evidence arms, comma-separated: shared (every member reads the same search results), split (each a disjoint share of them). Default shared,split."),
    n: int = typer.Option(100, "--n", min=1, help="Seeded sample size of the one question set every arm runs."),
    max_results: Optional[int] = typer.Option(None, "--max-results", min=1, help="Search results of the members' query (shared: each member reads them all; split: each a disjoint share). Default: one per member, so that every share of a split holds one."),
    sources: Optional[str] = typer.Option(None, help="ForecastBench sources, comma-separated."),
    search: Search = typer.Option(Search.local, help="Research backend (split needs search)."),
    date_from: Optional[str] = typer.Option(None, help="Keep questions with forecast date on/after YYYY-MM-DD."),
    include_before_cutoff: bool = typer.Option(False, "--include-before-cutoff", help="Also use questions due before a model's training cutoff (contaminated)."),
    seed: int = typer.Option(0, help="Seed of the sample and the models (the same in every arm)."),
    output_dir: Path = typer.Option(Path("experiments"), "--output", "-o", help="Parent folder of experiment folders."),
    experiment_id: Optional[str] = typer.Option(None, "--id", help="Experiment folder name (default diversity-<timestamp>)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Price every arm (benchmarks/harness/estimate.py) and stop: no provider is called, nothing is written."),
    max_cost: Optional[float] = typer.Option(None, "--max-cost", min=0.0, help="Cost cap in USD over the whole grid: a grid whose estimate exceeds it is refused before any call (exit 2); each arm runs under what remains."),
    n_resamples: int = typer.Option(1000, min=1, help="Clustered bootstrap resamples."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show each arm's progress bar on stderr."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
) -> None:
    """Diversity against deliberation: evidence {shared, split} x members {one model, mixed} x method {mean, median,
    geomean of odds, debate, supervisor, pipeline} on one question set, each cell's Brier with its paired difference to
    the shared-evidence one-model mean (95% clustered interval), tokens and USD per question (method:
    benchmarks/experiments/diversity.py). Each arm is an ordinary run folder under <experiment>/runs.

    Exit codes: 0 done; 1 every question of an arm failed; 2 bad input or a grid over --max-cost (nothing called)."""
    _setup_logging(debug)
    import datetime as _dt

    from benchmarks.experiments import diversity as grid
    from benchmarks.harness.config import RunConfig, validate_run_id
    from benchmarks.harness.provenance import redacted_command_line
    from benchmarks.viewer.formatting import fmt_usd
    from benchmarks.viewer.terminal import Column, compact_table, print_table, text_lines

    with cli_errors(debug):
        _folder(output_dir, "--output")
        if not provider:
            raise ValueError("give the one-model arm's provider with -p (e.g. -p sim/evidence_rho=0.3)")
        name = validate_run_id(experiment_id or _dt.datetime.now().strftime("diversity-%Y%m%d-%H%M%S"))
        folder = output_dir / name
        if not dry_run and folder.exists():
            raise ValueError(f"--id {name}: {folder} exists already; give another --id")
        base = RunConfig(providers=[provider], n_members=n_members, sample_n=n, sources=_csv(sources), search=search.value,
                         forecast_date_from=_date(date_from, "--date-from"), after_model_cutoff=not include_before_cutoff,
                         seed=seed, output_dir=str(folder / "runs"), max_cost_usd=max_cost,
                         max_results=max_results or n_members)
        arms = _csv(evidence) if evidence is not None else list(grid.EVIDENCE_ARMS)
        plan = grid.plan_grid(base, mixed, evidence=arms or [])
        questions = grid.grid_questions(plan)
        priced = dry_run or max_cost is not None
        if priced:
            est = grid.estimate_grid(plan, questions)
            total, most = est.total("usd"), est.total("usd_max")
        if dry_run:
            typer.echo(f"dry run: no provider was called and nothing was written; {len(plan)} arms x {len(grid.GRID_METHODS)} "
                       f"methods on {len(questions)} questions")
            rows = [(r.arm, r.providers, f"{r.calls:,}", f"{r.input_tokens:,}", f"{r.output_tokens:,}", fmt_usd(r.usd),
                     fmt_usd(r.usd_max)) for r in est.table.itertuples()]
            print_table(compact_table([Column("arm"), Column("providers", wrap=True), Column("calls", "right"),
                                       Column("input tok", "right"), Column("output tok", "right"), Column("USD", "right"),
                                       Column("USD at most", "right")], rows,
                                      caption=[f"grid: {fmt_usd(total)} estimated (at most {fmt_usd(most)} at max_tokens); "
                                               "method: benchmarks/harness/estimate.py per arm", *[f"warning: {w}" for w in est.warnings]]))
        if priced and max_cost is not None and (total is None or total > max_cost):
            why = "its price is unknown" if total is None else f"it is estimated at {fmt_usd(total)}"
            raise ValueError(f"--max-cost {max_cost:g}: the grid of {len(plan)} arms on {len(questions)} questions would exceed "
                             f"it ({why}); nothing was called")
        if dry_run:
            return
        result = asyncio.run(grid.arun_grid(plan, questions, folder, max_cost_usd=max_cost, progress=progress,
                                            n_resamples=n_resamples, command_line=redacted_command_line(sys.argv),
                                            on_arm=lambda arm, path: _say(f"arm {arm.name}: {path}")))
        for line in result.stopped:
            _say(f"stopped: {line}")
        if result.report.notice:
            typer.echo(text_lines(result.report.notice))
        print_table(compact_table(*grid_columns_rows(result.table),
                                  caption=grid_caption(result, files=f"{grid.GRID_FILE}, leaderboard.csv, report.html in {folder}")))


def grid_columns_rows(table: Any) -> tuple[list[Any], list[tuple[str, ...]]]:
    """The compact table of ``experiment diversity`` (within 100 columns): one row per (arm, method)."""
    from benchmarks.viewer.formatting import fmt_usd
    from benchmarks.viewer.terminal import Column

    def num(x: Any, fmt: str = ".4f") -> str:
        return "—" if x is None or x != x else format(x, fmt)

    rows = []
    for r in table.itertuples():
        base = r.arm == "shared-one" and r.method == "mean"
        delta = "base" if base else num(r.delta_vs_base, "+.4f")
        ci = "" if base else f"[{num(r.delta_ci_low, '+.3f')}, {num(r.delta_ci_high, '+.3f')}]"
        rows.append((r.evidence, r.members, r.method, num(r.brier), delta, ci, f"{r.tokens_per_question:,.0f}",
                     fmt_usd(r.usd_per_question), num(r.error_correlation, ".2f"), num(r.n_effective, ".1f")))
    cols = [Column("evidence"), Column("members"), Column("method"), Column("Brier", "right"), Column("Δ vs base", "right"),
            Column("95% CI", "right"), Column("tok/q", "right"), Column("USD/q", "right"), Column("ρ err", "right"),
            Column("n_eff", "right")]
    return cols, rows


def grid_caption(result: Any, *, files: str) -> list[str]:
    """Lines under the grid: the base, the simulator's check against its closed form, the files."""
    from benchmarks.experiments.diversity import BASE_ARM, BASE_METHOD, closed_form_best_arm

    n = int(result.table["n"].max()) if len(result.table) else 0
    lines = [f"Δ vs base: Brier minus {BASE_ARM}:{BASE_METHOD}'s on the same {n} questions (paired, 95% clustered "
             "interval; negative is better). ρ err: the members' mean pairwise correlation of errors p - o; n_eff = m / (1 + "
             "(m - 1) ρ)."]
    checks = {k: v for k, v in result.checks.items() if v is not None}
    if checks:
        parts = [f"{arm} {c.measured:.2f} (closed form {c.closed_form:.2f})" for arm, c in checks.items()]
        best = closed_form_best_arm(checks)
        means = result.table[result.table["method"] == "mean"].set_index("arm")["brier"]
        lines.append("Simulator, members' log-odds error correlation measured: " + "; ".join(parts) + f". Closed-form best pool: "
                     f"{best}; measured best mean: {means.idxmin() if len(means) else '—'}.")
    lines.append(f"Files: {files}")
    return lines


@app.command()
def view(
    run: Path = typer.Argument(..., help="Run folder, or a run id under --output; or a folder of runs (runs/): its index page."),
    output_dir: Path = typer.Option(Path("runs"), "--output", "-o", help="Parent folder of run folders (to find a run id)."),
    rebuild: bool = typer.Option(False, help="Rebuild report.html even when it is newer than the run's results."),
    open_browser: bool = typer.Option(True, "--open/--no-open", help="Open the page in a web browser (else only print its path)."),
    question: Optional[str] = typer.Option(None, "--question", help="Write the page of this question's whole trace (questions/<id>.html in the run folder) instead: for a question whose trace the run's page does not embed (it embeds up to 1,000 questions and 20,000 forecasts)."),
    debug: bool = typer.Option(False, help="Show tracebacks."),
) -> None:
    """Write the run's self-contained HTML page if needed, print its path and open it in a browser.

    Given a folder of runs (e.g. runs/), write its index.html instead: every run in it (id, provider and model,
    kind, questions, date, best method, a link to its page); no run's own files are touched. With --question ID,
    write and open that question's own page (its whole trace)."""
    _setup_logging(debug)
    from benchmarks.run_folder.layout import PAGE_FILE
    from benchmarks.viewer import open_page, page_is_current
    from benchmarks.report.run_index import is_folder_of_runs, write_index

    with cli_errors(debug):
        rdir = run if run.is_dir() else output_dir / run
        if not rdir.is_dir():
            raise FileNotFoundError(f"{run}: no such run folder (nor {rdir})")
        page = rdir / PAGE_FILE
        if question is not None:
            page = _question_page(rdir, question)
        elif is_folder_of_runs(rdir):
            page = write_index(rdir)
        elif rebuild or not page_is_current(rdir):
            page = _report([rdir], rdir)[0].html_path
        typer.echo(str(page.resolve()))
        if open_browser and not open_page(page):
            _say("no web browser available: open the path above in one")


def _question_page(rdir: Path, question: str) -> Path:
    """Write ``questions/<id>.html`` of run folder ``rdir``: the whole trace of ``question`` (an id of its
    results.jsonl, read line by line without loading the others); raises ValueError naming the file when the run
    has no such question."""
    from benchmarks.run_folder.durable import write_text_atomic
    from benchmarks.run_folder.layout import MANIFEST_FILE, QUESTION_PAGES_DIR, RESULTS_FILE, question_page_name
    from benchmarks.viewer.page import render_question_page

    results = rdir / RESULTS_FILE
    if not (rdir / MANIFEST_FILE).exists() or not results.exists():
        raise FileNotFoundError(f"{rdir} is not a run folder: no {MANIFEST_FILE} or {RESULTS_FILE}")
    run_id = json.loads((rdir / MANIFEST_FILE).read_text(encoding="utf-8")).get("run_id", rdir.name)
    written = {json.dumps(question)[1:-1], json.dumps(question, ensure_ascii=False)[1:-1]}  # as a JSON line holds it
    with results.open(encoding="utf-8") as lines:
        for index, line in enumerate(lines):
            if any(w in line for w in written) and (record := json.loads(line)).get("question_id") == question:
                out = rdir / QUESTION_PAGES_DIR / question_page_name(question)
                out.parent.mkdir(exist_ok=True)
                write_text_atomic(out, render_question_page(record, run_id=run_id, index=index))
                return out
    raise ValueError(f"{results}: no question {question!r} (column question_id)")


if __name__ == "__main__":
    app()
