"""Mutation testing of the harness, report, leakage audit, leaderboard, clusters, methods, combination, registry
and parser modules (issue 18).

Usage (needs the ``dev`` extra, which brings ``mutmut``; not part of ``python -m pytest``)::

    python tests/mutation/mutation.py                        # the nine modules, then the hand mutations
    python tests/mutation/mutation.py --module agent_tools/parsing.py --module benchmarks/protocol/methods.py
    python tests/mutation/mutation.py --known-only           # only the hand mutations (a few minutes)
    python tests/mutation/mutation.py --json mutation.json   # also write the figures as JSON

It prints, per module as it finishes, the mutation score ``detected / (total - reviewed equivalents)`` and
every surviving mutant (function, removed and added line), then whether the current tests catch each
hand-written mutation: issue 18's table, and constants mutmut cannot reach. Figures and timing:
``tests/mutation/baseline.md`` (before issue 18's tests, all modules) and
``tests/mutation/after.md`` (after; the runner takes over an hour under load, the report about 20 minutes;
run them on their own). It runs under ``nice`` (``--nice``, default 10) and prints its CPU time.

How
---
The project (its tracked and untracked, not ignored files) is copied to a scratch folder, so the worktree
is never touched and can be tested meanwhile. For one module at a time, ``mutmut`` (3.x) writes its
mutants into ``mutants/`` of the copy, runs the module's fast related tests (:data:`MODULE_TESTS`) once to
learn which tests call which function and how long each takes, then runs, for each mutant, only the tests
that call the mutated function, fastest first (:func:`pytest_collection_modifyitems`) and stopping at the
first failure, in processes forked from a warm interpreter (``--jobs`` at a time).

Why mutmut: it forks per mutant and runs only the covering tests. ``cosmic-ray`` starts a new test process
per mutant; importing numpy, pandas and pydantic and collecting the tests takes 3 to 9 s here, i.e. hours
for the same mutants.

Blind spot: mutmut 3 mutates code inside functions and methods only, not module-level or class-body code
(constants, dataclass defaults such as :class:`~agent_research.combination.CombinationRule`'s weights).
The :data:`KNOWN_MUTATIONS` phase applies issue 18's table and a set of such constants to the copy one at a
time and runs the module's tests; a change whose text is not found exactly once is reported as not
applicable.

Statuses: ``killed`` and ``timeout`` (the tests hung) are detected; ``survived``, ``no tests`` (no selected
test calls the function) and ``suspicious`` (passed, but far slower) are not. A surviving mutant that cannot
change behaviour (no test could tell it from the original) is listed in :data:`EQUIVALENT` with the reason,
after review, and leaves the denominator.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ["agent_schemas", "agent_providers", "agent_tools", "agent_research", "agent_specialists", "benchmarks"]

#: The modules the runner and the report were split into (issue 30): each is mutated with the tests of the whole.
RUNNER_MODULES = ("benchmarks/run_folder/durable.py", "benchmarks/run_folder/record.py", "benchmarks/harness/runner.py",
                  "benchmarks/harness/session.py", "benchmarks/harness/selection.py", "benchmarks/harness/provider_stack.py",
                  "benchmarks/harness/manifest.py", "benchmarks/harness/records.py")
REPORT_MODULES = ("benchmarks/report/write.py", "benchmarks/report/frame.py", "benchmarks/report/costs.py",
                  "benchmarks/report/audits.py", "benchmarks/report/leaderboard.py", "benchmarks/run_folder/load.py")
RUNNER_TESTS = ["tests/benchmarks/test_durable_files.py", "tests/benchmarks/test_question_selection.py",
                "tests/benchmarks/test_given_members.py",  # the given-ensemble seams of the stack, selection and runner
                "tests/benchmarks/test_harness.py", "tests/benchmarks/test_runner.py", "tests/benchmarks/test_validity.py",
                *(f"tests/benchmarks/test_run_folder.py::{t}" for t in (
                    "test_a_question_whose_pipeline_raises_is_a_failed_record_and_the_run_goes_on",
                    "test_a_failed_append_stops_the_run_cleanly_and_resume_finishes_it",
                    "test_retry_failed_replaces_failed_records_and_keeps_them_aside",
                    "test_retry_failed_needs_resume")),
                # the cost cap, the session's accounting, shards and batch mode (issue 14's code in the runner)
                "tests/scale/test_cost_cap_and_shards.py",
                *(f"tests/scale/test_batch.py::{t}" for t in (
                    "test_batch_mode_says_clearly_that_other_providers_have_none",
                    "test_batch_mode_puts_each_adapter_behind_the_run_s_one_collector_and_no_rate_limiter")),
                *(f"tests/scale/test_cli_scale.py::{t}" for t in (
                    "test_bad_scale_options_are_one_line_errors_and_write_nothing",
                    "test_max_cost_with_a_free_provider_runs_to_the_end_and_records_the_spend"))]

#: Module -> its fast related tests (files or node ids). The slow SIGKILL/resume subprocess test is left out.
MODULE_TESTS: dict[str, list[str]] = {
    **dict.fromkeys(REPORT_MODULES, ["tests/benchmarks/test_report_tables.py"]),
    **dict.fromkeys(RUNNER_MODULES, RUNNER_TESTS),
    "benchmarks/protocol/leakage.py": ["tests/benchmarks/test_leakage.py", "tests/benchmarks/test_validity.py"],
    "benchmarks/scoring/ranking.py": ["tests/benchmarks/test_ranking_and_intervals.py", "tests/benchmarks/test_leaderboard.py"],
    "benchmarks/protocol/clusters.py": ["tests/benchmarks/test_ranking_and_intervals.py", "tests/benchmarks/test_clusters.py"],
    "benchmarks/protocol/methods.py": ["tests/benchmarks/test_methods.py", "tests/benchmarks/test_leakage.py",
                 "tests/benchmarks/test_runner.py"],
    "agent_research/combination.py": ["tests/research/test_combination.py", "tests/research/test_pipeline.py",
                         "tests/research/test_config.py"],
    "agent_providers/registry.py": ["tests/providers/test_registry.py", "tests/providers/test_retry.py",
                       "tests/providers/test_missing_dependencies.py", "tests/providers/test_credentials.py"],
    "agent_tools/parsing.py": ["tests/tools/test_parsing_values.py", "tests/tools/test_parsing.py",
                  "tests/tools/test_parsing_candidates.py", "tests/research/test_pipeline.py", "tests/specialists"],
}
#: Slow tests left out (the runner's code they reach is covered by faster ones): a SIGKILL/resume subprocess, and
#: the shard test that builds three reports (the shard selection itself: ``test_a_shard_runs_exactly_its_questions...``).
DESELECT = ["tests/benchmarks/test_runner.py::test_sigkill_then_resume_equals_uninterrupted_run",
            "tests/scale/test_cost_cap_and_shards.py::test_shards_partition_the_questions_and_leaderboard_merges_them_into_the_unsharded_report"]

DETECTED = {"killed", "timeout", "segfault", "caught by type check"}
UNDETECTED = {"survived", "no tests", "suspicious"}


@dataclass(frozen=True)
class Equivalent:
    """A reviewed surviving mutant that cannot change behaviour: its module, function and mutated line."""

    module: str
    function: str
    mutated_line: str
    why: str


_BLEND_AT_ZERO = ("a weight is in [0, 1] and a probability is finite: at w = 0 the blend (1 - 0) * p + 0 * x is p exactly, "
                  "so blending also at w = 0 gives the same value (the step's status is decided apart)")
_VALUE_NONE_DEFAULT = "value=None is the error's default (ReconcileError drops None details)"
_ENSURE_ASCII_NONE = "json reads ensure_ascii as a truth value: None is False"
_VISIBLE_TEXT = ("the visible text is only searched for spellings of a date, which hold neither a newline nor 'XX'")
_CODEC_CASE = "codec names are case-insensitive"
_FIRST_PIECE = "the first piece of str.split does not depend on maxsplit (1, 2 or none)"
_FIRST_MOST_COMMON = ("the first of most_common(n) is the first of most_common(1) for any n >= 1 or None (both order by "
                      "count, ties in first-seen order)")
_LAST_BLANK = ("the last piece of split(b'\\n') has no newline after it: counting one for it when it is blank only makes "
               "good_bytes len(raw) + 1 where it was len(raw), and good_bytes is only compared with len(raw) by <")

#: Reviewed equivalent mutants: no test can tell them from the original, the behaviour is identical.
EQUIVALENT: list[Equivalent] = [
    *(Equivalent("agent_research/combination.py", "CombinationRule.steps",
                 f"new = (1 - w) * p + w * {who}.p_yes if {cond} else p", _BLEND_AT_ZERO)
      for who in ("debate", "supervisor") for cond in ("(w > 0) or True", "w >= 0")),
    *(Equivalent("benchmarks/protocol/leakage.py", "audit_prompts", f"visible = question.visible(show_crowd={v})",
                 "the fields read from the visible question (text, background, criteria, value-at-freeze explanation, "
                 "scheduled close) do not depend on show_crowd, which only adds the crowd probability")
      for v in ("None", "False")),
    Equivalent("benchmarks/protocol/leakage.py", "audit_prompts",
               'visible_text = "XX\\nXX".join(str(v) for v in (visible.text, visible.background, visible.resolution_criteria,',
               _VISIBLE_TEXT + ": no match can span a joint whatever the separator"),
    Equivalent("benchmarks/protocol/leakage.py", "audit_prompts", 'visible.freeze_value_explanation or "XXXX") if v)',
               _VISIBLE_TEXT + ": a placeholder for an absent explanation matches none"),
    Equivalent("benchmarks/protocol/clusters.py", "one_pattern",
               "return (shared >= MIN_SHARED_WORDS and shared > MIN_SHARED_FRACTION * max(len(wa), len(wb))",
               "shared == 0.4 * n (n words in the longer text) with shared >= 5 and a span n - shared <= 8 needs n in "
               "[12.5, 13.3] and a multiple of 5: no text is at the bound, so > and >= agree (with the current constants)"),
    Equivalent("benchmarks/protocol/clusters.py", "sibling_clusters",
               'first = by_close[(q.source, q.scheduled_close_date)].setdefault("XX XX".join(q.text.split()), q.cluster_id)',
               "another separator maps equal texts to equal keys and different to different, and one_pattern then splits "
               "the keys into words that are equal or differ exactly where the original words do"),
    # runner (reviewed from the partial run of 2026-12-01, see tests/mutation/after.md)
    *(Equivalent("benchmarks/run_folder/record.py", "failure_reason",
                 f"top = next(e for e in member_errors if e.type == counts.most_common({n})[0][0])",
                 _FIRST_MOST_COMMON) for n in ("None", "2")),
    # runner (reviewed from the full run of 2026-12-01 on main a1a85ee, see tests/mutation/after.md)
    Equivalent("benchmarks/run_folder/durable.py", "write_json_atomic",
               "write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=None, default=str))", _ENSURE_ASCII_NONE),
    Equivalent("benchmarks/run_folder/durable.py", "write_text_atomic", 'with open(tmp, "w", encoding="UTF-8") as fh:', _CODEC_CASE),
    Equivalent("benchmarks/harness/runner.py", "BenchmarkRunner.arun",
               'recorded = json.loads(manifest_path.read_text(encoding="UTF-8")).get("question_ids")', _CODEC_CASE),
    Equivalent("benchmarks/harness/runner.py", "BenchmarkRunner.cost_cap",
               'spend = json.loads(manifest_path.read_text(encoding="UTF-8")).get("spend") if manifest_path.exists() else None',
               _CODEC_CASE),
    Equivalent("benchmarks/harness/session.py", "RunSession.__init__",
               'previous = json.loads(self.manifest_path.read_text(encoding="UTF-8")) if self.manifest_path.exists() else {}',
               _CODEC_CASE),
    *(Equivalent("benchmarks/run_folder/durable.py", "read_results", f"good_bytes += len(line) + {alt}", _LAST_BLANK)
      for alt in ("(1 if (i < len(lines) - 1) or True else 0)", "(1 if i <= len(lines) - 1 else 0)",
                  "(1 if i < len(lines) + 1 else 0)", "(1 if i < len(lines) - 1 else 1)")),
    Equivalent("benchmarks/run_folder/durable.py", "read_results", "if good_bytes <= len(raw):",
               "good_bytes == len(raw) when the file ends with a newline: the extra branch parses an empty tail, which "
               "fails, and truncates the file to its own length (no change)"),
    *(Equivalent("benchmarks/harness/provider_stack.py", "ProviderStack.rate_limits_for", f"prefix = spec.split({args})[0]", _FIRST_PIECE)
      for args in ('"/", ', '"/", 2')),
    *(Equivalent("benchmarks/harness/selection.py", "_untrained", f'return spec.split({args})[0] in ("scripted", "sim")', _FIRST_PIECE)
      for args in ('"/", ', '"/", 2')),
    *(Equivalent("benchmarks/harness/session.py", "RunSession.summary", f'top = Counter(r.split(":", 1)[0] for r in failed_now).most_common({n})',
                 _FIRST_MOST_COMMON + "; only top[0] is read") for n in ("None", "2")),
    *(Equivalent("benchmarks/harness/session.py", "RunSession.summary", line, _FIRST_PIECE) for line in (
        'top = Counter(r.split(":", )[0] for r in failed_now).most_common(1)',
        'top = Counter(r.split(":", 2)[0] for r in failed_now).most_common(1)',
        'top_reason = next((r for r in failed_now if r.split(":", )[0] == top[0][0]), None) if top else None',
        'top_reason = next((r for r in failed_now if r.split(":", 2)[0] == top[0][0]), None) if top else None')),
    Equivalent("benchmarks/harness/session.py", "RunSession.summary",
               'top_reason = next((r for r in failed_now if r.split(":", 1)[0] == top[0][0]), None) if (top) or True else None',
               "top is empty only when failed_now is: the generator then never reads top[0] and next gives None"),
    Equivalent("benchmarks/harness/session.py", "RunSession.summary",
               'top_reason = next((r for r in failed_now if r.split(":", 1)[0] == top[0][0]), ) if top else None',
               "top[0][0] is the type of a reason in failed_now, so a match exists and next's default is never used"),
    *(Equivalent("benchmarks/harness/runner.py", "BenchmarkRunner.cost_cap",
                 f"unpriced = [s for s in self.stack.model_specs() if cost_usd(s, TokenUsage({usage})) is None]",
                 "a probe of whether the model has a price: cost_usd is None only for an unknown price or unknown token "
                 "counts, and every count here is known (1 or 2 tokens or calls, or calls at its default)")
      for usage in ("input_tokens=1, output_tokens=1, ", "input_tokens=2, output_tokens=1, calls=1",
                    "input_tokens=1, output_tokens=2, calls=1", "input_tokens=1, output_tokens=1, calls=2")),
    *(Equivalent("benchmarks/harness/selection.py", "QuestionSelection.shard",
                 f'"config_digest": config_digest(self.config.model_dump(mode={m}))}}',
                 "config_digest serialises with json.dumps(default=str), and the config's only non-JSON values are dates, "
                 "whose str() is their JSON (ISO) form: the digest is the same as in json mode")
      for m in ("None", '"XXjsonXX"', '"JSON"')),
    Equivalent("benchmarks/harness/session.py", "RunSession.finish",
               "self.cap.finished_costs.append(record_cost(record.model_dump(include=None)))",
               "record_cost reads only the ledger; include={'ledger'} only saves dumping the trace"),
    Equivalent("benchmarks/harness/session.py", "RunSession.finish", "self._write_failed.append(None)",
               "the list is only read as a flag (if self._write_failed:), and [None] is true"),
    *(Equivalent("benchmarks/harness/manifest.py", "RunManifest.content", f"config = self.config.model_dump(mode={m})",
                 "pydantic's python mode keeps dates and nested models as objects, and the manifest is only written by "
                 "write_json_atomic (default=str): the file is byte for byte the same as in json mode")
      for m in ("None", '"XXjsonXX"', '"JSON"')),
    # report
    Equivalent("benchmarks/report/write.py", "write_report", "table = rank_methods(scored, baseline=base_label, max_imputed=max_imputed,",
               "rank_methods' default method_col is 'label'"),
    Equivalent("benchmarks/report/write.py", "write_report",
               'raise DataValidationError("no scorable forecasts (need p_yes and a resolved outcome)", field="outcome", )',
               _VALUE_NONE_DEFAULT),
    Equivalent("benchmarks/report/leaderboard.py", "markdown_table", 'return df.to_markdown(index=None, floatfmt=".4f") if not df.empty else "(none)"',
               "tabulate hides the index for showindex=None as for False (checked: the same Markdown)"),
    Equivalent("benchmarks/report/write.py", "write_report", 'table = table.merge(attempts, left_on="label", right_index=True, )',
               "every label of the table is in attempts (scored rows are a subset of the run's rows), and an inner merge "
               "keeps the left order as a left merge does"),
    *(Equivalent("benchmarks/report/write.py", "write_report",
                 f'table = table.merge(costs[["label", "tokens_per_question", "extra_tokens_per_question", "cost_usd"]], {on}how="left")',
                 "label is the only column the leaderboard and these cost columns share, so merging on the common columns is "
                 "merging on label") for on in ("on=None, ", "")),
    Equivalent("benchmarks/report/write.py", "write_report", "effect = cost_effectiveness(scored, costs, n_resamples=n_resamples, seed=seed)",
               "cost_effectiveness's default reference is 'mean'"),
    Equivalent("benchmarks/run_folder/load.py", "load_run", 'return LoadedRun(str(run_dir), json.loads(mpath.read_text(encoding="UTF-8")), records)',
               "codec names are case-insensitive"),
    *(Equivalent("benchmarks/report/frame.py", "long_frame", f'df = df.sort_values(["question_id"], {kind}).reset_index(drop=True)',
                 "question_id holds strings, which pandas 3 with pyarrow (the installed stack) stores as Arrow strings: their "
                 "argsort is Arrow's stable sort_indices and ignores kind (checked: 'XXstableXX' is not even refused). "
                 "kind='stable' stays for pandas 2, where the column is an object array sorted by numpy")
      for kind in ("kind=None", "", 'kind="XXstableXX"', 'kind="STABLE"')),
    Equivalent("benchmarks/report/audits.py", "contamination_split",
               "after = dates > cutoff if (cutoff is not None) or True else pd.Series(False, index=g.index)",
               "without a known cutoff, pandas compares the object column of dates with None as all False (checked), the "
               "same all-False series the else branch builds"),
    Equivalent("benchmarks/report/write.py", "fitted_lines",
               '"fit_from": [str(p) for p in fit_from], "methods": rows}, ensure_ascii=None))', _ENSURE_ASCII_NONE),
    Equivalent("benchmarks/report/leaderboard.py", "write_leaderboard", "write_text_atomic(csv_path, table.to_csv(index=None))",
               "pandas writes no index column for index=None, as for False (checked: the same CSV text)"),
    # parser
    *(Equivalent("agent_tools/parsing.py", "_segments", line,
                 "adds an empty span (before a quote that starts a span, or at the end after a closing quote): an empty "
                 "span holds no bracket and no comma, and is never the one a repair or bracket count reads")
      for line in ("if i >= seg:", "if seg <= n:")),
    Equivalent("agent_tools/parsing.py", "_candidates", "raw_text=text, field=keys[0], )", _VALUE_NONE_DEFAULT),
    Equivalent("agent_tools/parsing.py", "_decode_at",
               "value, end = json.JSONDecoder(strict=None, object_pairs_hook=hook).raw_decode(text, i)",
               "json's decoder reads strict as a truth value: None is False"),
    Equivalent("agent_tools/parsing.py", "_show", "s = json.dumps(value, ensure_ascii=None, default=repr)", _ENSURE_ASCII_NONE),
    Equivalent("agent_tools/parsing.py", "_decode_at", "return _Span(text[i:], closed=None)",
               "a span's closed is only read as a truth value (if not span.closed, not s.closed), where None and False agree"),
    Equivalent("agent_tools/parsing.py", "parse_forecast",
               'raise ForecastParseError(f"{prob_field} is missing: {text[:200]!r}", raw_text=text, field=prob_field, )',
               _VALUE_NONE_DEFAULT),
    Equivalent("agent_tools/parsing.py", "parse_forecast", "rationale = json.dumps(rationale, ensure_ascii=None)",
               _ENSURE_ASCII_NONE),
    Equivalent("agent_tools/parsing.py", "parse_probability", "explicit_percent = None",
               "explicit_percent is only read as a truth value (or, not), where None and False agree"),
    Equivalent("agent_tools/parsing.py", "parse_probability",
               "if as_percent and not explicit_percent and not x.is_integer() and x < 1.0:",
               "x == 1.0 is an integer, excluded by the previous condition, so < and <= agree"),
]


@dataclass(frozen=True)
class KnownMutation:
    """One hand-written mutation: replace ``find`` (found exactly once) by ``replace`` in ``module``."""

    module: str
    what: str
    find: str
    replace: str
    table: str = "issue 18"


#: Issue 18's table of mutations that survived the tests at the time it was filed, written against the
#: current code (the audit moved to benchmarks/protocol/leakage.py; the parser now checks that candidates agree).
KNOWN_MUTATIONS: list[KnownMutation] = [
    KnownMutation("benchmarks/run_folder/durable.py", "append_jsonl: os.fsync removed",
                  "            fh.write(data)\n            fh.flush()\n            os.fsync(fh.fileno())\n",
                  "            fh.write(data)\n            fh.flush()\n"),
    KnownMutation("agent_tools/parsing.py",
                  "parse_forecast: the first candidate taken, without checking that the candidates agree",
                  "    if max(values) - min(values) > _AGREEMENT_TOLERANCE:\n        raise ForecastParseError(\n"
                  "            f\"the answer gives {len(values)} different probabilities ({', '.join(f'{v:g}' for v in values)}): \"\n"
                  "            \"refusing to pick one\", raw_text=text, field=prob_field, value=values)\n"
                  "    obj = objs[-1]\n    p = values[-1]\n",
                  "    obj = objs[0]\n    p = values[0]\n"),
    KnownMutation("benchmarks/protocol/methods.py", "method rows no longer clipped to [clip_low, clip_high]",
                  "    return None if p is None else min(max(p, lo), hi)\n", "    return p\n"),
    KnownMutation("agent_research/combination.py", "supervisor weight at high confidence 1.0 -> 0.5",
                  '{"high": 1.0, "medium": 0.5, "low": 0.0}', '{"high": 0.5, "medium": 0.5, "low": 0.0}'),
    KnownMutation("agent_providers/registry.py", "auto_provider picks OpenAI over Anthropic when both keys are set",
                  '    if env.get("ANTHROPIC_API_KEY"):\n',
                  '    if env.get("ANTHROPIC_API_KEY") and not env.get("OPENAI_API_KEY"):\n'),
    KnownMutation("benchmarks/harness/selection.py", "contamination filter uses the earliest model cutoff (min instead of max)",
                  "after = max(cutoffs.values())", "after = min(cutoffs.values())"),
    KnownMutation("benchmarks/protocol/leakage.py", "leakage audit never counts late evidence from members (their prompts skipped)",
                  "for call in trace.recorded_calls if call.messages]",
                  'for call in trace.recorded_calls if call.messages and call.role != "forecaster"]'),
    KnownMutation("benchmarks/report/costs.py", "per-method cost table drops the shared ensemble usage",
                  'acc["usage"] = acc["usage"] + ens + extra', 'acc["usage"] = acc["usage"] + extra'),
    # mutmut's blind spot: constants at module and class level
    *(KnownMutation(module, what, find, replace, "module level") for module, what, find, replace in [
        ("benchmarks/protocol/leakage.py", "member evidence in summaries no longer read for dates",
         '    re.compile(rf"^\\s*- evidence: .*\\[[^\\[\\]]*, {_ISO}\\]\\s*$", re.M),\n', ""),
        ("benchmarks/protocol/clusters.py", "MIN_SHARED_WORDS 5 -> 4", "MIN_SHARED_WORDS = 5", "MIN_SHARED_WORDS = 4"),
        ("benchmarks/scoring/ranking.py", "MAX_IMPUTED 0.05 -> 0.2", "MAX_IMPUTED = 0.05", "MAX_IMPUTED = 0.2"),
        ("benchmarks/scoring/ranking.py", "MIN_CLUSTERS_TO_RANK 50 -> 10", "MIN_CLUSTERS_TO_RANK: int = 50", "MIN_CLUSTERS_TO_RANK: int = 10"),
        ("benchmarks/scoring/ranking.py", "a missing answer imputed 0.5 instead of its worst case",
         'f["p_yes"] = 1.0 - pd.to_numeric(f["outcome"]).astype(float)', 'f["p_yes"] = 0.5'),
        ("benchmarks/scoring/ranking.py", "a tie takes the lower rank", "(o[None, :] < v[:, None])", "(o[None, :] <= v[:, None])"),
        ("agent_providers/registry.py", "OpenAI-compatible servers lose the default retry layer",
         'REMOTE_PREFIXES = ("anthropic", "openai", "openai-compatible")', 'REMOTE_PREFIXES = ("anthropic", "openai")'),
        ("agent_tools/parsing.py", "disagreeing probabilities tolerated up to 5 points", "_AGREEMENT_TOLERANCE = 0.005",
         "_AGREEMENT_TOLERANCE = 0.05"),
        ("agent_tools/parsing.py", "any value in an unreadable object taken for a template's placeholder (a broken answer "
         "beside a readable example or draft no longer refused)",
         '_PLACEHOLDER = r"(?:<|\\.\\.\\.|…|null\\b|None\\b|[,}\\]]|$)"', '_PLACEHOLDER = r"(?:.|$)"'),
        ("agent_research/combination.py", "default debate weight 0.5 -> 0.25", "    debate_weight: float = 0.5\n",
         "    debate_weight: float = 0.25\n"),
        ("benchmarks/protocol/methods.py", "min left out of the default methods",
         'AGGREGATION_METHODS = ("mean", "median", "min", "geomean_odds", "extremized")',
         'AGGREGATION_METHODS = ("mean", "median", "geomean_odds", "extremized")'),
    ]),
]


@dataclass
class Mutant:
    name: str
    status: str
    function: str
    removed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)


@dataclass
class ModuleResult:
    module: str
    total: int
    detected: int
    undetected: int
    not_run: int
    equivalent: int
    seconds: float
    survivors: list[Mutant]

    @property
    def score(self) -> float | None:
        """Detected / (total - equivalent - not run), as a fraction; None when nothing ran."""
        denominator = self.total - self.equivalent - self.not_run
        return self.detected / denominator if denominator > 0 else None


def copy_project(dest: Path) -> None:
    """Copy the project's tracked and untracked, not ignored, files to ``dest`` (everything but caches
    and runs when this is not a git checkout)."""
    try:
        listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                   capture_output=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        listed = None
    if listed is None:
        shutil.copytree(ROOT, dest, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".git", "__pycache__", "mutants", "runs", ".pytest_cache"))
        return
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def child_env(copy: Path) -> dict[str, str]:
    """The environment of the test processes: the copy first on the path, no live-API tests."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "FORECAST_RECONCILE_LIVE")}
    env["PYTHONPATH"] = str(copy)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def write_mutmut_config(copy: Path, module: str) -> None:
    """Append the ``[tool.mutmut]`` table for ``module`` to the copy's pyproject.toml (never to the project's)."""
    pyproject = copy / "pyproject.toml"
    text = re.sub(r"\n\[tool\.mutmut\]\n.*", "", pyproject.read_text(encoding="utf-8"), flags=re.S)
    table = {
        "source_paths": PACKAGES,
        "only_mutate": [module],
        "pytest_add_cli_args_test_selection": MODULE_TESTS[module],
        "pytest_add_cli_args": ["-p", "no:cacheprovider", "-p", FASTEST_FIRST_PLUGIN, *[f"--deselect={d}" for d in DESELECT]],
    }
    lines = [f"{k} = {json.dumps(v)}" for k, v in table.items()]
    pyproject.write_text(text.rstrip() + "\n\n[tool.mutmut]\n" + "\n".join(lines) + "\n", encoding="utf-8")


#: This module, loaded as a pytest plugin in mutmut's test runs (:func:`pytest_collection_modifyitems`).
FASTEST_FIRST_PLUGIN = "tests.mutation.mutation"


def pytest_collection_modifyitems(items: list) -> None:
    """pytest hook, active in mutmut's runs only (``-p`` :data:`FASTEST_FIRST_PLUGIN`): a mutant's tests run
    fastest first, by the durations mutmut measured in its clean run (``mutmut-stats.json`` in its working
    folder, ``mutants/``), so that ``-x`` stops at the cheapest test that kills the mutant. mutmut passes the
    tests as an unordered set; a mutant killed only by a fast, focused test would otherwise often wait for
    the slow ones (a whole report each) first. Tests without a recorded duration run last, in their order."""
    stats = Path("mutmut-stats.json")
    if not stats.is_file():  # mutmut's clean run, which records the durations, or a run without mutmut
        return
    durations = json.loads(stats.read_text(encoding="utf-8")).get("duration_by_test", {})
    items.sort(key=lambda item: durations.get(item.nodeid, float("inf")))


def function_of(name: str, module: str) -> str:
    """``benchmarks.harness.runner.x_append_jsonl__mutmut_3`` -> ``append_jsonl``; ``...xǁCombinationRuleǁcombine__mutmut_1``
    -> ``CombinationRule.combine``."""
    prefix = module.removesuffix(".py").replace("/", ".") + "."
    core = re.sub(r"__mutmut_\d+$", "", name.removeprefix(prefix))
    if core.startswith("xǁ"):
        return ".".join(core[2:].split("ǁ"))
    return core.removeprefix("x_")


def mutmut(copy: Path, *args: str, log: Path | None = None) -> str:
    """Run ``python -m mutmut <args>`` in the copy; its output (or the log's tail on failure)."""
    out = open(log, "ab") if log else subprocess.PIPE  # noqa: SIM115 - closed below
    try:
        proc = subprocess.run([sys.executable, "-m", "mutmut", *args], cwd=copy, env=child_env(copy),
                 stdout=out, stderr=subprocess.STDOUT)
    finally:
        if log:
            out.close()
    if proc.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:] if log else (proc.stdout or b"").decode(errors="replace")
        raise SystemExit(f"mutmut {' '.join(args)} failed with exit code {proc.returncode}:\n{tail}")
    return "" if log else proc.stdout.decode(errors="replace")


_SHOW_ALL = """
import sys
import mutmut.__main__ as cli
for name in sys.stdin.read().split():
    print("@@mutant " + name, flush=True)
    cli.show.callback(name)
"""


def mutant_diffs(copy: Path, names: list[str]) -> dict[str, str]:
    """``mutmut show`` for each mutant, in one process (the command's callback; one process per mutant
    when that fails, e.g. after a mutmut release renames it)."""
    if not names:
        return {}
    proc = subprocess.run([sys.executable, "-c", _SHOW_ALL], cwd=copy, env=child_env(copy), input="\n".join(names),
                          capture_output=True, text=True)
    if proc.returncode == 0:
        out: dict[str, str] = {}
        for chunk in proc.stdout.split("@@mutant ")[1:]:
            name, _, diff = chunk.partition("\n")
            out[name.strip()] = diff
        if set(out) == set(names):
            return out
    return {n: mutmut(copy, "show", n) for n in names}


def is_equivalent(module: str, m: Mutant) -> bool:
    return any(e.module == module and e.function == m.function and e.mutated_line.strip() in [a.strip() for a in m.added]
               for e in EQUIVALENT)


def run_module(copy: Path, module: str, jobs: int) -> ModuleResult:
    """Mutation-test one module in the copy; see the module docstring."""
    t0 = time.perf_counter()
    shutil.rmtree(copy / "mutants", ignore_errors=True)
    write_mutmut_config(copy, module)
    log = copy / f"mutmut-{module.replace('/', '_')}.log"
    mutmut(copy, "run", "--max-children", str(jobs), log=log)
    statuses = {}
    for line in mutmut(copy, "results", "--all", "true").splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and "__mutmut_" in name:
            statuses[name] = status
    mutants = [Mutant(n, s, function_of(n, module)) for n, s in statuses.items()]
    survivors = [m for m in mutants if m.status in UNDETECTED]
    diffs = mutant_diffs(copy, [m.name for m in survivors])
    for m in survivors:
        for line in diffs.get(m.name, "").splitlines():
            if line.startswith("-") and not line.startswith("---"):
                m.removed.append(line[1:].strip())
            elif line.startswith("+") and not line.startswith("+++"):
                m.added.append(line[1:].strip())
    equivalent = [m for m in survivors if is_equivalent(module, m)]
    return ModuleResult(
        module=module, total=len(mutants), detected=sum(m.status in DETECTED for m in mutants),
        undetected=len(survivors) - len(equivalent),
        not_run=sum(m.status not in DETECTED | UNDETECTED for m in mutants), equivalent=len(equivalent),
        seconds=time.perf_counter() - t0, survivors=[m for m in survivors if m not in equivalent],
    )


def tests_pass(copy: Path, tests: list[str], timeout_s: float = 900) -> int:
    """Exit code of the module's tests in the copy (stop at the first failure)."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *[f"--deselect={d}" for d in DESELECT], *tests]
    try:
        return subprocess.run(cmd, cwd=copy, env=child_env(copy), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                 timeout=timeout_s).returncode
    except subprocess.TimeoutExpired:
        return -1


def run_known(copy: Path, modules: list[str]) -> list[dict[str, str]]:
    """Apply each :data:`KNOWN_MUTATIONS` entry of ``modules`` to the copy, run the module's tests, restore."""
    rows = []
    clean_ok: dict[str, bool] = {}
    for km in KNOWN_MUTATIONS:
        if km.module not in modules:
            continue
        path = copy / km.module
        original = path.read_text(encoding="utf-8")
        n = original.count(km.find)
        if n != 1:
            rows.append({"module": km.module, "mutation": km.what, "result": f"not applicable (text found {n} times)",
                         "table": km.table})
            continue
        if km.module not in clean_ok:
            clean_ok[km.module] = tests_pass(copy, MODULE_TESTS[km.module]) == 0
        if not clean_ok[km.module]:
            rows.append({"module": km.module, "mutation": km.what, "result": "not run (the unmutated tests fail)",
                         "table": km.table})
            continue
        try:
            path.write_text(original.replace(km.find, km.replace), encoding="utf-8")
            code = tests_pass(copy, MODULE_TESTS[km.module])
        finally:
            path.write_text(original, encoding="utf-8")
        result = {0: "SURVIVED", 1: "caught"}.get(code, "caught (tests errored)" if code in (2, 3, 4) else f"exit {code}")
        rows.append({"module": km.module, "mutation": km.what, "result": result, "table": km.table})
    return rows


def print_module(r: ModuleResult) -> None:
    score = "n/a" if r.score is None else f"{100 * r.score:.1f}%"
    print(f"\n## {r.module}: {score} ({r.detected} detected / {r.total - r.equivalent - r.not_run} non-equivalent; "
          f"{r.undetected} undetected, {r.equivalent} equivalent, {r.not_run} not run; {r.seconds:.0f} s)")
    for m in r.survivors:
        removed = " | ".join(m.removed) or "?"
        added = " | ".join(m.added) or "?"
        print(f"- [{m.status}] {m.function} ({m.name.rsplit('__', 1)[-1]}): {removed}  ->  {added}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--module", action="append", choices=sorted(MODULE_TESTS), help="module to test (repeat; default all)")
    ap.add_argument("--jobs", type=int, default=2, help="mutants tested at once (default 2)")
    ap.add_argument("--nice", type=int, default=10, help="niceness added to this process and its children (default 10)")
    ap.add_argument("--known-only", action="store_true", help="only apply issue 18's table of mutations")
    ap.add_argument("--skip-known", action="store_true", help="skip issue 18's table of mutations")
    ap.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temporary folder, removed)")
    ap.add_argument("--json", type=Path, help="also write the results to this JSON file")
    ap.add_argument("--fail-under", type=float, help="exit 1 when a module scores below this percentage")
    args = ap.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # each module's result shows when it finishes, also in a log file
    if args.nice:
        os.nice(args.nice)
    modules = args.module or list(MODULE_TESTS)
    work = args.keep or Path(tempfile.mkdtemp(prefix="mutation-"))
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    try:
        copy_project(work)
        results = []
        for module in [] if args.known_only else modules:
            results.append(run_module(work, module, args.jobs))
            print_module(results[-1])  # as each module finishes: a full run takes a while
        known = [] if args.skip_known else run_known(work, modules)
        for table, title in (("issue 18", "Issue 18 table"), ("module level", "Module-level constants (mutmut's blind spot)")):
            rows = [row for row in known if row["table"] == table]
            if rows:
                print(f"\n## {title}: mutations applied by hand")
                for row in rows:
                    print(f"- {row['result']}: {row['module']}: {row['mutation']}")
        print("\n| module | score | detected | non-equivalent | surviving |")
        print("|---|---|---|---|---|")
        for r in results:
            score = "n/a" if r.score is None else f"{100 * r.score:.1f}%"
            print(f"| {r.module} | {score} | {r.detected} | {r.total - r.equivalent - r.not_run} | {r.undetected} |")
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_s = used.ru_utime + used.ru_stime
        print(f"\nwall time {time.perf_counter() - t0:.0f} s with --jobs {args.jobs}; CPU time of the test processes "
              f"{cpu_s:.0f} s, i.e. about {cpu_s / max(args.jobs, 1) / 60:.0f} minutes on {args.jobs} idle cores")
        if args.json:
            args.json.write_text(json.dumps({"modules": [{**asdict(r), "score": r.score} for r in results],
                                "known_mutations": known}, indent=1), encoding="utf-8")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if args.fail_under is not None and any(r.score is not None and 100 * r.score < args.fail_under for r in results):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
