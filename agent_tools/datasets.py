"""Paths to and raw reads of the bundled ForecastBench data (CC BY-SA 4.0, see ``data/forecastbench/DATA_CARD.md``).

Only raw reads live here; :mod:`benchmarks` builds :class:`agent_schemas.Question` objects from them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas is imported when data is read, not when the package is imported
    import pandas as pd

QUESTIONS_FILE = "fb_questions.parquet"


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
    import pandas as pd  # noqa: PLC0415

    p = Path(path) if path is not None else forecastbench_dir() / QUESTIONS_FILE
    if not p.is_file():
        raise FileNotFoundError(f"ForecastBench question file not found: {p}")
    return pd.read_parquet(p, columns=columns)
