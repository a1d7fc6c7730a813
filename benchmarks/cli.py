"""The ``forecast-reconcile`` command line: ``run``, ``leaderboard``, ``view``, ``score``, ``forecast``, ``frameworks``.

Progress and usage go to stderr, tables to stdout. Library errors become one clean message at the
boundary (exit code 2); ``--debug`` shows the traceback.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from agent_schemas import ReconcileError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Reconcile LLM forecasts and benchmark aggregation methods on resolved questions.")
err = Console(stderr=True)


def _fail(exc: BaseException, debug: bool) -> None:
    if debug:
        raise exc
    err.print(f"[red]error:[/red] {type(exc).__name__}: {exc}")
    raise typer.Exit(code=2)


def _setup_logging(debug: bool) -> None:
    """Warnings (INFO with --debug) to stderr; the handler's level also mutes libraries that set DEBUG on their own loggers."""
    level = logging.INFO if debug else logging.WARNING
    logging.basicConfig(level=level, stream=sys.stderr)
    for handler in logging.getLogger().handlers:
        handler.setLevel(level)


def _csv(value: Optional[str]) -> Optional[list[str]]:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


@app.command()
def run(
    provider: Optional[str] = typer.Option(None, "--provider", "-p", envvar="FORECAST_RECONCILE_PROVIDER",
                                           help="Provider spec(s), comma-separated, cycled over members, e.g. 'local/smollm2' or 'anthropic/claude-sonnet-4-5'. Default: auto-detect from the environment."),
    n_members: int = typer.Option(3, "--members", "-m", help="Ensemble size."),
    methods: Optional[str] = typer.Option(None, help="Comma-separated methods (default: mean,median,min,geomean_odds,extremized,debate,supervisor,pipeline)."),
    sources: Optional[str] = typer.Option(None, help="ForecastBench sources, comma-separated (e.g. polymarket,manifold)."),
    question_type: str = typer.Option("market", help="ForecastBench question type: market, dataset or any."),
    n: Optional[int] = typer.Option(6, "--n", help="Seeded sample size (0 = all matching questions)."),
    questions_file: Optional[Path] = typer.Option(None, "--questions", help="Your own question file (CSV/JSONL/Parquet); see benchmarks/questions.py for columns."),
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
    n_threads: Optional[int] = typer.Option(None, envvar="FORECAST_RECONCILE_THREADS", help="Threads of the embedded model."),
    no_cache: bool = typer.Option(False, help="Disable the response cache."),
    cache_dir: Optional[Path] = typer.Option(None, envvar="FORECAST_RECONCILE_CACHE", help="Response cache folder shared between runs (default: inside the run folder)."),
    report: bool = typer.Option(True, help="Print a compact leaderboard and write leaderboard.csv/.md and report.html when done."),
    progress: bool = typer.Option(True, help="Show a progress bar on stderr."),
    debug: bool = typer.Option(False, help="Show tracebacks."),
) -> None:
    """Run every method and baseline on a seeded sample of real resolved questions."""
    _setup_logging(debug)
    from benchmarks.config import RunConfig
    from benchmarks.runner import MANIFEST_FILE, BenchmarkRunner

    try:
        if resume:
            rdir = Path(resume) if Path(resume).is_dir() else output_dir / resume
            manifest = rdir / MANIFEST_FILE
            if not manifest.exists():
                raise FileNotFoundError(f"--resume {resume}: no {MANIFEST_FILE} in {rdir}")
            import json

            config = RunConfig.model_validate(json.loads(manifest.read_text())["config"])
            config = config.model_copy(update={"output_dir": str(rdir.parent), "run_id": rdir.name})
        else:
            kwargs = dict(
                providers=_csv(provider) or [], n_members=n_members, sources=_csv(sources),
                question_type=None if question_type == "any" else question_type, sample_n=n or None,
                questions_file=str(questions_file) if questions_file else None,
                forecast_date_from=dt.date.fromisoformat(date_from) if date_from else None,
                forecast_date_to=dt.date.fromisoformat(date_to) if date_to else None,
                after_model_cutoff=not include_before_cutoff, cutoff_margin_days=cutoff_margin_days,
                close_by_snapshot=not include_unclosed, show_crowd=show_crowd, search=search, debate_rounds=debate_rounds,
                supervisor_queries=supervisor_queries, max_tokens=max_tokens, concurrency=concurrency, seed=seed,
                output_dir=str(output_dir), run_id=run_id, n_threads=n_threads, cache=not no_cache,
                cache_dir=str(cache_dir) if cache_dir else None,
            )
            if methods:
                kwargs["methods"] = _csv(methods)
            config = RunConfig(**kwargs)
        runner = BenchmarkRunner(config, progress=progress)
        err.print(f"run folder: {runner.run_dir}")
        summary = asyncio.run(runner.arun(resume=bool(resume)))
        err.print(f"providers: {', '.join(p.spec for p in runner.providers)}")
        err.print(f"{summary.n_questions} questions ({summary.n_done_before} already done): "
                  f"{summary.n_ok} ok, {summary.n_failed} failed in {summary.wall_time_s:.1f} s; provider calls {summary.provider_stats}")
        if report:
            from benchmarks.report import write_report
            from benchmarks.viewer.terminal import print_compact_leaderboard

            rep = write_report([runner.run_dir], runner.run_dir)
            print_compact_leaderboard(rep.leaderboard, baseline="mean", files=f"{rep.markdown_path.name}, {rep.csv_path.name}, {rep.html_path.name}")
            err.print(f"report: {rep.html_path} (forecast-reconcile view {runner.run_dir})")
    except (ReconcileError, ValueError, FileNotFoundError, FileExistsError) as exc:
        _fail(exc, debug)


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

    try:
        rep = write_report(runs, output or runs[0], baseline=baseline, n_resamples=n_resamples)
        typer.echo(rep.markdown)
        err.print(f"wrote {rep.csv_path}, {rep.markdown_path}, {rep.html_path}")
    except (ReconcileError, ValueError, FileNotFoundError) as exc:
        _fail(exc, debug)


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

    try:
        table = score_forecasts_file(forecasts, questions_path=questions, baseline=baseline)
        typer.echo(table.to_markdown(index=False, floatfmt=".4f"))
    except (ReconcileError, ValueError, FileNotFoundError) as exc:
        _fail(exc, debug)


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

    try:
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
    except (ReconcileError, ValueError, FileNotFoundError) as exc:
        _fail(exc, debug)


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
    try:
        from agent_research.frameworks import FrameworkConfig
        from benchmarks.frameworks import arun_benchmark, format_table

        table, _ = asyncio.run(arun_benchmark(provider=provider, n=n, seed=seed, latency_s=latency_ms / 1000,
                                              config=FrameworkConfig(n_members=n_members, seed=seed), search=search))
        typer.echo(format_table(table))
    except (ReconcileError, ValueError, ImportError) as exc:
        _fail(exc, debug)


@app.command()
def view(
    run: Path = typer.Argument(..., help="Run folder, or a run id under --output."),
    output_dir: Path = typer.Option(Path("runs"), "--output", "-o", help="Parent folder of run folders (to find a run id)."),
    rebuild: bool = typer.Option(False, help="Rebuild report.html even when it is newer than the run's results."),
    open_browser: bool = typer.Option(True, "--open/--no-open", help="Open the page in a web browser (else only print its path)."),
    debug: bool = typer.Option(False, help="Show tracebacks."),
) -> None:
    """Write the run's self-contained HTML page if needed, print its path and open it in a browser."""
    _setup_logging(debug)
    from benchmarks.report import write_report
    from benchmarks.viewer import open_page, page_is_current
    from benchmarks.viewer.launch import PAGE_FILE

    try:
        rdir = run if run.is_dir() else output_dir / run
        if not rdir.is_dir():
            raise FileNotFoundError(f"{run}: no such run folder (nor {rdir})")
        page = rdir / PAGE_FILE
        if rebuild or not page_is_current(rdir):
            page = write_report([rdir], rdir).html_path
        typer.echo(str(page.resolve()))
        if open_browser and not open_page(page):
            typer.echo("no web browser available: open the path above in one", err=True)
    except (ReconcileError, ValueError, FileNotFoundError) as exc:
        _fail(exc, debug)


if __name__ == "__main__":
    app()
