"""``forecast-reconcile experiment diversity``: does pooling or deliberation gain from members that differ?

The 2025-26 results on LLM forecast aggregation (issue 37) say pooling and deliberation help when the members differ
in what they know or who they are, and not when one model reads one set of search results. This experiment measures
it on one question set, every comparison paired on the same questions.

The grid
--------
* **evidence** (``PipelineConfig.evidence``, ``run --evidence``): ``shared``, every member reads the same search
  results (today's pipeline); ``split``, each member reads a disjoint, seeded share of them.
* **members**: ``one`` model (every member on ``-p SPEC``), or ``mixed`` (``--mixed``, an ensemble as ``run
  --ensemble`` takes it, as many members; for the simulator the default gives each member its own model family:
  ``sim``, ``sim/family=b``, ``sim/family=c``...).
* **method**: :data:`GRID_METHODS`, the mean, the median, the geometric mean of odds, the debate, the supervisor and
  the whole pipeline.

Each (evidence, members) cell is an **arm**: one ordinary run (:class:`benchmarks.harness.config.RunConfig`, its folder
under ``<experiment>/runs/<arm>``, so ``leaderboard`` and ``view`` read it) on the same questions, selected once with
every arm's models' training cutoffs (:func:`grid_questions`), in the same seeded order and with the same seeds, so
the arms differ only in what the grid varies. The arms are then compared as a leaderboard of several runs
(:func:`benchmarks.report.write.write_report`, into the experiment folder): each method's Brier score, and its paired
difference to the **shared-evidence one-model mean** (:data:`BASE_ARM`, :data:`BASE_METHOD`) with a 95% clustered
bootstrap interval (:func:`benchmarks.scoring.paired_difference_ci` through the ranking of one question set: a
question a method failed on is scored as its worst case), with tokens and USD per question. Each arm's members get
the diversity diagnostics of :mod:`benchmarks.scoring.diversity`: the mean pairwise correlation of their errors
``p - o`` and the effective number of independent members.

**Price first.** :func:`estimate_grid` prices every arm with the dry run's method
(:func:`benchmarks.harness.estimate.estimate_run`: the pipeline's real prompts, full-length answers, genai-prices)
and adds them up; a grid whose estimate exceeds ``--max-cost`` is refused before any provider is called.

**The simulator's known answer.** On the simulator (``-p sim/...``) the correlation of the members' log-odds errors
is known in closed form from each member's family and the search results its prompt showed
(:func:`agent_providers.simulator.error_correlation_of`), and so is the variance of their pooled error
(:func:`agent_providers.simulator.pooled_error_variance`): the arm with the least of it is the best pool.
:func:`simulator_check` measures the correlation from the members' answers (their log-odds minus the simulation's
anchor) next to the closed form, and names the closed form's best arm. With the default ``evidence_rho = 0`` what
members read does not matter; ``-p sim/evidence_rho=0.3`` makes shared evidence correlate their errors.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from agent_providers.simulator import (SimParams, SimulatorProvider, error_correlation_of, is_simulated, pooled_error_variance,
                                       shown_evidence)
from agent_schemas import ChatMessage, Question
from benchmarks.harness.config import RunConfig
from benchmarks.harness.estimate import estimate_run
from benchmarks.harness.mixed_ensemble import member_specs, parse_ensemble
from benchmarks.harness.runner import BenchmarkRunner
from benchmarks.harness.selection import QuestionSelection
from benchmarks.report.diversity import run_members
from benchmarks.report.write import Report, write_report
from benchmarks.run_folder.durable import write_json_atomic
from benchmarks.run_folder.load import LoadedRun, load_run
from benchmarks.scoring import diversity as div

__all__ = ["Arm", "BASE_ARM", "BASE_METHOD", "CHECK_ANCHORS", "EVIDENCE_ARMS", "EXPERIMENT_FILE", "GRID_COLUMNS", "GRID_FILE", "GRID_METHODS", "GridEstimate",
           "GridResult", "MEMBER_ARMS", "SimulatorCheck", "arun_arms", "arun_grid", "closed_form_best_arm", "default_mixed", "estimate_grid",
           "grid_questions", "grid_table", "plan_grid", "simulator_check", "spent_usd"]

#: The evidence arms: every member reads the same search results, or a disjoint share of them.
EVIDENCE_ARMS = ("shared", "split")
#: The member arms: every member on one model, or a mixed ensemble.
MEMBER_ARMS = ("one", "mixed")
#: The methods of the grid, in the table's order.
GRID_METHODS = ("mean", "median", "geomean_odds", "debate", "supervisor", "pipeline")
#: The arm and method every other cell is compared with (paired, on the same questions).
BASE_ARM, BASE_METHOD = "shared-one", "mean"
#: The simulator's further model families, in order, for the default mixed arm (the first member keeps the spec's own).
SIM_FAMILIES = ("sim", "b", "c", "d", "e", "f", "g", "h")
#: The wide grid table's file in the experiment folder.
GRID_FILE = "grid.csv"
#: The experiment's record in its folder: the arms (evidence, members, providers), the methods, the question ids and
#: the question selection (filters, the contamination filter over every arm's models), the command line.
EXPERIMENT_FILE = "experiment.json"
#: Columns of the wide grid table (:data:`GRID_FILE`).
GRID_COLUMNS = ("arm", "evidence", "members", "method", "n", "brier", "brier_ci_low", "brier_ci_high", "delta_vs_base",
                "delta_ci_low", "delta_ci_high", "tokens_per_question", "usd_per_question", "error_correlation",
                "n_effective", "n_members", "sim_logodds_correlation", "sim_closed_form_correlation",
                "sim_pooled_error_variance")


@dataclass(frozen=True)
class Arm:
    """One cell of the grid's (evidence, members): an ordinary run."""

    evidence: str
    """``shared`` or ``split``."""
    members: str
    """``one`` or ``mixed``."""
    specs: tuple[str, ...]
    """The run's providers: member ``i`` runs on ``specs[i]`` (one spec for the one-model arm)."""

    @property
    def name(self) -> str:
        """The run id of the arm, ``<evidence>-<members>`` (``shared-one``)."""
        return f"{self.evidence}-{self.members}"


def default_mixed(spec: str, n_members: int) -> list[str]:
    """The default mixed ensemble of the simulator spec ``spec``: ``n_members`` members, each on its own model family
    (the spec's own first, then ``b``, ``c``...; every other parameter kept).

    Raises
    ------
    ValueError
        For a spec that is not the simulator's (a real model's mixed ensemble is the user's choice: ``--mixed``), or
        more members than :data:`SIM_FAMILIES`.
    """
    if not is_simulated(spec):
        raise ValueError(f"--mixed is needed for {spec!r}: name the mixed ensemble's models with their counts, e.g. "
                         f"--mixed '{spec}:1,openai/gpt-4.1-mini:1,local/smollm2:1' (the simulator's default gives each "
                         "member its own model family)")
    params = SimParams.parse(spec.partition("/")[2])
    families = [params.family, *[f for f in SIM_FAMILIES if f != params.family]]
    if n_members > len(families):
        raise ValueError(f"the simulator's default mixed ensemble has at most {len(families)} families; give --mixed for "
                         f"{n_members} members")
    out = []
    for fam in families[:n_members]:
        changed = replace(params, family=fam).describe(only_changed=True)
        out.append("sim" + (f"/{changed}" if changed else ""))
    return out


def plan_grid(base: RunConfig, mixed: str | None, *, evidence: Sequence[str] = EVIDENCE_ARMS,
              methods: Sequence[str] = GRID_METHODS) -> list[tuple[Arm, RunConfig]]:
    """The grid's arms and their run configs.

    Parameters
    ----------
    base : RunConfig
        The one-model run: ``providers`` holds the one spec, ``pipeline.n_members`` the ensemble size, and every
        other setting (questions, search, seeds, cost cap) is each arm's; its ``output_dir`` is the experiment's
        ``runs`` folder. Its methods are replaced by :data:`GRID_METHODS` and its run id by the arm's name.
    mixed : str or None
        The mixed arm's ensemble, as ``run --ensemble`` takes it (``spec:count,...`` or a .toml/.json file); None: the
        simulator's default (:func:`default_mixed`).
    evidence : sequence of str
        The evidence arms, among :data:`EVIDENCE_ARMS`; ``shared`` first (it holds the base).
    methods : sequence of str
        The methods of each arm, among :data:`GRID_METHODS` with :data:`BASE_METHOD` (default all of them; the pools
        alone skip the debate and the supervisor, for a quick look at the members).

    Returns
    -------
    list of (Arm, RunConfig)
        Evidence by evidence, one model before mixed.

    Raises
    ------
    ValueError
        One line: not one spec in ``base``, an unknown evidence arm, ``shared`` missing, ``split`` without search, a mixed ensemble of another size than ``n_members``, or
        what :func:`benchmarks.harness.mixed_ensemble.parse_ensemble` refuses.
    """
    if len(base.providers) != 1:
        raise ValueError(f"the one-model arm runs on one provider spec; got {len(base.providers)}: {', '.join(base.providers) or 'none'}")
    unknown = [e for e in evidence if e not in EVIDENCE_ARMS]
    if unknown or not evidence or evidence[0] != "shared":
        raise ValueError(f"--evidence {','.join(evidence)}: give shared first, then optionally split (valid: {', '.join(EVIDENCE_ARMS)})")
    if "split" in evidence and base.search == "none":
        raise ValueError("--evidence split shares out the search results, and --search none gives none: use --search local or ddg")
    if BASE_METHOD not in methods or any(m not in GRID_METHODS for m in methods):
        raise ValueError(f"the grid's methods are among {', '.join(GRID_METHODS)} and include {BASE_METHOD}; got {', '.join(methods)}")
    n = base.pipeline.n_members
    one = base.providers[0]
    mixed_specs = default_mixed(one, n) if mixed is None else member_specs(parse_ensemble(mixed))
    if len(mixed_specs) != n:
        raise ValueError(f"--mixed gives {len(mixed_specs)} members but the ensemble has {n} (--members): make them agree, so "
                         "that the arms differ only in who the members are")
    out = []
    for ev in evidence:
        for members, specs in (("one", [one]), ("mixed", mixed_specs)):
            arm = Arm(ev, members, tuple(specs))
            data = base.model_dump()
            data.update(providers=list(specs), methods=list(methods), run_id=arm.name)
            data["pipeline"] = {**data["pipeline"], "evidence": ev}
            out.append((arm, RunConfig.model_validate(data)))
    return out


def grid_questions(plan: Sequence[tuple[Arm, RunConfig]]) -> list[Question]:
    """The grid's one question set: the base config's selection (filters, seeded sample) with the training cutoffs of
    every arm's models, so that no arm's model has seen a question resolve.

    Raises
    ------
    DataValidationError
        As a run's selection would (:meth:`benchmarks.harness.selection.QuestionSelection.questions`).
    """
    specs = list(dict.fromkeys(s for arm, _ in plan for s in arm.specs))
    return QuestionSelection(plan[0][1], specs).questions()


@dataclass
class GridEstimate:
    """What the grid would cost (:func:`estimate_grid`): one row per arm."""

    table: pd.DataFrame
    """Columns arm, providers, calls, input_tokens, output_tokens, usd (full answers), usd_max (at max_tokens); USD None
    where a price is unknown."""
    n_questions: int
    warnings: list[str] = field(default_factory=list)

    def total(self, column: str = "usd") -> float | None:
        """The grid's total of ``column`` (None when any arm's price is unknown)."""
        values = self.table[column]
        return None if values.isna().any() else float(values.sum())


def estimate_grid(plan: Sequence[tuple[Arm, RunConfig]], questions: list[Question], *, environ: dict[str, str] | None = None,
                  provider_factory: Any = None) -> GridEstimate:
    """Price every arm of ``plan`` on ``questions`` without calling a provider
    (:func:`benchmarks.harness.estimate.estimate_run` per arm, its method: prompts built by each arm's own pipeline).

    Raises
    ------
    UnknownProvider
        For a spec no provider answers to.
    """
    rows, warnings = [], []
    for arm, config in plan:
        est = estimate_run(config, environ=environ, questions=questions, provider_factory=provider_factory)
        t = est.totals()
        rows.append({"arm": arm.name, "providers": ", ".join(dict.fromkeys(est.providers)), "calls": t["calls"],
                     "input_tokens": t["input_tokens"], "output_tokens": t["output_tokens"], "usd": t["usd"], "usd_max": t["usd_max"]})
        warnings += [w for w in est.warnings if w not in warnings]
    return GridEstimate(pd.DataFrame(rows), len(questions), warnings)


def spent_usd(run: LoadedRun) -> float:
    """USD a run paid: every ledger row of its records, set-aside ones included (an unknown price counts 0)."""
    return float(sum(e.get("cost_usd") or 0.0 for r in [*run.records, *run.replaced] for e in r.get("ledger") or []))


@dataclass(frozen=True)
class SimulatorCheck:
    """An arm's simulated members against the simulator's closed form (:func:`simulator_check`)."""

    measured: float
    """Mean over member pairs of the Pearson correlation of their log-odds errors ``logit(p) - (scale * logit(p*) +
    bias)`` over the questions measured, ``p*`` the simulation's anchor."""
    closed_form: float
    """Mean over questions and member pairs of :func:`agent_providers.simulator.error_correlation_of` for what each member
    ran on and was shown."""
    pooled_error_variance: float
    """:func:`agent_providers.simulator.pooled_error_variance` of the closed form (log-odds units squared)."""
    n_questions: int
    """Questions measured: those whose anchor lies in :data:`CHECK_ANCHORS`."""


#: The anchors ``p*`` of the questions :func:`simulator_check` measures on. Members answer integer percents in [1, 99]:
#: near 0 or 1 the rounding (up to 0.005 in p, 0.5 in log-odds at p = 0.99) and the clip add errors of their own and
#: hide the simulated ones, so the measured correlation of all questions falls short of the closed form (by 0.1-0.2 at
#: noise 0.5 on the bundled questions, whose anchors are often extreme). Inside [0.1, 0.9] the rounding adds less than
#: 0.06 in log-odds. The choice rests on the anchor alone, never on the members' errors, so it biases nothing.
CHECK_ANCHORS = (0.1, 0.9)


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 0.005, 0.995)
    return np.log(p / (1 - p))


def simulator_check(run: LoadedRun, questions: Sequence[Question],
                    provider_of: Callable[[str], SimulatorProvider] | None = None) -> SimulatorCheck | None:
    """The measured and the closed-form correlation of a simulated run's members' log-odds errors.

    Parameters
    ----------
    run : LoadedRun
        A run whose every provider is the simulator (else None is returned).
    questions : sequence of Question
        The run's questions (their outcomes and crowd values give the simulation's anchors, as the runner bound them).
    provider_of : callable, optional
        ``spec -> SimulatorProvider`` holding the run's world; default a new provider with the bundled world and
        ``questions`` bound, as the runner builds it.

    Returns
    -------
    SimulatorCheck or None
        None for a run with a provider that is not the simulator, or fewer than 3 ok, resolved questions with two
        members whose anchor lies in :data:`CHECK_ANCHORS`.
    """
    specs = [p.get("spec", "") for p in run.manifest.get("providers") or []]
    if not specs or not all(is_simulated(s) for s in specs):
        return None
    members = run_members(run)
    if members is None or members.p.shape[1] < 2:
        return None
    if provider_of is None:
        built: dict[str, SimulatorProvider] = {}

        def provider_of(spec: str) -> SimulatorProvider:
            if spec not in built:
                built[spec] = SimulatorProvider(spec.partition("/")[2] or None)
                built[spec].bind_questions(questions)
            return built[spec]

    by_id = {q.id: q for q in questions}
    records = {r["question_id"]: r for r in run.records}
    p0 = provider_of(specs[0]).params
    centre, closed, rows = [], [], []
    for row, qid in enumerate(members.question_ids):
        anchor = provider_of(specs[0]).latent_p(by_id[qid])
        if not CHECK_ANCHORS[0] <= anchor <= CHECK_ANCHORS[1]:
            continue
        rows.append(row)
        centre.append(p0.scale * float(_logit(np.array(anchor))) + p0.bias)
        calls = [c for c in (records[qid].get("trace") or {}).get("recorded_calls", []) if c.get("role") == "forecaster"]
        params = [provider_of(c["provider"]).params for c in calls]
        seen = [shown_evidence([ChatMessage.model_validate(m) for m in c.get("messages", [])]) for c in calls]
        m = np.array(error_correlation_of(params, seen)) if len(calls) >= 2 else np.full((1, 1), np.nan)
        closed.append(m[np.triu_indices(len(calls), 1)].mean() if len(calls) >= 2 else np.nan)
    if len(rows) < 3:
        return None
    err = _logit(members.p[rows]) - np.array(centre)[:, None]
    k = err.shape[1]
    pairs = [np.corrcoef(err[:, i], err[:, j])[0, 1] for i in range(k) for j in range(i + 1, k)
             if np.isfinite(err[:, i]).all() and np.isfinite(err[:, j]).all()]
    rho = float(np.nanmean(closed))
    return SimulatorCheck(measured=float(np.mean(pairs)) if pairs else math.nan, closed_form=rho,
                          pooled_error_variance=pooled_error_variance(p0.noise, rho, k), n_questions=len(rows))


def _arm_diversity(run: LoadedRun) -> tuple[float, float, int]:
    members = run_members(run)
    if members is None:
        return math.nan, math.nan, 0
    corr = div.error_correlation(members.p, members.outcomes)
    return corr.mean_correlation, corr.n_effective, members.p.shape[1]


def grid_table(leaderboard: pd.DataFrame, runs: Sequence[tuple[Arm, LoadedRun]], *,
               checks: dict[str, SimulatorCheck | None] | None = None) -> pd.DataFrame:
    """The grid as one wide table (:data:`GRID_COLUMNS`), one row per (arm, method) in the grid's order.

    Parameters
    ----------
    leaderboard : pandas.DataFrame
        The leaderboard of the arms' runs compared together with the baseline ``<BASE_ARM>:<BASE_METHOD>``
        (:func:`benchmarks.report.write.write_report`): its ``label`` is ``<arm>:<method>``, its ``brier`` and
        ``delta_brier_vs_baseline`` with their intervals, ``tokens_per_question`` and ``cost_usd`` (the method's USD
        over its questions).
    runs : sequence of (Arm, LoadedRun)
    checks : dict, optional
        The simulator's check of each arm (:func:`simulator_check`), by arm name.

    Returns
    -------
    pandas.DataFrame
        USD per question is the method's cost over the questions it was scored on (None when a price is unknown);
        the diversity columns are the arm's members' (the same on each of its methods' rows).
    """
    board = leaderboard.set_index("label")
    rows = []
    for arm, run in runs:
        rho, n_eff, m = _arm_diversity(run)
        check = (checks or {}).get(arm.name)
        for method in GRID_METHODS:
            label = f"{arm.name}:{method}"
            if label not in board.index:
                continue
            b = board.loc[label]
            n = int(b["n"])
            cost = b.get("cost_usd")
            is_base = label == f"{BASE_ARM}:{BASE_METHOD}"
            rows.append({"arm": arm.name, "evidence": arm.evidence, "members": arm.members, "method": method, "n": n,
                         "brier": b["brier"], "brier_ci_low": b["brier_ci_low"], "brier_ci_high": b["brier_ci_high"],
                         "delta_vs_base": 0.0 if is_base else b["delta_brier_vs_baseline"],
                         "delta_ci_low": math.nan if is_base else b["delta_brier_ci_low"],
                         "delta_ci_high": math.nan if is_base else b["delta_brier_ci_high"],
                         "tokens_per_question": b.get("tokens_per_question"),
                         "usd_per_question": None if cost is None or pd.isna(cost) or not n else float(cost) / n,
                         "error_correlation": rho, "n_effective": n_eff, "n_members": m,
                         "sim_logodds_correlation": check.measured if check else math.nan,
                         "sim_closed_form_correlation": check.closed_form if check else math.nan,
                         "sim_pooled_error_variance": check.pooled_error_variance if check else math.nan})
    return pd.DataFrame(rows, columns=list(GRID_COLUMNS))


def closed_form_best_arm(checks: dict[str, SimulatorCheck | None]) -> str | None:
    """The arm whose members' pool errs least by the simulator's closed form (least pooled log-odds error variance;
    None without a check)."""
    known = {name: c.pooled_error_variance for name, c in checks.items() if c is not None and math.isfinite(c.pooled_error_variance)}
    return min(known, key=known.__getitem__) if known else None


@dataclass
class GridResult:
    """What :func:`arun_grid` ran and wrote."""

    folder: Path
    """The experiment folder: ``runs/<arm>`` run folders, the comparison's leaderboard.csv/.md and report.html, and
    :data:`GRID_FILE`."""
    runs: list[tuple[Arm, LoadedRun]]
    table: pd.DataFrame
    """:func:`grid_table`."""
    checks: dict[str, SimulatorCheck | None]
    """:func:`simulator_check` by arm name (None for an arm with a real model)."""
    report: Report
    """The comparison of the arms (:func:`benchmarks.report.write.write_report`)."""
    stopped: list[str] = field(default_factory=list)
    """Arms a cost cap stopped before every question ran, with the cap's note."""


async def arun_arms(plan: Sequence[tuple[Arm, RunConfig]], questions: list[Question], runs_dir: str | Path, *,
                    max_cost_usd: float | None = None, progress: bool = False, command_line: list[str] | None = None,
                    provider_factory: Any = None, on_arm: Callable[[Arm, Path], Any] | None = None
                    ) -> tuple[list[tuple[Arm, LoadedRun]], list[str]]:
    """Run every arm of ``plan`` on ``questions``, each an ordinary run in ``runs_dir/<arm>``
    (:class:`benchmarks.harness.runner.BenchmarkRunner`, the questions given), under the cost cap that remains of
    ``max_cost_usd`` (USD) after the arms before it (what they paid, :func:`spent_usd`).

    Returns
    -------
    runs : list of (Arm, LoadedRun)
        Each arm with its run as loaded from its folder.
    stopped : list of str
        The arms a cost cap stopped before every question ran, with the cap's note.
    """
    runs: list[tuple[Arm, LoadedRun]] = []
    stopped = []
    spent = 0.0
    for arm, config in plan:
        cap = None if max_cost_usd is None else max(max_cost_usd - spent, 1e-9)
        config = config.model_copy(update={"output_dir": str(runs_dir), "max_cost_usd": cap})
        runner = BenchmarkRunner(config, questions=questions, progress=progress, command_line=command_line,
                                 provider_factory=provider_factory)
        if on_arm is not None:
            on_arm(arm, runner.run_dir)
        summary = await runner.arun()
        if summary.stopped:
            stopped.append(f"{arm.name}: {summary.stopped.get('note', 'stopped by the cost cap')}")
        loaded = load_run(runner.run_dir)
        spent += spent_usd(loaded)
        runs.append((arm, loaded))
    return runs, stopped


async def arun_grid(plan: Sequence[tuple[Arm, RunConfig]], questions: list[Question], folder: str | Path, *,
                    max_cost_usd: float | None = None, progress: bool = False, n_resamples: int = 1000, seed: int = 0,
                    command_line: list[str] | None = None, provider_factory: Any = None,
                    on_arm: Callable[[Arm, Path], Any] | None = None) -> GridResult:
    """Run every arm of ``plan`` on ``questions`` into ``folder``/runs (:func:`arun_arms`), compare them and write the grid.

    :data:`EXPERIMENT_FILE` records the plan first. The arms are compared as one leaderboard against ``shared-one:mean``
    (:func:`benchmarks.report.write.write_report` into ``folder``: leaderboard.csv/.md, report.html), each arm's simulated
    members are checked against the closed form (:func:`simulator_check`), and the grid's table (:func:`grid_table`) is
    written as :data:`GRID_FILE`.

    Raises
    ------
    DataValidationError
        When no arm has a scorable forecast.
    OSError
        When a file cannot be written.
    """
    folder = Path(folder)
    specs = list(dict.fromkeys(s for arm, _ in plan for s in arm.specs))
    folder.mkdir(parents=True, exist_ok=True)
    write_json_atomic(folder / EXPERIMENT_FILE, {
        "experiment": "diversity", "base": f"{BASE_ARM}:{BASE_METHOD}", "methods": list(plan[0][1].methods),
        "arms": [{"name": a.name, "evidence": a.evidence, "members": a.members, "providers": list(a.specs)} for a, _ in plan],
        "question_ids": [q.id for q in questions], "max_cost_usd": max_cost_usd, "command_line": command_line,
        "question_selection": QuestionSelection(plan[0][1], specs).describe()})
    runs, stopped = await arun_arms(plan, questions, folder / "runs", max_cost_usd=max_cost_usd, progress=progress,
                                    command_line=command_line, provider_factory=provider_factory, on_arm=on_arm)
    report = write_report([r for _, r in runs], folder, baseline=f"{BASE_ARM}:{BASE_METHOD}", n_resamples=n_resamples, seed=seed)
    checks = {arm.name: simulator_check(run, questions) for arm, run in runs}
    table = grid_table(report.leaderboard, runs, checks=checks)
    table.to_csv(folder / GRID_FILE, index=False)
    return GridResult(folder, runs, table, checks, report, stopped)
