"""A real ForecastBench round rebuilt from the bundled table as ForecastBench publishes it: a question-set JSON
and a resolution-set JSON (the layout of ``datasets/question_sets/<date>-llm.json`` and
``datasets/resolution_sets/<date>_resolution_set.json``), for the loader's and the live round's tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.questions import forecastbench_frame


def write_round(folder: Path, round_label: str = "2025-10-26", per_source: int = 4) -> tuple[Path, Path, pd.DataFrame]:
    """Write ``<round>-llm.json`` and ``<round>_resolution_set.json`` of the first ``per_source`` questions of
    each source of a bundled round (every resolution date of each) into ``folder``.

    Returns
    -------
    (question set path, resolution set path, the bundled rows they hold)
    """
    frame = forecastbench_frame()
    rnd = frame[frame["round"] == round_label]
    keys = rnd.drop_duplicates(["source", "source_question_id"]).groupby("source").head(per_source)
    sel = rnd.merge(keys[["source", "source_question_id"]], on=["source", "source_question_id"])
    questions, resolutions = [], []
    for (source, sqid), grp in sel.groupby(["source", "source_question_id"], sort=False):
        r = grp.iloc[0]
        market = r["question_type"] == "market"

        def val(col, r=r):
            v = r[col]
            return "N/A" if v is None or (isinstance(v, float) and np.isnan(v)) else v

        questions.append({
            "id": sqid, "source": source, "question": r["question_template"], "resolution_criteria": r["resolution_criteria"],
            "background": "" if pd.isna(r["background"]) else r["background"],
            "market_info_open_datetime": val("market_open_datetime"), "market_info_close_datetime": val("market_close_datetime"),
            "market_info_resolution_criteria": val("market_resolution_criteria"), "url": r["url"],
            "freeze_datetime": r["freeze_datetime"], "freeze_datetime_value": r["freeze_value_raw"],
            "freeze_datetime_value_explanation": r["freeze_value_explanation"], "source_intro": r["source_intro"],
            "resolution_dates": "N/A" if market else sorted(grp["resolution_date"].tolist()),
        })
        for _, row in grp.iterrows():
            resolutions.append({"id": sqid, "source": source, "direction": None, "resolution_date": row["resolution_date"],
                                "resolved_to": float(row["outcome"]), "resolved": True})
    q_path, r_path = folder / f"{round_label}-llm.json", folder / f"{round_label}_resolution_set.json"
    q_path.write_text(json.dumps({"forecast_due_date": round_label, "question_set": q_path.name, "questions": questions}))
    r_path.write_text(json.dumps({"forecast_due_date": round_label, "question_set": q_path.name, "resolutions": resolutions}))
    return q_path, r_path, sel
