"""Question sets for the benchmark harness: the bundled ForecastBench subset and user files.

Four ways in, all returning :class:`agent_schemas.Question` objects:

* :func:`load_forecastbench` -- the bundled, resolved ForecastBench subset
  (``agent_tools/data/forecastbench/fb_questions.parquet``; 18,021 binary items, 23 rounds; see its
  ``DATA_CARD.md``, CC BY-SA 4.0, (c) Forecasting Research Institute), with filters and a seeded sample.
* :func:`load_numeric_questions`, :func:`load_multiple_choice_questions` -- the bundled numeric (15,603) and
  multiple-choice (25) questions derived from the same table (:mod:`.bundled_kinds`; ``DATA_CARD_KINDS.md``),
  with :func:`numeric_outcomes`, :func:`choice_outcomes` and :func:`sibling_groups`; :func:`load_bundled` takes
  the kind's name and that kind's filters.
* :func:`load_questions_file` -- your own questions as CSV, JSONL or Parquet (columns below).
* :func:`load_forecastbench_json` -- ForecastBench's own question-set JSON (``datasets/question_sets/*.json``)
  optionally joined with its resolution-set JSON (``datasets/resolution_sets/*_resolution_set.json``).

:func:`superforecaster_medians` gives the 2024-07-21 superforecaster panel medians keyed by question id.

The package, one module per way in: :mod:`.bundled` (the bundled table, its filters and the
superforecaster panel), :mod:`.bundled_kinds` (the numeric and multiple-choice tables), :mod:`.files` (user files; its docstring lists the columns),
:mod:`.forecastbench_json`, plus :mod:`.tables` (reading a user's table cell by cell, shared with the
score command) and :mod:`.base` (what they share).
"""

from benchmarks.questions.base import DATA_SNAPSHOT_DATE, DATASET_SOURCES, MARKET_SOURCES, QuestionList
from benchmarks.questions.bundled import (
    forecastbench_frame,
    forecastbench_table,
    load_forecastbench,
    superforecaster_counts,
    superforecaster_medians,
)
from benchmarks.questions.bundled_kinds import (
    BUNDLED_LOADERS,
    SiblingGroup,
    choice_outcomes,
    load_bundled,
    load_multiple_choice_questions,
    load_numeric_questions,
    numeric_outcomes,
    sibling_groups,
)
from benchmarks.questions.files import MAX_FIELD_CHARS, OPTIONAL_COLUMNS, REQUIRED_COLUMNS, load_questions_file
from benchmarks.questions.forecastbench_json import load_forecastbench_json
from benchmarks.questions.tables import Table, id_text, parse_outcome, read_table

__all__ = [
    "BUNDLED_LOADERS",
    "DATASET_SOURCES",
    "DATA_SNAPSHOT_DATE",
    "MARKET_SOURCES",
    "MAX_FIELD_CHARS",
    "OPTIONAL_COLUMNS",
    "QuestionList",
    "SiblingGroup",
    "REQUIRED_COLUMNS",
    "Table",
    "forecastbench_frame",
    "forecastbench_table",
    "choice_outcomes",
    "id_text",
    "load_forecastbench",
    "load_bundled",
    "load_forecastbench_json",
    "load_multiple_choice_questions",
    "load_numeric_questions",
    "load_questions_file",
    "numeric_outcomes",
    "parse_outcome",
    "read_table",
    "sibling_groups",
    "superforecaster_counts",
    "superforecaster_medians",
]
