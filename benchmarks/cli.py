"""The ``forecast-reconcile`` command line: ``run``, ``leaderboard``, ``score``, ``forecast``, ``frameworks``.

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
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

import typer
from pydantic import ValidationError

from agent_schemas import ReconcileError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_show_locals=False,
                  help="Reconcile LLM forecasts and benchmark aggregation methods on resolved questions.")

#: Errors a user can cause (bad files, values, paths, a busy run folder, a full disk): one line, exit code 2.
USER_ERRORS = (ReconcileError, ValueError, OSError, csv.Error, ImportError)


def one_line(exc: BaseException) -> str:
    """The user-facing message of ``exc`` on one line: a pydantic error as ``field: problem (value ...)``
    without the "validation error" preamble, an ``OSError`` as ``path: reason``, else its text."""
    if isinstance(exc, ValidationError):
        errors = exc.errors()
        e = errors[0]
        field = ".".join(str(part) for part in e["loc"])
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


def _date(value: Optional[str], option: str) -> Optional[dt.date]:
    if not value:
        return None
    from agent_schemas.dates import utc_date

    try:
        return utc_date(value, field=option)
    except ValueError:
        raise ValueError(f"{option} {value!r} is not a date (expected YYYY-MM-DD)") from None


def _folder(path: Path, option: str) -> Path:
    """``path`` if it is a folder or does not exist yet (it is created when results are written)."""
    if path.exists() and not path.is_dir():
        raise ValueError(f"{option} {path} is a file, not a folder")
    return path


@app.command()
def run(
    provider: Optional[str] = typer.Option(None, "--provider", "-p", envvar="FORECAST_RECONCILE_PROVIDER",
                                           help="Provider spec(s), comma-separated, cycled over members, e.g. 'local/smollm2' or 'anthropic/claude-sonnet-4-5'. Default: auto-detect from the environment."),
    n_members: int = typer.Option(3, "--members", "-m", help="Ensemble size."),
    methods: Optional[str] = typer.Option(None, help="Comma-separated methods (default: mean,median,min,geomean_odds,extremized,debate,supervisor,pipeline)."),
    sources: Optional[str] = typer.Option(None, help="ForecastBench sources, comma-separated (e.g. polymarket,manifold)."),
    question_type: str = typer.Option("market", help="ForecastBench question type: market, dataset or any."),
    n: Optional[int] = typer.Option(6, "--n", help="Seeded sample size (0 = all matching questions)."),
    questions_file: Optional[Path] = typer.Option(None, "--questions", help="Your own question file (CSV/JSONL/Parquet); see benchmarks/questions/files.py for columns."),
    date_from: Optional[str] = typer.Option(None, help="Keep questions with forecast date on/after YYYY-MM-DD."),
    date_to: Optional[str] = typer.Option(None, help="Keep questions with forecast date on/before YYYY-MM-DD."),
    include_before_cutoff: bool = typer.Option(False, help="Also use questions due before the model's training cutoff (contaminated). Without it, a model whose cutoff is unknown needs --date-from."),
    cutoff_margin_days: int = typer.Option(0, min=0, help="Safety margin in days after the latest model training cutoff."),
    include_unclosed: bool = typer.Option(False, help="Bundled data: also use questions whose scheduled close is after the outcome snapshot (2026-08-20); these over-represent early (mostly Yes) resolutions."),
    show_crowd: bool = typer.Option(False, help="Show the crowd / market probability at freeze to the models (recorded in the manifest)."),
    search: str = typer.Option("local", help="Research backend: local (bundled dated corpus), ddg (DuckDuckGo) or none."),
    debate_rounds: int = typer.Option(2, help="Maximum debate rounds."),
    supervisor_queries: int = typer.Option(2, help="Clarifying searches of the supervisor."),
    max_tokens: int = typer.Option(512, help="Max generated tokens per call."),
    concurrency: Optional[int] = typer.Option(None, help="Questions in flight at once (default: 1 for the embedded model, 8 otherwise)."),
    seed: int = typer.Option(0, help="Seed of the sample and the models."),
    output_dir: Path = typer.Option(Path("runs"), "--output", "-o", help="Parent folder of run folders."),
    run_id: Optional[str] = typer.Option(None, help="Run folder name (default: timestamp)."),
    resume: Optional[str] = typer.Option(None, "--resume", help="Continue the run with this id (or folder) without redoing finished questions."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="With --resume: run the questions whose record failed again (their failed records move to results.replaced.jsonl; the folder keeps one record per question)."),
    n_threads: Optional[int] = typer.Option(None, envvar="FORECAST_RECONCILE_THREADS", help="Threads of the embedded model."),
    no_cache: bool = typer.Option(False, help="Disable the response cache."),
    cache_dir: Optional[Path] = typer.Option(None, envvar="FORECAST_RECONCILE_CACHE", help="Response cache folder shared between runs (default: inside the run folder)."),
    report: bool = typer.Option(True, help="Print the leaderboard and write report.html when done."),
    progress: bool = typer.Option(True, help="Show a progress bar on stderr."),
    debug: bool = typer.Option(False, help="Show tracebacks."),
) -> None:
    """Run every method and baseline on a seeded sample of real resolved questions.

    Exit codes: 0 done; 1 every question failed (the most common reason is printed); 2 bad input (one
    line naming the file, row, column, value or path; nothing is written before inputs validate).
    """
    _setup_logging(debug)
    from benchmarks.config import RunConfig, validate_run_id
    from benchmarks.runner import MANIFEST_FILE, BenchmarkRunner

    with cli_errors(debug):
        _folder(output_dir, "--output")
        if retry_failed and not resume:
            raise ValueError("--retry-failed re-runs the failed questions of an existing run: give --resume <run id>")
        if resume:
            rdir = Path(resume) if Path(resume).is_dir() else output_dir / validate_run_id(resume)
            manifest = rdir / MANIFEST_FILE
            if not manifest.exists():
                raise FileNotFoundError(f"--resume {resume}: no {MANIFEST_FILE} in {rdir}")
            import json

            config = RunConfig.model_validate(json.loads(manifest.read_text(encoding="utf-8"))["config"])
            config = config.model_copy(update={"output_dir": str(rdir.resolve().parent), "run_id": validate_run_id(rdir.resolve().name)})
        else:
            kwargs = dict(
                providers=_csv(provider) or [], n_members=n_members, sources=_csv(sources),
                question_type=None if question_type == "any" else question_type, sample_n=n or None,
                questions_file=str(questions_file) if questions_file else None,
                forecast_date_from=_date(date_from, "--date-from"), forecast_date_to=_date(date_to, "--date-to"),
                after_model_cutoff=not include_before_cutoff, cutoff_margin_days=cutoff_margin_days,
                close_by_snapshot=not include_unclosed, show_crowd=show_crowd, search=search, debate_rounds=debate_rounds,
                supervisor_queries=supervisor_queries, max_tokens=max_tokens, concurrency=concurrency, seed=seed,
                output_dir=str(output_dir), run_id=run_id, n_threads=n_threads, cache=not no_cache,
                cache_dir=str(cache_dir) if cache_dir else None,
            )
            if methods:
                kwargs["methods"] = _csv(methods)
            config = RunConfig(**kwargs)
        runner = BenchmarkRunner(config, progress=progress, on_start=lambda folder: _say(f"run folder: {folder}"))
        summary = asyncio.run(runner.arun(resume=bool(resume), retry_failed=retry_failed))
        _say(f"providers: {', '.join(p.spec for p in runner.providers)}")
        retried = f", {summary.n_retried} failed set aside and retried" if summary.n_retried else ""
        _say(f"{summary.n_questions} questions ({summary.n_done_before} already done{retried}): "
             f"{summary.n_ok} ok, {summary.n_failed} failed in {summary.wall_time_s:.1f} s; provider calls {summary.provider_stats}")
        if summary.all_failed:
            _say(f"error: every question failed ({summary.n_failed_total} of {summary.n_questions}); most common reason "
                 f"({summary.n_top_failure} questions): {' '.join((summary.top_failure or 'unknown').split())}")
            raise typer.Exit(code=1)
        if report:
            from benchmarks.report import write_report

            rep = write_report([runner.run_dir], runner.run_dir)
            typer.echo(rep.markdown)
            _say(f"report: {rep.html_path}")


@app.command()
def leaderboard(
    runs: list[Path] = typer.Argument(..., help="Run folders to compare."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Folder for leaderboard.csv/.md/.html (default: the first run)."),
    baseline: str = typer.Option("mean", help="Method that deltas and skill scores are measured against."),
    n_resamples: int = typer.Option(1000, help="Clustered bootstrap resamples."),
    debug: bool = typer.Option(False, help="Show tracebacks."),
) -> None:
    """Write CSV, Markdown and one self-contained HTML page comparing runs."""
    _setup_logging(debug)
    from benchmarks.report import write_report

    with cli_errors(debug):
        out = _folder(output or runs[0], "--output")
        rep = write_report(runs, out, baseline=baseline, n_resamples=n_resamples)
        typer.echo(rep.markdown)
        _say(f"wrote {rep.csv_path}, {rep.markdown_path}, {rep.html_path}")


@app.command()
def score(
    forecasts: Path = typer.Argument(..., help="CSV/JSONL/Parquet with question_id, p_yes and optionally method, outcome."),
    questions: Optional[Path] = typer.Option(None, help="Question file with outcomes (default: bundled ForecastBench by id)."),
    baseline: Optional[str] = typer.Option(None, help="Method to compare against (default: the first method)."),
    debug: bool = typer.Option(False, help="Show tracebacks."),
) -> None:
    """Score forecasts made by any other system against the outcomes."""
    _setup_logging(debug)
    from benchmarks.report import score_forecasts_file

    with cli_errors(debug):
        table = score_forecasts_file(forecasts, questions_path=questions, baseline=baseline)
        typer.echo(table.to_markdown(index=False, floatfmt=".4f"))


@app.command()
def forecast(
    question_id: Optional[str] = typer.Option(None, help="Bundled ForecastBench qid (default: one seeded market question)."),
    provider: Optional[str] = typer.Option(None, "--provider", "-p", envvar="FORECAST_RECONCILE_PROVIDER", help="Provider spec (default: auto)."),
    n_members: int = typer.Option(3, "--members", "-m", help="Ensemble size."),
    seed: int = typer.Option(0, help="Seed."),
    debug: bool = typer.Option(False, help="Show tracebacks."),
) -> None:
    """Forecast one bundled question end to end with the full pipeline and print its trace summary."""
    _setup_logging(debug)
    from benchmarks.config import RunConfig
    from benchmarks.questions import load_forecastbench
    from benchmarks.runner import BenchmarkRunner
    from benchmarks.trace_summary import summarise_trace

    with cli_errors(debug):
        cfg = RunConfig(providers=[provider] if provider else [], n_members=n_members, seed=seed, cache=False)
        runner = BenchmarkRunner(cfg, progress=False)
        runner.build_providers()
        if question_id:
            qs = [q for q in load_forecastbench() if q.id == question_id]
            if not qs:
                raise ValueError(f"question_id {question_id!r} is not in the bundled ForecastBench data")
        else:
            runner.config = cfg.model_copy(update={"sample_n": 1})
            qs = runner.select_questions()
        trace = runner.build_pipeline().run(qs[0])
        typer.echo(summarise_trace(trace, qs[0]))


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
        from benchmarks.frameworks import arun_benchmark, format_table

        table, _ = asyncio.run(arun_benchmark(provider=provider, n=n, seed=seed, latency_s=latency_ms / 1000,
                                              config=PipelineConfig(n_members=n_members, seed=seed), search=search))
        typer.echo(format_table(table))


if __name__ == "__main__":
    app()
