"""Every exercise check of the teaching notebooks grades a wrong answer wrong, a placeholder "not answered",
and a right answer right. The right answers are hand-computed (on small made-up inputs) or the facts the
lessons state; the inputs are the lessons' own data where that is cheap (their code cells before the
model calls, run here), else small fakes with the same attributes. The solution notebooks (executed by
tests/notebooks) show every check saying right on the lessons' full data."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import math
import shutil
from types import SimpleNamespace

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

from agent_providers import ScriptedProvider  # noqa: E402
from agent_research import ForecasterAgent, PipelineConfig  # noqa: E402
from agent_schemas import Question, SearchOutcome, SearchResult  # noqa: E402
from agent_tools import LocalCorpusSearch, SearchClient, ToolExecutor  # noqa: E402
from benchmarks.questions import DATA_SNAPSHOT_DATE, load_forecastbench  # noqa: E402
from benchmarks.teaching.exercises import (adversarial_debate, aggregation_math, cost_versus_quality, ensembles,  # noqa: E402
                                           evaluation_and_leaderboard, evaluation_pitfalls, framework_comparison,
                                           human_panels, pooling_distributions, providers_and_tokens, research_agent, state_and_replay,
                                           supervisor_and_pipeline, tools_and_evidence)
from benchmarks.teaching.lessons import lesson_code_cells  # noqa: E402


def status(verdict) -> str:
    return verdict.status


def lesson_state(name: str, through: str) -> dict:
    """The lesson's code cells run in order, up to and including the first one containing ``through``."""
    import matplotlib.pyplot as plt

    namespace: dict = {"display": lambda *args, **kwargs: None}
    for source in lesson_code_cells(name):
        code = "\n".join("" if line.lstrip().startswith("%") else line for line in source.splitlines())
        exec(compile(code, f"<{name}>", "exec"), namespace)  # noqa: S102 -- the lesson's own code
        plt.close("all")
        if through in source:
            return namespace
    raise AssertionError(f"{name} has no cell with {through!r}")


def question(qid="q", outcome=1, forecast_date=dt.date(2025, 11, 1)) -> Question:
    return Question(id=qid, text=f"Will {qid} happen?", forecast_date=forecast_date, outcome=outcome)


# --- 01 providers and tokens ---------------------------------------------------------------------------

def test_01_checks():
    assert providers_and_tokens.check_auto_choice({"a": "anthropic", "b": "openai-compatible"}).right
    assert status(providers_and_tokens.check_auto_choice({"a": "anthropic", "b": "openai"})) == "wrong"
    assert status(providers_and_tokens.check_auto_choice({"a": "claude", "b": "openai-compatible"})) == "wrong"
    assert status(providers_and_tokens.check_auto_choice({"a": None, "b": None})) == "not answered"

    assert providers_and_tokens.check_ledger_total({"total cost_usd": 0.004, "what the run cost": "at least that"}).right
    assert status(providers_and_tokens.check_ledger_total({"total cost_usd": 0.004, "what the run cost": "exactly that"})) == "wrong"
    assert status(providers_and_tokens.check_ledger_total({"total cost_usd": 0.006, "what the run cost": "at least that"})) == "wrong"

    messages = [{"role": "system", "content": "You forecast."}, {"role": "user", "content": "Will it rain?"}]
    repeats = providers_and_tokens.CACHE_REPEATS
    assert providers_and_tokens.check_cache_repeats(dict(zip(repeats, [False, True, True, True])), messages).right
    assert status(providers_and_tokens.check_cache_repeats(dict(zip(repeats, [False, True, True, False])), messages)) == "wrong"
    assert status(providers_and_tokens.check_cache_repeats(dict.fromkeys(repeats), messages)) == "not answered"


# --- 02 tools and evidence -----------------------------------------------------------------------------

def test_02_leakier_rounds_follows_the_measured_shares():
    markets = [question("early").model_copy(update={"round": "2025-10-26"}),
               question("late").model_copy(update={"round": "2026-06-21"})]
    early_leaks = {"early": 0.8, "late": 0.1}
    assert tools_and_evidence.check_leakier_rounds("early rounds", markets, lambda x: early_leaks[x.id]).right
    assert status(tools_and_evidence.check_leakier_rounds("late rounds", markets, lambda x: early_leaks[x.id])) == "wrong"
    late_leaks = {"early": 0.1, "late": 0.8}   # the other way round: the check computes, it does not know
    assert tools_and_evidence.check_leakier_rounds("late rounds", markets, lambda x: late_leaks[x.id]).right


def test_02_guard_rule():
    q = question()
    result = SearchResult(title="t", url="https://example.invalid/x", published=dt.date(2025, 10, 1))
    assert tools_and_evidence.check_guard_rule(lambda p, f: p is not None and p <= f, q, result).right
    strict = tools_and_evidence.check_guard_rule(lambda p, f: p is not None and p < f, q, result)
    assert strict.status == "wrong" and "the forecast date itself" in strict.message
    keeps_undated = tools_and_evidence.check_guard_rule(lambda p, f: p is None or p <= f, q, result)
    assert keeps_undated.status == "wrong" and "undated" in keeps_undated.message

    def stub(published, forecast_date):
        raise NotImplementedError

    assert status(tools_and_evidence.check_guard_rule(stub, q, result)) == "not answered"


class TenResults(SearchClient):
    """Today's top 10 whatever the cutoff: results 2, 5 and 10 dated before the forecast date, the rest after."""

    name = "ten-results"

    def search(self, query, *, max_results=5, cutoff_date=None):
        dates = [dt.date(2026, 1, 1) if i not in (1, 4, 9) else dt.date(2025, 1, 1) for i in range(10)]
        results = [SearchResult(title=f"r{i}", url=f"https://example.invalid/{i}", published=d) for i, d in enumerate(dates)]
        return SearchOutcome(status="ok", attempted_query=query, results=results[:max_results])


def test_02_overfetch_hand_counted():
    # overfetch 1 asks for 5: two of them are early; 2 and 4 ask for min(10, 20) = 10: three early ones
    right = {"overfetch=1": 2, "overfetch=2": 3, "overfetch=4": 3}
    assert tools_and_evidence.check_overfetch(right, TenResults(), question()).right
    assert status(tools_and_evidence.check_overfetch({**right, "overfetch=4": 5}, TenResults(), question())) == "wrong"


def test_02_checks_on_the_lesson_data():
    ns = lesson_state("02_tools_and_evidence", "def late_share")
    assert tools_and_evidence.check_leakier_rounds("early rounds", ns["markets"], ns["late_share"]).right
    assert status(tools_and_evidence.check_overfetch({"overfetch=1": 5, "overfetch=2": 5, "overfetch=4": 5},
                                                     ns["IgnoresCutoff"](ns["corpus"]), ns["q"])) == "wrong"


# --- 03 state and replay -------------------------------------------------------------------------------

def test_03_case_facts_of_the_trillionaire_question():
    markets = load_forecastbench(question_type="market", one_per_source_question=True, require_crowd=True)
    right = {"shows the scheduled close date": True, "shows the actual resolution date": False,
             "the audit finds hindsight": False}
    assert state_and_replay.check_case_facts(right, markets).right
    assert status(state_and_replay.check_case_facts({**right, "shows the actual resolution date": True}, markets)) == "wrong"


def test_03_replay_counts_the_turns_the_replay_found():
    ok, failed = SimpleNamespace(status="ok"), SimpleNamespace(status="failed")
    seen = []

    def replay(cfg):
        seen.append(cfg.debate.max_rounds)
        return SimpleNamespace(debate=SimpleNamespace(rounds=[SimpleNamespace(bull=ok, bear=failed)]), final_p_yes=0.4)

    recorded = SimpleNamespace(final_p_yes=0.5)
    config = PipelineConfig(n_members=3, debate={"max_rounds": 2})
    right = {"debate turns found in the trace": 1, "the final p_yes changes": True}
    assert state_and_replay.check_replay_with_more_rounds(right, recorded, replay, config).right and seen == [3]
    wrong = {"debate turns found in the trace": 0, "the final p_yes changes": True}
    assert status(state_and_replay.check_replay_with_more_rounds(wrong, recorded, replay, config)) == "wrong"


def test_03_resume_without_cache_counts_the_calls_of_a_real_resume(tmp_path):
    made = []

    class Runner:
        def __init__(self, run_id):
            self.run_dir = tmp_path / run_id
            made.append(run_id)

        async def arun(self, resume=False):
            (self.run_dir / "cache").mkdir(parents=True, exist_ok=True)
            return SimpleNamespace(provider_stats={"calls": 45 if resume else 72})

    def runner_for(run_id, fresh=True):
        return Runner(run_id)

    check = state_and_replay.check_resume_without_cache
    assert asyncio.run(check(45, runner_for, lambda run_dir: 3)).right
    assert status(asyncio.run(check(72, runner_for, lambda run_dir: 3))) == "wrong"
    made.clear()
    assert status(asyncio.run(check(None, runner_for, lambda run_dir: 3))) == "not answered" and made == []


# --- 04 research agent ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def nb04():
    markets = load_forecastbench(question_type="market", one_per_source_question=True, require_crowd=True)
    q = next(x for x in markets if x.text.startswith("NATO x Russia military clash by March 31"))
    executor = ToolExecutor(LocalCorpusSearch.default(), snippet_chars=200)
    agent = ForecasterAgent(ScriptedProvider(), executor=executor, n_queries=1, max_results=2, max_evidence=1,
                            max_tokens=300, seed=0)
    outcomes, _ = asyncio.run(agent.research(q))
    return SimpleNamespace(q=q, executor=executor, agent=agent, outcomes=outcomes)


def test_04_checks(nb04):
    days = "days from the crowd's observation to the forecast date"
    assert research_agent.check_crowd_line({"lines added": 1, days: 10}, nb04.agent, nb04.q, nb04.outcomes).right
    assert status(research_agent.check_crowd_line({"lines added": 1, days: 0}, nb04.agent, nb04.q, nb04.outcomes)) == "wrong"

    parsed = {"a word for the percent": "fails", "a fraction under p_yes": 0.7, "a percent as a string": 0.7,
              "closing brace missing": "fails"}
    assert research_agent.check_parsed_answers(parsed, nb04.q, nb04.executor).right
    lenient = {**parsed, "a word for the percent": 0.7}
    assert status(research_agent.check_parsed_answers(lenient, nb04.q, nb04.executor)) == "wrong"
    assert status(research_agent.check_parsed_answers({**parsed, "a fraction under p_yes": 70}, nb04.q, nb04.executor)) == "wrong"

    check = research_agent.check_more_results
    key = "the latest evidence date can pass the cutoff"
    args = (nb04.agent, nb04.q, nb04.outcomes, nb04.executor)
    assert asyncio.run(check({"prompt tokens per extra result": 93, key: False}, *args)).right
    assert status(asyncio.run(check({"prompt tokens per extra result": 50, key: False}, *args))) == "wrong"
    assert status(asyncio.run(check({"prompt tokens per extra result": 93, key: True}, *args))) == "wrong"
    assert status(asyncio.run(check(None, *args))) == "not answered"


# --- 05 aggregation math -------------------------------------------------------------------------------

def _mean_scores_by_hand(p_yes, misses, n=100):
    o = np.ones(n)
    o[:misses] = 0
    eps = np.finfo(float).eps
    p = np.clip(np.full(n, p_yes), eps, 1 - eps)
    return float(np.mean((p_yes - o) ** 2)), float(np.mean(-np.where(o == 1, np.log(p), np.log(1 - p))))


def test_05_mean_scores_against_sklearn():
    metrics = pytest.importorskip("sklearn.metrics")

    def with_sklearn(p_yes, misses, n=100):
        o = np.ones(n)
        o[:misses] = 0
        p = np.full(n, p_yes)
        return metrics.brier_score_loss(o, p), metrics.log_loss(o, p, labels=[0, 1])

    assert aggregation_math.check_mean_scores(with_sklearn).right   # the oracle agrees with the reference
    assert aggregation_math.check_mean_scores(_mean_scores_by_hand).right

    def unclipped(p_yes, misses, n=100):
        o = np.ones(n)
        o[:misses] = 0
        with np.errstate(divide="ignore"):
            return float(np.mean((p_yes - o) ** 2)), float(np.mean(-np.where(o == 1, np.log(p_yes), np.log(1 - p_yes))))

    clip = aggregation_math.check_mean_scores(unclipped)
    assert clip.status == "wrong" and "log loss clipped" in clip.message
    swapped = aggregation_math.check_mean_scores(lambda p, m, n=100: _mean_scores_by_hand(p, m, n)[::-1])
    assert swapped.status == "wrong"

    def stub(p_yes, misses, n=100):
        raise NotImplementedError

    assert status(aggregation_math.check_mean_scores(stub)) == "not answered"


def test_05_fitted_d_and_identical_members_follow_the_panel():
    rng = np.random.default_rng(0)
    truth = rng.uniform(0.05, 0.95, 2000)
    y = (rng.random(2000) < truth).astype(int)
    logit = np.log(truth / (1 - truth))

    def panel(scale):
        noisy = scale * logit[:, None] + 0.1 * rng.standard_normal((2000, 5))
        return 1 / (1 + np.exp(-noisy))

    everything = np.ones(2000, dtype=bool)
    over = aggregation_math.check_overconfident_d("below 1", lambda scale, rho: panel(2.0), everything, y)
    assert over.right
    assert status(aggregation_math.check_overconfident_d("above 1", lambda scale, rho: panel(2.0), everything, y)) == "wrong"
    assert aggregation_math.check_overconfident_d("above 1", lambda scale, rho: panel(0.5), everything, y).right

    same = np.repeat(truth[:, None], 5, axis=1)
    assert aggregation_math.check_identical_members(1, lambda rho: same, everything, y).right
    assert status(aggregation_math.check_identical_members(4, lambda rho: same, everything, y)) == "wrong"
    assert aggregation_math.check_identical_members(4, lambda rho: panel(1.0), everything, y).right


def test_05_checks_on_the_lesson_data():
    ns = lesson_state("05_aggregation_math", "def member_panel")
    args = (ns["member_panel"], ns["train"], ns["y"])
    assert aggregation_math.check_overconfident_d("below 1", *args).right
    assert aggregation_math.check_identical_members(1, ns["member_panel"], ns["test"], ns["y"]).right


# --- 06 ensembles --------------------------------------------------------------------------------------

def test_06_policy_rule_against_ensemble_result():
    q = question()
    answer = json.dumps({"rationale": "r", "key_evidence": [], "p_yes_percent": 70})
    ok = ForecasterAgent(ScriptedProvider([answer])).forecast(q)
    failed = ForecasterAgent(ScriptedProvider(["no JSON here"])).forecast(q)
    forecasts = [ok, failed]
    assert ensembles.check_policy_rule(lambda k, n, f: k >= 1 and k / n >= f, forecasts, q).right
    naive = ensembles.check_policy_rule(lambda k, n, f: k >= max(1, f * n), forecasts, q)
    assert naive.status == "wrong" and "7 of 25 ok" in naive.message         # 7 >= 0.28 * 25 is False
    assert status(ensembles.check_policy_rule(lambda k, n, f: k > f * n, forecasts, q)) == "wrong"


def test_06_naive_ensemble_and_twins():
    result = SimpleNamespace(p_yes_row=lambda: np.array([0.7, 0.55, np.nan, np.nan, np.nan]),
                             aggregate=lambda method: 0.625)
    q = question(outcome=1)
    # (0.7 + 0.55 + 3 * 0.5) / 5 = 0.55, further from 1 than 0.625
    assert ensembles.check_naive_ensemble({"naive p_yes": 0.55, "closer to the outcome": "successes only"}, result, q).right
    assert status(ensembles.check_naive_ensemble({"naive p_yes": 0.625, "closer to the outcome": "successes only"}, result, q)) == "wrong"
    assert status(ensembles.check_naive_ensemble({"naive p_yes": 0.55, "closer to the outcome": "naive"}, result, q)) == "wrong"

    executor = ToolExecutor(LocalCorpusSearch.default())
    right = {"identical prompts": True, "the call parameter that differs": "seed"}
    assert ensembles.check_twin_members(right, q, [], executor).right
    assert status(ensembles.check_twin_members({**right, "the call parameter that differs": "temperature"}, q, [], executor)) == "wrong"
    assert status(ensembles.check_twin_members({**right, "identical prompts": False}, q, [], executor)) == "wrong"


# --- 07 adversarial debate (the lesson's scripted debaters; midpoints computed by hand) -----------------

def test_07_checks_on_the_lessons_debaters():
    ns = lesson_state("07_adversarial_debate", "def package_debate")
    debate, debater = ns["package_debate"], ns["debater"]
    # stubborn bull at 65; bear 25 -> 41 -> 51 -> 57 -> 60 (40% of the gap, rounded): gap 0.05 is not below 0.05
    assert adversarial_debate.check_stubborn_bull({"rounds": 4, "consensus": False, "midpoint": 0.625}, debate, debater).right
    assert status(adversarial_debate.check_stubborn_bull({"rounds": 4, "consensus": True, "midpoint": 0.625}, debate, debater)) == "wrong"
    assert status(adversarial_debate.check_stubborn_bull({"rounds": 4, "consensus": False, "midpoint": 0.45}, debate, debater)) == "wrong"
    # threshold 0.2: round 1 bull 65, bear 41 (gap 0.24); round 2 bull 55, bear 47 (gap 0.08): midpoint 0.51
    assert adversarial_debate.check_loose_threshold({"rounds": 2, "midpoint": 0.51}, debate, debater).right
    assert status(adversarial_debate.check_loose_threshold({"rounds": 3, "midpoint": 0.51}, debate, debater)) == "wrong"
    # threshold 0.05 ends in round 3 at bull 52, bear 49: midpoint 0.505, above 0.45
    assert adversarial_debate.check_first_mover("above", debate, debater, 0.45).right
    assert status(adversarial_debate.check_first_mover("at", debate, debater, 0.45)) == "wrong"
    assert adversarial_debate.check_first_mover("below", debate, debater, 0.6).right


# --- 08 supervisor and pipeline ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def nb08():
    return lesson_state("08_supervisor_and_pipeline", "sure = supervise_all(always_sure)")


def test_08_halved_weights(nb08):
    # supervisor 0.64 (medium: the corpus answered with listings only, never evidence; w 0.25), 0.60 (medium,
    # w 0.25), low ignored; aggregate 0.65
    right = {"all searches ok": 0.75 * 0.65 + 0.25 * 0.64, "one search rate limited": 0.75 * 0.65 + 0.25 * 0.60,
             "every search rate limited": 0.65}
    assert supervisor_and_pipeline.check_halved_weights(right, nb08["artifacts"], nb08["aggregate"]).right
    default_weights = {**right, "all searches ok": 0.5 * 0.65 + 0.5 * 0.64}
    assert status(supervisor_and_pipeline.check_halved_weights(default_weights, nb08["artifacts"], nb08["aggregate"])) == "wrong"


def test_08_grounding_rule(nb08):
    levels = ("low", "medium", "high")

    def grounded(art):
        caps = [art.confidence]
        if art.search_outcomes and not any(o.ok for o in art.search_outcomes):
            caps.append("low")
        if not art.disagreements or any(c.status == "gap" for c in art.coverage):
            caps.append("medium")
        return min(caps, key=levels.index)

    check = supervisor_and_pipeline.check_grounding_rule
    verdict = check(grounded, nb08["sure"], nb08["artifacts"], nb08["aggregate"])
    assert verdict.right and "0.650" in verdict.message        # the always-sure supervisor with every search failed
    assert status(check(lambda art: art.confidence, nb08["sure"], nb08["artifacts"], nb08["aggregate"])) == "wrong"
    gaps_only = check(lambda art: "medium" if any(c.status == "gap" for c in art.coverage) else art.confidence,
                      nb08["sure"], nb08["artifacts"], nb08["aggregate"])
    assert gaps_only.status == "wrong" and "every search rate limited" in gaps_only.message


def test_08_spread_threshold_from_a_scripted_trace(nb08):
    from agent_research import ForecastPipeline
    from agent_providers import scripted_world

    config = PipelineConfig(n_members=2, seed=0, debate={"max_rounds": 1}, supervisor={"max_queries": 1})
    trace = ForecastPipeline.from_config(scripted_world.provider(), ToolExecutor(LocalCorpusSearch.default()),
                                         config).run(nb08["q"])
    members = [f.p_yes for f in trace.forecasts]
    runs = max(members) - min(members) >= 0.2
    spent = sum(r["input_tokens"] + r["output_tokens"] for r in trace.ledger.to_records() if r["method"] != "ensemble")
    right = {"the specialists run": runs, "tokens saved": 0 if runs else spent}
    assert supervisor_and_pipeline.check_spread_threshold(right, trace, config).right
    assert status(supervisor_and_pipeline.check_spread_threshold({**right, "the specialists run": not runs}, trace,
                                                                 config)) == "wrong"


# --- 09 evaluation and leaderboard ---------------------------------------------------------------------

def test_09_ece_and_source_clusters():
    qs = [question(f"q{i}", outcome=int(i < 3)) for i in range(10)]   # yes-rate 0.3: ECE of 0.5 is 0.2
    assert evaluation_and_leaderboard.check_ece_of_always_half(0.2, qs).right
    assert status(evaluation_and_leaderboard.check_ece_of_always_half(0.3, qs)) == "wrong"

    rows = pd.DataFrame({"source": [f"s{i % 4}" for i in range(80)], "cluster": [f"c{i}" for i in range(80)]})
    scores = np.random.default_rng(0).random(80)
    assert evaluation_and_leaderboard.check_source_clusters("no interval", scores, rows).right  # 4 < 10 clusters
    assert status(evaluation_and_leaderboard.check_source_clusters("wider", scores, rows)) == "wrong"


def test_09_six_question_run_on_the_simulator(tmp_path):
    from benchmarks.harness.config import RunConfig
    from benchmarks.report import write_report
    from benchmarks.harness.runner import BenchmarkRunner

    def simulated_run(run_id, n):   # as the lesson's: a fresh run folder each time
        shutil.rmtree(tmp_path / "runs" / run_id, ignore_errors=True)
        config = RunConfig(output_dir=str(tmp_path / "runs"), run_id=run_id, providers=["sim/noise=0.6"], sample_n=n,
                           seed=1, n_members=3, debate_rounds=2, supervisor_queries=1)
        return BenchmarkRunner(config, progress=False)

    check = evaluation_and_leaderboard.check_six_question_run
    assert asyncio.run(check({"intervals": False, "ranks": False}, simulated_run, write_report, tmp_path)).right
    assert status(asyncio.run(check({"intervals": True, "ranks": False}, simulated_run, write_report, tmp_path))) == "wrong"
    assert status(asyncio.run(check({"intervals": None, "ranks": None}, simulated_run, write_report, tmp_path))) == "not answered"


# --- 10 framework comparison (fakes of run_all and arun_benchmark) ---------------------------------------

def _fake_run_all(split_supervisor_model="scripted"):
    async def run_all(cfg, roles=None):
        gated = cfg.reconcile_min_spread is not None and cfg.reconcile_min_spread > 0.5
        traces, providers = {}, {}
        for fw in ("python", "langgraph", "openai-agents"):
            records = [{"method": "ensemble", "role": "forecaster", "model": "scripted"},
                       {"method": "debate", "role": "bull", "model": "bull-model"},
                       {"method": "debate", "role": "bear", "model": "bear-model"},
                       {"method": "supervisor", "role": "supervisor", "model": split_supervisor_model}]
            traces[fw] = SimpleNamespace(debate=None if gated else object(), supervisor=None if gated else object(),
                                         ledger=SimpleNamespace(to_records=lambda records=records: records))
            providers[fw] = SimpleNamespace(requests=[None] * (9 if gated else 15))
        return traces, providers
    return run_all


def test_10_checks_with_fakes():
    config = PipelineConfig(n_members=3, seed=0)
    gate = framework_comparison.check_spread_gate
    right = {"specialists run at 0.7": False, "specialists run at 0.3": True, "calls saved at 0.7": 6}
    assert asyncio.run(gate(right, _fake_run_all(), config)).right
    assert status(asyncio.run(gate({**right, "calls saved at 0.7": 0}, _fake_run_all(), config))) == "wrong"
    assert status(asyncio.run(gate(dict.fromkeys(right), _fake_run_all(), config))) == "not answered"

    split = framework_comparison.check_split_roles
    assert asyncio.run(split({"ledger rows": 4, "the supervisor is billed to": "the members' model"}, _fake_run_all(), config)).right
    assert status(asyncio.run(split({"ledger rows": 4, "the supervisor is billed to": "bull-model"}, _fake_run_all(), config))) == "wrong"
    assert asyncio.run(split({"ledger rows": 4, "the supervisor is billed to": "bear-model"},
                             _fake_run_all("bear-model"), config)).right

    async def benchmark(n, seed, latency_s):
        wall = 3 * (0.05 + 15 * latency_s)   # 50 ms of overhead per question, 15 calls per question
        return pd.DataFrame({"framework": ["a", "b"], "overhead_ms_per_q": [50.0, 50.0], "questions": [3, 3],
                             "wall_s": [wall, wall]}), None

    assert asyncio.run(framework_comparison.check_overhead_share("falls", benchmark)).right
    assert status(asyncio.run(framework_comparison.check_overhead_share("rises", benchmark))) == "wrong"


# --- 11 evaluation pitfalls ----------------------------------------------------------------------------

def test_11_early_flag_gain_by_hand_and_on_the_lesson_data():
    crowd, y = np.array([0.5, 0.5, 0.3]), np.array([1, 0, 0])
    later, early = np.array([True, True, False]), np.array([True, False, False])
    recalibrate = lambda flag: np.array([0.9, 0.1])   # noqa: E731 -- Brier 0.01 against the crowd's 0.25
    assert evaluation_pitfalls.check_early_flag_gain(0.24, recalibrate, early, crowd, y, later).right
    assert status(evaluation_pitfalls.check_early_flag_gain(0.1, recalibrate, early, crowd, y, later)) == "wrong"

    ns = lesson_state("11_evaluation_pitfalls", "def recalibrated_by")
    args = (ns["recalibrated_by"], ns["early"], ns["crowd"], ns["y"], ns["later"])
    assert evaluation_pitfalls.check_early_flag_gain(0.017, *args).right   # "about 0.017", the lesson says
    assert status(evaluation_pitfalls.check_early_flag_gain(0.0, *args)) == "wrong"


def test_11_small_n_ece_of_a_constant_forecaster_by_formula():
    # always 0.5 with outcomes drawn at 0.5: ECE = |mean(o) - 0.5|, whose mean is sqrt(0.25 / n) * sqrt(2 / pi)
    crowd = np.full(1200, 0.5)
    right = {f"{n} questions": math.sqrt(0.25 / n) * math.sqrt(2 / math.pi) for n in (30, 1000)}
    assert evaluation_pitfalls.check_small_n_ece(right, crowd).right
    assert status(evaluation_pitfalls.check_small_n_ece({"30 questions": 0.0127, "1000 questions": 0.0127}, crowd)) == "wrong"
    assert status(evaluation_pitfalls.check_small_n_ece({"30 questions": None, "1000 questions": None}, crowd)) == "not answered"


def test_11_skipping_method_by_hand():
    # 85 sure questions (0.1, No) and 15 unsure ones (0.45, Yes): the method skips the 15 (15% > 5%: not ranked);
    # as its worst case each skipped question scores 1: (85 * 0.01 + 15 * 1) / 100
    crowd = np.r_[np.full(85, 0.1), np.full(15, 0.45)]
    outcomes = np.r_[np.zeros(85, dtype=int), np.ones(15, dtype=int)]
    long = pd.DataFrame({"question_id": [f"q{i}" for i in range(100)], "p_yes": crowd, "outcome": outcomes,
                         "cluster": [f"c{i}" for i in range(100)]})
    right = {"ranked": False, "questions imputed": 15, "Brier with the skipped as its worst case": (85 * 0.01 + 15) / 100}
    assert evaluation_pitfalls.check_skipping_method(right, long, crowd).right
    assert status(evaluation_pitfalls.check_skipping_method({**right, "ranked": True}, long, crowd)) == "wrong"
    assert status(evaluation_pitfalls.check_skipping_method({**right, "questions imputed": 0}, long, crowd)) == "wrong"
    # ForecastBench's 0.5 would give (85 * 0.01 + 15 * 0.25) / 100 = 0.046, better than the crowd's 0.0539: not the answer
    assert status(evaluation_pitfalls.check_skipping_method({**right, "Brier with the skipped as its worst case": 0.046},
                                                            long, crowd)) == "wrong"


# --- 12 cost versus quality ----------------------------------------------------------------------------

def test_12_pipeline_cost_at_list_prices():
    # per question: mean 1,000 in + 100 out tokens, pipeline three times that; $3 / $15 per million
    costs = pd.DataFrame({"label": ["mean", "pipeline"], "input_tokens": [10_000, 30_000], "output_tokens": [1_000, 3_000]})
    right = {"pipeline USD per 1,000 questions": 13.5, "pipeline / mean": 3.0}
    assert cost_versus_quality.check_pipeline_cost(right, costs, 10).right
    assert status(cost_versus_quality.check_pipeline_cost({**right, "pipeline USD per 1,000 questions": 4.5}, costs, 10)) == "wrong"


def test_12_calibrated_anchor_d_and_members_enough():
    from agent_providers import SimWorld

    questions = load_forecastbench(one_per_source_question=True, scheduled_close_to=DATA_SNAPSHOT_DATE)
    y = np.array([x.outcome for x in questions])
    half = np.random.default_rng(0).random(len(y)) < 0.5
    args = (SimWorld.bundled(), questions, y, half, [0.0, 0.3, 0.6, 0.9])
    assert cost_versus_quality.check_calibrated_anchor_d({"fitted d at rho=0": "below 1", "as rho grows, d": "falls"}, *args).right
    assert status(cost_versus_quality.check_calibrated_anchor_d({"fitted d at rho=0": "above 1", "as rho grows, d": "falls"},
                                                                *args)) == "wrong"

    table = pd.DataFrame({"rho=0.3": [0.20, 0.19, 0.185, 0.1805, 0.1802, 0.18]}, index=pd.Index([1, 2, 3, 5, 8, 12]))
    assert cost_versus_quality.check_members_enough(5, table).right    # 0.1805 <= 0.18 + 0.001 first
    assert status(cost_versus_quality.check_members_enough(3, table)) == "wrong"


# --- 13 human panels -----------------------------------------------------------------------------------

def test_13_max_pool_by_hand():
    # q1 (Yes): 0.2, 0.6 -> mean 0.4 (Brier 0.36), max 0.6 (0.16); q2 (No): 0.1, 0.5 -> mean 0.3 (0.09), max 0.5 (0.25);
    # q3 (No): 0.3 alone -> both 0.3. max - mean = (-0.20 + 0.16 + 0) / 3; it loses on the items resolved No
    members = pd.DataFrame({"question_id": ["q1", "q1", "q2", "q2", "q3"], "forecaster": ["a", "b", "a", "b", "a"],
                            "p_yes": [0.2, 0.6, 0.1, 0.5, 0.3], "outcome": [1, 1, 0, 0, 0]})
    right = {"Brier of max minus Brier of mean": -0.04 / 3, "where max loses": "resolved No"}
    assert human_panels.check_max_pool(right, members).right
    assert status(human_panels.check_max_pool({**right, "where max loses": "resolved Yes"}, members)) == "wrong"
    too_high = human_panels.check_max_pool({**right, "Brier of max minus Brier of mean": 0.0}, members)
    assert too_high.status == "wrong" and "too high" in too_high.message and "mirror image" in too_high.message
    assert status(human_panels.check_max_pool({**right, "where max loses": "on Tuesdays"}, members)) == "wrong"
    assert status(human_panels.check_max_pool({"Brier of max minus Brier of mean": None, "where max loses": None},
                                              members)) == "not answered"


def test_13_mean_pool_gain_is_the_forecasts_variance():
    def variance(p, outcome):           # the identity of solution 2: independent of the outcome
        return float(np.nanvar(p))

    assert human_panels.check_mean_pool_gain(variance).right
    sample = human_panels.check_mean_pool_gain(lambda p, outcome: float(np.nanvar(p, ddof=1)))
    assert sample.status == "wrong" and "[0.2, 0.4, 0.9], resolved Yes" in sample.message   # 0.13 where 0.0866667 is due
    assert "leave out the NaN" in sample.message
    ignores_nan = human_panels.check_mean_pool_gain(lambda p, outcome: float(np.var(p)))      # NaN on the 4th input
    assert ignores_nan.status == "wrong" and "two did not answer" in ignores_nan.message
    assert status(human_panels.check_mean_pool_gain(lambda p, outcome: 1 / 0)) == "wrong"

    def stub(p, outcome):
        raise NotImplementedError

    assert status(human_panels.check_mean_pool_gain(stub)) == "not answered"


def test_13_adjusted_entry_by_hand():
    # the lesson's hand example: question 2 is 0.20 harder than question 1, so question 1 is 0.10 easier than the
    # average item; d's 0.07 there is worth 0.17 (index 100 * (1 - sqrt(0.17)) = 58.77), behind b 0.10 and a 0.14
    hand = pd.DataFrame({"entry": ["a", "a", "c", "c", "b"], "question_id": [1, 2, 1, 2, 2],
                         "brier": [0.04, 0.24, 0.10, 0.30, 0.20], "question_type": "dataset"})
    right = {"adjusted Brier": 0.17, "Brier Index": 58.77, "rank after adjustment": 3}
    assert human_panels.check_adjusted_entry(right, hand).right
    raw = human_panels.check_adjusted_entry({"adjusted Brier": 0.07, "Brier Index": 73.54, "rank after adjustment": 1}, hand)
    assert raw.status == "wrong" and "3 of 3 wrong" in raw.message
    assert status(human_panels.check_adjusted_entry({**right, "Brier Index": 59.2}, hand)) == "wrong"   # outside ±0.3
    assert status(human_panels.check_adjusted_entry(dict.fromkeys(right), hand)) == "not answered"


def test_13_checks_on_the_lesson_data():
    ns = lesson_state("13_human_panels", "hand = pd.DataFrame")
    # max 0.1409 against mean 0.1137 on the 549 items (README's panel figures; solution 1)
    assert human_panels.check_max_pool({"Brier of max minus Brier of mean": 0.0271, "where max loses": "resolved No"},
                                       ns["members"]).right
    assert human_panels.check_adjusted_entry({"adjusted Brier": 0.17, "Brier Index": 58.77, "rank after adjustment": 3},
                                             ns["hand"]).right


# --- 14 pooling distributions --------------------------------------------------------------------------

def test_14_pool_widths_by_the_normal_quantiles():
    # quantile average: N(0.5, 0.04), width 2 * 1.6449 * 0.04 = 0.1316; linear pool: member a's 10% point
    # 0.35 - 1.2816 * 0.04 = 0.2987 to member b's 90% point 0.7013, width 0.4025 (the other member adds ~1e-14)
    right = {"linear pool": 0.4025, "quantile average": 0.1316}
    assert pooling_distributions.check_pool_widths(right).right
    swapped = pooling_distributions.check_pool_widths({"linear pool": 0.1316, "quantile average": 0.4025})
    assert swapped.status == "wrong" and "2 of 2 wrong" in swapped.message and "mixture" in swapped.message
    assert status(pooling_distributions.check_pool_widths({**right, "linear pool": 0.42})) == "wrong"    # outside ±0.01
    assert status(pooling_distributions.check_pool_widths({"linear pool": None, "quantile average": None})) == "not answered"


def test_14_rps_function_against_hand_values():
    def rps(p, outcome):
        cum = np.cumsum(p)[:-1]
        return float(((cum - (np.arange(len(p)) >= outcome)[:-1]) ** 2).sum() / (len(p) - 1))

    # by hand: [0.6, 0.1, 0.1, 0.1, 0.1] with the last option: (0.36 + 0.49 + 0.64 + 0.81) / 4 = 0.575
    assert rps(np.array([0.6, 0.1, 0.1, 0.1, 0.1]), 4) == pytest.approx(0.575)
    assert pooling_distributions.check_rps_function(rps).right
    summed = pooling_distributions.check_rps_function(
        lambda p, o: float(((np.cumsum(p) - (np.arange(len(p)) >= o)) ** 2).sum()))
    assert summed.status == "wrong" and "divide by k - 1" in summed.message           # scoringrules' unnormalised sum
    brier = pooling_distributions.check_rps_function(lambda p, o: float(((p - np.eye(len(p))[o]) ** 2).sum()))
    assert brier.status == "wrong"                                                      # the Brier score is not the RPS

    def stub(p, outcome):
        raise NotImplementedError

    assert status(pooling_distributions.check_rps_function(stub)) == "not answered"


def test_14_projection_by_hand():
    # prices 0.7, 0.5, 0.2 (sum 1.4), the second won: theta = 0.4 / 3; projected 0.5667, 0.3667, 0.0667;
    # group Brier 0.49 + 0.25 + 0.04 = 0.78 before, 0.3211 + 0.4011 + 0.0044 = 0.7267 after
    right = {"group Brier before": 0.78, "group Brier after": 0.7267, "winner after": 0.3667}
    assert pooling_distributions.check_projection(right).right
    # renormalising (p / sum) is not the projection: 0.5, 0.357, 0.143 -> group Brier 0.6837, winner 0.357
    renormalised = pooling_distributions.check_projection({"group Brier before": 0.78, "group Brier after": 0.6837,
                                                           "winner after": 0.5 / 1.4})
    assert renormalised.status == "wrong" and "2 of 3 wrong" in renormalised.message
    wrong = pooling_distributions.check_projection({**right, "winner after": 0.5})       # unchanged price
    assert wrong.status == "wrong" and "too high" in wrong.message and "theta" in wrong.message
    assert status(pooling_distributions.check_projection({k: None for k in right})) == "not answered"
