"""The leaderboards of the kinds of question the binary leaderboard does not cover (multiple choice, numeric, and
any kind added later): one table per kind, ``leaderboard_<kind>.csv`` and ``leaderboard_<kind>.md``, each kind
ranked on its own rules (:func:`benchmarks.scoring.kind_table.kind_table`) with its cost per method as for binary
(:func:`benchmarks.report.costs.cost_tables` over that kind's records), shown in the Markdown report and on the
run's page. Kinds are never mixed in one number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from agent_schemas.kinds import DEFAULT_KIND, KINDS, QuestionKind
from benchmarks.questions.tables import csv_text
from benchmarks.report.costs import cost_tables
from benchmarks.report.frame import AddedMethods
from benchmarks.run_folder.durable import write_text_atomic
from benchmarks.run_folder.load import LoadedRun
from benchmarks.scoring.kind_table import kind_forecasts, kind_table, label_scores, spec_of_record

__all__ = ["KindReport", "kind_file", "kind_reports", "records_of_kind", "write_kind_reports"]


def kind_file(kind: QuestionKind, suffix: str) -> str:
    """``leaderboard_<kind>.<suffix>``."""
    return f"leaderboard_{kind.name}.{suffix}"


@dataclass
class KindReport:
    """One kind's leaderboard and what is written of it."""

    kind: QuestionKind
    table: pd.DataFrame
    """:func:`~benchmarks.scoring.kind_table.kind_table` rows with ``tokens_per_question``, ``extra_tokens_per_question``
    (tokens) and ``cost_usd`` (USD, summed over the run) per label."""
    n_questions: int
    """Resolved questions of the kind the table scores."""
    reference: str = "mean"
    """The label the deltas are paired against."""
    diagnostics: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    """Per label, in the table's order: the kind's per-question calibration diagnostics as the table averages them
    (:func:`~benchmarks.scoring.kind_table.label_scores`), for the run viewer's calibration figure."""

    @property
    def title(self) -> str:
        """The section title."""
        too_small = "too_small_to_rank" in self.table.columns and bool(self.table["too_small_to_rank"].any())
        how = (f"listed by {self.kind.primary_score}: too few clusters to rank" if too_small
               else f"ranked on {self.kind.primary_score}")
        return f"Leaderboard: {self.kind.label} questions ({self.n_questions}; {how})"

    def markdown(self) -> str:
        """The section: title, what the scores are, the table."""
        notes = "; ".join(f"`{name}`: {text}" for name, text in self.kind.scores.items())
        return (f"## {self.title}\n\nScores of the {self.kind.label} questions only (never averaged with another kind's). "
                f"{notes}. A method's failure is scored as the kind's worst case (`n_imputed`); deltas are paired against "
                f"`{self.reference}` on the primary score with clustered bootstrap intervals.\n\n{self.table.to_markdown(index=False, floatfmt='.4f')}")


def records_of_kind(run: LoadedRun, kind: QuestionKind) -> LoadedRun:
    """``run`` with only the records (scored and set aside) of questions of ``kind``."""
    def mine(records: list[dict]) -> list[dict]:
        return [r for r in records if spec_of_record(r).kind == kind.name]
    return replace(run, records=mine(run.records), replaced=mine(run.replaced))


def kind_reports(runs: Sequence[LoadedRun], *, added: AddedMethods | None = None, n_resamples: int = 1000,
                 seed: int = 0) -> list[KindReport]:
    """The leaderboard of every kind but binary (which has its own, :func:`benchmarks.report.write_report`) that the
    ``runs`` hold resolved questions of, in the order of :data:`agent_schemas.kinds.KINDS`. Several runs: labels are
    ``<run id>:<method>``."""
    out = []
    multi = len(runs) > 1
    for kind in KINDS.values():
        if kind.name == DEFAULT_KIND:
            continue
        mine = [records_of_kind(run, kind) for run in runs]
        frames = [kind_forecasts(run.records, kind, run_id=run.run_id, added=(added or {}).get(run.run_id)) for run in mine]
        frames = [f for f in frames if not f.empty]
        if not frames:
            continue
        frame = pd.concat(frames, ignore_index=True)
        if multi:
            frame["label"] = frame["run_id"] + ":" + frame["label"]
        reference = next((lab for lab in frame["label"] if lab.split(":")[-1] == "mean"), "mean")
        scored = label_scores(frame, kind)
        table = kind_table(frame, kind, reference=reference, n_resamples=n_resamples, seed=seed, scored=scored)
        costs, _ = cost_tables([run for run in mine if run.records], added=added)
        if not costs.empty:
            table = table.merge(costs[["label", "tokens_per_question", "extra_tokens_per_question", "cost_usd"]], on="label", how="left")
        diagnostics = {label: scored[label][2] for label in table["label"] if label in scored}
        out.append(KindReport(kind, table, frame["question_id"].nunique(), reference, diagnostics))
    return out


def write_kind_reports(out_dir: str | Path, reports: Sequence[KindReport]) -> list[Path]:
    """Write each report's ``leaderboard_<kind>.csv`` and ``.md`` into ``out_dir`` (atomically); their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for rep in reports:
        csv_path, md_path = out_dir / kind_file(rep.kind, "csv"), out_dir / kind_file(rep.kind, "md")
        write_text_atomic(csv_path, csv_text(rep.table))
        write_text_atomic(md_path, rep.markdown() + "\n")
        paths += [csv_path, md_path]
    return paths
