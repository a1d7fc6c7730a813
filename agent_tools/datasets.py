"""Paths to and raw reads of the bundled ForecastBench data (CC BY-SA 4.0, see ``data/forecastbench/DATA_CARD.md``).

The one reader of the bundled files: ``fb_questions.parquet`` (the question table, also the source of the
local search corpus), ``fb_human_forecasts.parquet`` (the human panels) and the numeric and multiple-choice
tables derived from the first (:data:`KIND_FILES`, ``data/forecastbench/DATA_CARD_KINDS.md``). Only raw reads live here;
:mod:`benchmarks.questions` builds :class:`agent_schemas.Question` objects from them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas is imported when data is read, not when the package is imported
    import pandas as pd

QUESTIONS_FILE = "fb_questions.parquet"
HUMAN_FORECASTS_FILE = "fb_human_forecasts.parquet"


def forecastbench_dir() -> Path:
    """Directory of the bundled ForecastBench files (``fb_questions.parquet``, ``DATA_CARD.md``, ...)."""
    return Path(__file__).resolve().parent / "data" / "forecastbench"


def load_forecastbench_questions(path: str | Path | None = None, *, columns: list[str] | None = None) -> "pd.DataFrame":
    """Read the ForecastBench question table as is (one row per resolved binary item, 18,021 rows bundled).

    Parameters
    ----------
    path : str or Path, optional
        A parquet file with the same columns; default: the bundled ``fb_questions.parquet``.
    columns : list of str, optional
        Read only these columns (faster); default: all.

    Returns
    -------
    pandas.DataFrame
        Columns documented in ``DATA_CARD.md`` (``qid``, ``question``, ``background``, ``forecast_due_date``,
        ``freeze_datetime``, ``crowd_prob_at_freeze``, ``outcome``, ...). Dates are ISO strings.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    """
    return _read(path, QUESTIONS_FILE, "question", columns)


def load_forecastbench_human_forecasts(path: str | Path | None = None, *, columns: list[str] | None = None) -> "pd.DataFrame":
    """Read the ForecastBench human forecasts as is (one row per forecast: one superforecaster's, or a per-item median).

    Parameters
    ----------
    path : str or Path, optional
        A parquet file with the same columns; default: the bundled ``fb_human_forecasts.parquet``.
    columns : list of str, optional
        Read only these columns; default: all.

    Returns
    -------
    pandas.DataFrame
        Columns documented in ``DATA_CARD.md`` (``qid``, ``forecaster_type`` such as
        ``"human_superforecaster_median"``, ``p_yes`` in [0, 1], ``n_forecasters``, ...).

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    """
    return _read(path, HUMAN_FORECASTS_FILE, "human forecast", columns)


#: The derived tables of the other question kinds (built by ``benchmarks/protocol/derived_questions.py``; see
#: ``data/forecastbench/DATA_CARD_KINDS.md``), by (kind, part). Questions and outcomes are separate files.
KIND_FILES: dict[tuple[str, str], str] = {
    ("numeric", "questions"): "fb_numeric_questions.parquet",
    ("numeric", "outcomes"): "fb_numeric_outcomes.parquet",
    ("multiple_choice", "questions"): "fb_choice_questions.parquet",
    ("multiple_choice", "outcomes"): "fb_choice_outcomes.parquet",
}


def load_forecastbench_kind_table(kind: str, part: str, path: str | Path | None = None, *,
                                  columns: list[str] | None = None) -> "pd.DataFrame":
    """Read one derived table of ``kind`` as is: its questions (what a forecaster may see) or its outcomes.

    Parameters
    ----------
    kind : {"numeric", "multiple_choice"}
    part : {"questions", "outcomes"}
    path : str or Path, optional
        A parquet file with the same columns; default the bundled file of :data:`KIND_FILES`.
    columns : list of str, optional
        Read only these columns.

    Returns
    -------
    pandas.DataFrame
        Columns documented in ``DATA_CARD_KINDS.md``.

    Raises
    ------
    ValueError
        For an unknown kind or part.
    FileNotFoundError
        If the file does not exist.
    """
    name = KIND_FILES.get((kind, part))
    if name is None:
        raise ValueError(f"no bundled {part!r} table of kind {kind!r}; known: {sorted(KIND_FILES)}")
    return _read(path, name, f"{kind} {part}", columns)


def _read(path: str | Path | None, default_name: str, kind: str, columns: list[str] | None) -> "pd.DataFrame":
    import pandas as pd  # noqa: PLC0415

    p = Path(path) if path is not None else forecastbench_dir() / default_name
    if not p.is_file():
        raise FileNotFoundError(f"ForecastBench {kind} file not found: {p}")
    return pd.read_parquet(p, columns=columns)
