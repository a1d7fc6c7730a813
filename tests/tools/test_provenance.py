"""Evidence dates come from what a search backend reported, never from a model's statement."""

from __future__ import annotations

import datetime as dt

from agent_schemas import EvidenceItem, SearchResult
from agent_tools.provenance import attach_provenance

RESULTS = [
    SearchResult(title="HICP flash", url="https://ex.org/a", snippet="2.1%", published=dt.date(2025, 11, 1), source="news"),
    SearchResult(title="Blog", url="https://ex.org/undated", snippet="rates", published=None, source="web"),
    SearchResult(title="Duplicate", url="https://ex.org/a", snippet="later copy", published=dt.date(2025, 11, 5), source="news"),
]


def test_cited_results_give_their_date_and_title_and_other_stated_dates_are_dropped():
    items = [
        EvidenceItem(claim="inflation 2.1%", source_url="https://ex.org/a", published=dt.date(2024, 1, 1)),
        EvidenceItem(claim="a blog says", source_url="https://ex.org/undated", published=dt.date(2025, 10, 1), title="Own title"),
        # a URL nobody retrieved, dated after the forecast date by the model (SmolLM2 copies close dates)
        EvidenceItem(claim="updated in 2026", source_url="https://polymarket.com/market/x.json", published=dt.date(2026, 1, 1)),
        EvidenceItem(claim="no source at all", source_url=None, published=dt.date(2025, 12, 31)),
    ]
    out = attach_provenance(items, RESULTS)
    assert [(e.claim, e.source_url, e.published, e.title) for e in out] == [
        ("inflation 2.1%", "https://ex.org/a", dt.date(2025, 11, 1), "HICP flash"),  # the first result of a URL
        ("a blog says", "https://ex.org/undated", None, "Own title"),  # the source is undated: so is the claim
        ("updated in 2026", "https://polymarket.com/market/x.json", None, None),
        ("no source at all", None, None, None),
    ]
    assert items[2].published == dt.date(2026, 1, 1)  # the inputs are not changed


def test_evidence_items_already_dated_by_a_search_are_sources_too():
    members = attach_provenance([EvidenceItem(claim="2.1%", source_url="https://ex.org/a")], RESULTS)
    debate = [EvidenceItem(claim="as member-0 found", source_url="https://ex.org/a", published=dt.date(2026, 2, 2)),
              EvidenceItem(claim="my own", source_url="https://ex.org/b", published=dt.date(2025, 1, 1))]
    out = attach_provenance(debate, members)
    assert [(e.published, e.title) for e in out] == [(dt.date(2025, 11, 1), "HICP flash"), (None, None)]
    assert attach_provenance(debate, []) == [e.model_copy(update={"published": None}) for e in debate]


def test_a_citation_by_number_keeps_the_numbered_sources_date_and_title_when_another_source_shares_its_url():
    """Sources can share a URL (a member's evidence and a clarifying result; two results of one page): the
    number the model cites picks the source, not the first one with that URL."""
    from agent_tools import parse_forecast

    text = ('{"p_yes_percent": 40, "rationale": "r", "key_evidence": [{"claim": "later copy", "source": 3}, '
            '{"claim": "first", "source": 1}, {"claim": "own title", "source": 3, "title": "Mine", "published": "2024-01-01"}]}')
    out = attach_provenance(parse_forecast(text, sources=RESULTS).key_evidence, RESULTS)
    assert [(e.source_url, e.published, e.title) for e in out] == [
        ("https://ex.org/a", dt.date(2025, 11, 5), "Duplicate"), ("https://ex.org/a", dt.date(2025, 11, 1), "HICP flash"),
        ("https://ex.org/a", dt.date(2025, 11, 5), "Mine")]  # a stated date never; a stated title is the model's
