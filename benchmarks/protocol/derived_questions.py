"""Build the bundled numeric and multiple-choice questions from the bundled ForecastBench binary table.

Run ``python -m benchmarks.protocol.derived_questions [--out DIR] [--check]``: it reads only
``agent_tools/data/forecastbench/fb_questions.parquet`` and writes four files (deterministic: the same input
gives the same bytes of data; ``--check`` rebuilds in memory and compares with the bundled files):

* ``fb_numeric_questions.parquet`` / ``fb_numeric_outcomes.parquet``
* ``fb_choice_questions.parquet`` / ``fb_choice_outcomes.parquet``

Questions and outcomes are separate files joined on ``qid``: a forecaster-side reader of the questions file
never reads an outcome. ``DATA_CARD_KINDS.md`` next to them documents the columns and counts.

Numeric questions: a series' latest value at a later freeze date
-----------------------------------------------------------------
Every ForecastBench dataset question (FRED, yfinance, DBnomics, Wikipedia, ACLED) carries the series' last
observed value at its round's **freeze date** (``freeze_value_raw``, about 10 days before the round's due
date). A series (``source``, ``source_question_id``) appears in up to 23 rounds, so for two rounds ``A`` and
``B`` of the same series we ask, on ``A``'s due date, "what will the latest value be as of ``B``'s freeze
date?" and resolve it with ``B``'s freeze value. Nothing knowable after the forecast date enters a question:

1. **Forecast date** = ``A``'s ``forecast_due_date``, the round's information cutoff (as for the binary
   questions). The question shows ``A``'s freeze value and freeze date (before the due date).
2. **Target** = ``B``'s freeze date, and only pairs with ``B.freeze_date > A.forecast_due_date`` (strictly
   after the forecast date; every pair of distinct rounds meets it, checked anyway).
3. **Range** (:func:`numeric_range`), from ``A``'s value, the series' values observed up to ``A``'s freeze and
   the days to the target only: centred on ``A``'s value, log-scaled for positive quantities (prices, ratings),
   wider for longer horizons, open bounds except ACLED's closed 0 (its values are counts and averages of counts).
4. **Stale series are dropped by what was observable on the forecast date**: a pair is dropped when the series
   was observed at two or more rounds up to ``A`` and its value never changed (a ranking that does not move,
   an ACLED country without events), never by the outcome. A value that is the same at ``B`` as at ``A``
   (a monthly series not yet re-released) stays: that is part of forecasting it.
5. Non-numeric freeze values are skipped; a series' text is ``A``'s ``freeze_value_explanation``.

Multiple-choice questions: sibling markets of one event
-------------------------------------------------------
Market questions of one round and source with the same scheduled close whose first lines differ in one short
span only (:func:`sibling_groups_of`: at most 6 tokens each side, the shared prefix and suffix >= 60% of the
shorter question) form a candidate group of siblings ("Will <team> win the NBA Western Conference Finals?").
A group is kept when its shared template names a single winner (:data:`SINGLE_WINNER` and not
:data:`NOT_EXCLUSIVE`: "win", "be the top ...", "gross most", never "top 4" or "be nominated") and exactly one
of its members resolved Yes; its options are the members (the varying spans, e.g. team names), its outcome
the index of the member that resolved Yes, its crowd forecast the members' prices at freeze renormalised
(the raw prices are kept for the coherence study). Caveat (data card): keeping groups with exactly one Yes
among the *bundled* siblings selects on the outcome when an event had siblings that were not bundled.
"""

from __future__ import annotations

import argparse
import io
import math
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from agent_tools.datasets import forecastbench_dir, load_forecastbench_questions
from benchmarks.protocol.clusters import shared_ends

__all__ = [
    "CHOICE_OUTCOMES_FILE", "CHOICE_QUESTIONS_FILE", "NOT_EXCLUSIVE", "NUMERIC_OUTCOMES_FILE", "NUMERIC_QUESTIONS_FILE",
    "SINGLE_WINNER", "build_choice", "build_numeric", "numeric_range", "sibling_groups_of",
]

NUMERIC_QUESTIONS_FILE = "fb_numeric_questions.parquet"
NUMERIC_OUTCOMES_FILE = "fb_numeric_outcomes.parquet"
CHOICE_QUESTIONS_FILE = "fb_choice_questions.parquet"
CHOICE_OUTCOMES_FILE = "fb_choice_outcomes.parquet"

#: Sources whose values are counts (or averages of counts): a closed lower bound at 0.
NON_NEGATIVE_SOURCES = frozenset({"acled"})
#: Sources whose values are positive by definition (market prices; Elo ratings, rankings): a log-scaled range.
#: Not DBnomics (temperatures in degrees Celsius cross 0), ACLED (counts can be 0), FRED (rates and spreads can
#: turn negative or 0): decided by what the series are, never by their later values.
LOG_SCALE_SOURCES = frozenset({"yfinance", "wikipedia"})
#: Templates of sibling questions that name a single winner (one member of the event at most resolves Yes).
SINGLE_WINNER = re.compile(
    r"\bwin\b|\bwinner\b|\bbe the (top|next|most|best)\b|\bhave the (top|best)\b|\bgross most\b|\blead the\b"
    r"|\bfirst\b|\bbest domestic opening\b|\bnext prime minister\b", re.I)
#: Templates that several members can satisfy at once (never a multiple-choice question).
NOT_EXCLUSIVE = re.compile(r"\btop \d+\b|\bnominated\b|\bmore authoritarian\b|\breach \$|\bdip\b|\bat least\b"
                           r"|\bmore than\b|\bless than\b|\bbetween\b|\babove\b|\bbelow\b", re.I)
#: Most tokens in the span that differs between two siblings, and least share of the shorter question the
#: shared prefix and suffix cover.
MAX_SPAN_TOKENS = 6
MIN_SHARED = 0.6

_NUMERIC_QUESTION = ("What will the value described below be as of {target} (its latest value released on or "
                     "before that date)? {explanation}")
_NUMERIC_CRITERIA = ("Resolves to the series' latest value as of {target}, as ForecastBench recorded it when it froze "
                     "its question set of that date (freeze value). Series: {url}")


def numeric_range(value: float, history: np.ndarray, days: int, source: str) -> dict[str, object]:
    """The range of a numeric question, from what is known on its forecast date.

    Parameters
    ----------
    value : float
        The series' value at the forecast round's freeze date (the centre of the range).
    history : ndarray of shape (n,)
        The series' values at every round whose freeze date is on or before that one (``value`` included).
    days : int
        Days from the forecast date to the target date (> 0).
    source : str
        The ForecastBench source: :data:`LOG_SCALE_SOURCES` get a log scale, :data:`NON_NEGATIVE_SOURCES` a
        closed lower bound at 0.

    Returns
    -------
    dict
        ``lower``, ``upper``, ``open_lower``, ``open_upper``, ``log_scale`` of a
        :class:`~agent_schemas.kinds.NumericSpec`. With ``h = 0.1 + 0.5 sqrt(days / 365)`` (0.2 at two weeks,
        0.6 at a year): for a source of :data:`LOG_SCALE_SOURCES` whose observed values are all > 0, the log-scaled range ``[value e^-h, value e^h]``
        (e.g. -18% to +22% at two weeks); else the linear range ``value +- max(|value|, spread of history, 1) * 2h``,
        its lower end at a closed 0 for a non-negative source. Open bounds otherwise: the outcome may fall outside.
    """
    h = 0.1 + 0.5 * math.sqrt(days / 365.0)
    if source in LOG_SCALE_SOURCES and value > 0 and (history > 0).all():
        return {"lower": value * math.exp(-h), "upper": value * math.exp(h), "open_lower": True, "open_upper": True,
                "log_scale": True}
    spread = float(history.max() - history.min()) if history.size else 0.0
    half = max(abs(value), spread, 1.0) * 2 * h
    lower, open_lower = value - half, True
    if source in NON_NEGATIVE_SOURCES and lower < 0:
        lower, open_lower = 0.0, False
    return {"lower": lower, "upper": value + half, "open_lower": open_lower, "open_upper": True, "log_scale": False}


def _series_rounds(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (series, round): the freeze value, dates and texts of the dataset questions."""
    d = df[df["question_type"] == "dataset"].copy()
    d["value"] = pd.to_numeric(d["freeze_value_raw"], errors="coerce")
    d = d[np.isfinite(d["value"])]
    d["freeze_date"] = pd.to_datetime(d["freeze_datetime"], utc=True).dt.tz_convert(None).dt.normalize()
    d["due_date"] = pd.to_datetime(d["forecast_due_date"])
    d = d.sort_values(["source", "source_question_id", "round", "qid"], kind="mergesort")
    return d.drop_duplicates(["source", "source_question_id", "round"], keep="first")[
        ["source", "source_question_id", "round", "value", "freeze_value_raw", "freeze_date", "due_date",
         "freeze_value_explanation", "url", "source_intro"]].reset_index(drop=True)


def build_numeric(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, int]]:
    """The numeric questions and outcomes (module docstring) and counts of what was kept and dropped."""
    s = _series_rounds(df)
    questions, outcomes = [], []
    counts = {"series_with_2_rounds": 0, "pairs": 0, "stale_dropped": 0, "not_after_forecast_date": 0, "kept": 0}
    for (source, sqid), g in s.groupby(["source", "source_question_id"], sort=True):
        g = g.sort_values("freeze_date", kind="mergesort").reset_index(drop=True)
        if len(g) < 2:
            continue
        counts["series_with_2_rounds"] += 1
        values = g["value"].to_numpy()
        for a in range(len(g)):
            history = values[: a + 1]
            stale = a >= 1 and bool(np.all(history == history[0]))
            ra = g.iloc[a]
            for b in range(a + 1, len(g)):
                rb = g.iloc[b]
                counts["pairs"] += 1
                if stale:
                    counts["stale_dropped"] += 1
                    continue
                if not rb["freeze_date"] > ra["due_date"]:
                    counts["not_after_forecast_date"] += 1
                    continue
                target = rb["freeze_date"].date().isoformat()
                forecast_date = ra["due_date"].date()
                days = (rb["freeze_date"].date() - forecast_date).days
                rng = numeric_range(float(ra["value"]), history, days, source)
                explanation = " ".join(str(ra["freeze_value_explanation"]).split())
                qid = f"fbnum|{source}|{sqid}|{forecast_date.isoformat()}|{target}"
                questions.append({
                    "qid": qid, "source": source, "source_question_id": sqid, "round": ra["round"],
                    "target_round": rb["round"],
                    "question": _NUMERIC_QUESTION.format(target=target, explanation=explanation),
                    "resolution_criteria": _NUMERIC_CRITERIA.format(target=target, url=ra["url"]),
                    "background": _text(ra["source_intro"]),
                    "url": ra["url"], "forecast_date": forecast_date.isoformat(), "target_date": target,
                    "horizon_days": days, "freeze_date": ra["freeze_date"].date().isoformat(),
                    "freeze_value": float(ra["value"]), "freeze_value_raw": str(ra["freeze_value_raw"]),
                    "freeze_value_explanation": explanation, **rng, "unit": "",
                    "n_observed_rounds": a + 1,
                })
                outcomes.append({"qid": qid, "outcome": float(rb["value"]), "resolution_date": target})
                counts["kept"] += 1
    q = pd.DataFrame(questions)
    o = pd.DataFrame(outcomes)
    return q, o, counts


def _text(value: object) -> str:
    """A text cell as text: '' for None or NaN."""
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _first_line(text: object) -> str:
    return _text(text).split("\n", 1)[0].strip()


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+|[^\w\s]", _first_line(text))


def _split(text: str, n_prefix: int, n_suffix: int) -> tuple[str, str, str]:
    """``(prefix, span, suffix)`` of a question's first line: the characters before its first ``n_prefix`` tokens
    end, between, and from where its last ``n_suffix`` tokens start (the original spacing and quotes kept)."""
    line = _first_line(text)
    spans = [m.span() for m in re.finditer(r"\w+|[^\w\s]", line)]
    start = spans[n_prefix][0]  # the first token that differs (siblings differ in at least one token)
    cut = spans[len(spans) - n_suffix - 1][1]  # the end of the last token that differs
    return line[:start], line[start:cut], line[cut:]


def _template(a: list[str], b: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The shared prefix and suffix of two token lists when they differ in one short span, else None."""
    n = min(len(a), len(b))
    i, j = shared_ends(a, b)
    da, db = len(a) - i - j, len(b) - i - j
    if i + j < MIN_SHARED * n or not (0 < da <= MAX_SPAN_TOKENS and 0 < db <= MAX_SPAN_TOKENS):
        return None
    return tuple(a[:i]), tuple(a[len(a) - j:])


def sibling_groups_of(rows: list[dict]) -> list[tuple[tuple[tuple[str, ...], tuple[str, ...]], list[int]]]:
    """Candidate sibling groups among market questions of one (round, source, scheduled close).

    Two questions are siblings under a template (shared prefix, shared suffix) when their first lines differ
    in one span (:func:`_template`); each question joins the largest template group it belongs to (ties: the
    template first in sorted order), so a group's members all share its template.

    Returns
    -------
    list of (template, member indices)
        Groups of >= 2 members, in sorted order of their first member.
    """
    toks = [_tokens(r["question"]) for r in rows]
    by_template: dict[tuple, set[int]] = {}
    for a in range(len(rows)):
        for b in range(a + 1, len(rows)):
            t = _template(toks[a], toks[b])
            if t is not None:
                by_template.setdefault(t, set()).update((a, b))
    best: dict[int, tuple] = {}
    for t in sorted(by_template, key=lambda t: (-len(by_template[t]), t)):
        for i in by_template[t]:
            best.setdefault(i, t)
    groups: dict[tuple, list[int]] = {}
    for i, t in best.items():
        groups.setdefault(t, []).append(i)
    out = [(t, sorted(m)) for t, m in groups.items() if len(m) >= 2]
    return sorted(out, key=lambda x: x[1][0])


def build_choice(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, int]]:
    """The multiple-choice questions and outcomes (module docstring) and counts of what was kept and dropped."""
    m = df[df["question_type"] == "market"].sort_values(["round", "source", "qid"], kind="mergesort")
    questions, outcomes = [], []
    counts = {"candidate_groups": 0, "not_single_winner": 0, "not_exactly_one_yes": 0, "kept": 0, "sibling_markets": 0}
    for (rnd, source, close), g in m.groupby(["round", "source", "market_close_datetime"], sort=True, dropna=True):
        rows = g.to_dict("records")
        for (prefix, suffix), members in sibling_groups_of(rows):
            counts["candidate_groups"] += 1
            head, _, tail = _split(rows[members[0]]["question"], len(prefix), len(suffix))
            template = f"{head}<option>{tail}"
            if not SINGLE_WINNER.search(template) or NOT_EXCLUSIVE.search(template):
                counts["not_single_winner"] += 1
                continue
            ys = [int(rows[i]["outcome"]) for i in members]
            if sum(ys) != 1:
                counts["not_exactly_one_yes"] += 1
                continue
            options = [_split(rows[i]["question"], len(prefix), len(suffix))[1].strip() for i in members]
            if len({o.casefold() for o in options}) != len(options):
                counts["not_single_winner"] += 1
                continue
            first = rows[members[0]]
            prices = [rows[i]["crowd_prob_at_freeze"] for i in members]
            known = all(p is not None and not (isinstance(p, float) and math.isnan(p)) for p in prices)
            total = sum(prices) if known else float("nan")
            qid = f"fbmc|{rnd}|{source}|" + "+".join(str(rows[i]["source_question_id"]) for i in members)
            questions.append({
                "qid": qid, "source": source, "round": rnd, "forecast_date": first["forecast_due_date"],
                "question": "Which of these will happen? " + template.replace("<option>", "___"),
                "template": template,
                "options": options, "member_qids": [rows[i]["qid"] for i in members],
                "member_questions": [_first_line(rows[i]["question"]) for i in members],
                "member_source_question_ids": [str(rows[i]["source_question_id"]) for i in members],
                "resolution_criteria": (f"Resolves to the option whose {source} market resolved Yes. The options are "
                                        f"{len(members)} sibling markets of one event, one per option, of which exactly "
                                        "one resolves Yes; each resolves by its market's own criteria."),
                "background": "The sibling markets: " + " | ".join(_first_line(rows[i]["question"]) for i in members),
                "url": None,
                "market_close_datetime": close, "freeze_datetime": first["freeze_datetime"],
                "member_prices": [float(p) for p in prices] if known else None,
                "crowd_forecast": [float(p) / total for p in prices] if known and total > 0 else None,
            })
            outcomes.append({"qid": qid, "outcome": int(np.argmax(ys)), "member_outcomes": ys,
                             "resolution_date": max(str(rows[i]["resolution_date"]) for i in members)})
            counts["kept"] += 1
            counts["sibling_markets"] += len(members)
    return pd.DataFrame(questions), pd.DataFrame(outcomes), counts


def build(source: str | Path | None = None) -> dict[str, tuple[pd.DataFrame, dict[str, int]]]:
    """Every derived table by file name, with the counts of its kind."""
    df = load_forecastbench_questions(source)
    nq, no, ncounts = build_numeric(df)
    cq, co, ccounts = build_choice(df)
    return {NUMERIC_QUESTIONS_FILE: (nq, ncounts), NUMERIC_OUTCOMES_FILE: (no, ncounts),
            CHOICE_QUESTIONS_FILE: (cq, ccounts), CHOICE_OUTCOMES_FILE: (co, ccounts)}


def _as_read(table: pd.DataFrame) -> str:
    """``table`` as it reads back from parquet, in JSON (list cells come back as arrays)."""
    buf = io.BytesIO()
    table.to_parquet(buf, index=False)
    return pd.read_parquet(io.BytesIO(buf.getvalue())).to_json(orient="records")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=forecastbench_dir(), help="Folder to write the four files to.")
    parser.add_argument("--check", action="store_true", help="Rebuild and compare with the files in --out; write nothing.")
    args = parser.parse_args(argv)
    tables = build()
    status = 0
    for name, (table, counts) in tables.items():
        path = args.out / name
        if args.check:
            same = path.is_file() and _as_read(table) == pd.read_parquet(path).to_json(orient="records")
            print(f"{name}: {'same' if same else 'DIFFERS'} ({len(table)} rows)", file=sys.stderr)
            status |= 0 if same else 1
        else:
            table.to_parquet(path, index=False, compression="zstd")
            print(f"{name}: {len(table)} rows, {path.stat().st_size:,} bytes; {counts}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
