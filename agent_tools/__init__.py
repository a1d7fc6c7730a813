"""Search and evidence tools: search backends, the cutoff-date leakage guard, evidence rendering and answer parsing.

This package knows nothing of agents. Backends return :class:`SearchOutcome` envelopes (never bare
lists); :class:`ToolExecutor` enforces the backtest cutoff on every result; :func:`render_evidence`
fences snippets as untrusted data; :func:`parse_forecast` reads and validates a model's probability, :func:`parse_answer` a forecast of any kind.
"""

from agent_schemas import SearchOutcome, SearchResult
from agent_tools.datasets import (
    forecastbench_dir,
    load_forecastbench_human_forecasts,
    load_forecastbench_kind_table,
    load_forecastbench_questions,
)
from agent_tools.ddg import DuckDuckGoSearch, classify_ddgs_error
from agent_tools.evidence import (
    CLOSE_FENCE,
    OPEN_FENCE,
    evidence_items_from_results,
    latest_published,
    fence,
    defuse_markup,
    neutralise,
    render_evidence,
    render_member_evidence,
    render_search_outcome,
    shown_results,
)
from agent_tools.executor import ToolExecutor, UndatedPolicy
from agent_tools.local_corpus import CorpusDocument, LocalCorpusSearch, best_passage
from agent_tools.parsing import (
    FORECAST_JSON_SCHEMA,
    forecast_json_schema,
    ParsedForecast,
    extract_json_objects,
    parse_evidence,
    parse_answer,
    parse_forecast,
    parse_json,
    parse_probability,
    probability_schema,
    strip_reasoning,
)
from agent_tools.search_base import SearchClient, parse_published, require_ok, to_date, trim_text

__all__ = [
    "CLOSE_FENCE", "CorpusDocument", "DuckDuckGoSearch", "FORECAST_JSON_SCHEMA", "forecast_json_schema", "LocalCorpusSearch", "OPEN_FENCE",
    "ParsedForecast", "SearchClient", "SearchOutcome", "SearchResult", "ToolExecutor", "UndatedPolicy",
    "best_passage", "classify_ddgs_error", "evidence_items_from_results", "extract_json_objects", "forecastbench_dir",
    "latest_published", "load_forecastbench_human_forecasts", "load_forecastbench_kind_table", "load_forecastbench_questions", "defuse_markup", "fence", "neutralise", "parse_answer", "parse_evidence", "parse_forecast", "parse_json",
    "parse_probability", "parse_published", "probability_schema", "render_evidence", "render_member_evidence", "render_search_outcome",
    "require_ok", "shown_results", "strip_reasoning", "to_date", "trim_text",
]
