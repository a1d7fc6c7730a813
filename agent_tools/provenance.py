"""Keep the claim-to-source mapping honest: cited evidence gets its date and title from a retrieved source.

A model may state any publication date, including one after the forecast date (SmolLM2 has copied a
question's scheduled close date into ``published``). A date enters the record, and so a later prompt, only
when a search backend reported it: evidence citing a retrieved source takes that source's date and title;
evidence citing anything else keeps its claim and URL but has no date (``published`` None, rendered as
"undated").

Models cite a source by its number ``[n]`` in the numbered list their prompt shows
(:func:`agent_tools.parsing.evidence_item_schema`); the parser turns the number into the source's URL with
:func:`source_url` and gives it that source's date and title; :func:`attach_provenance` then checks every
item against the sources by URL (the numbered one first, when several share a URL).
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_schemas import EvidenceItem, SearchResult


def source_url(source: SearchResult | EvidenceItem) -> str | None:
    """The URL of a retrieved source: a search result's ``url`` or an evidence item's ``source_url`` (None
    when it has none)."""
    return (source.url if isinstance(source, SearchResult) else source.source_url) or None


def attach_provenance(items: Sequence[EvidenceItem], sources: Sequence[SearchResult | EvidenceItem]) -> list[EvidenceItem]:
    """Return ``items`` with ``published`` and ``title`` taken from the source with the same URL.

    When several sources share the URL, one with the date the item already carries wins (an item cited by
    number carries its source's date and title, :func:`agent_tools.parsing.parse_evidence`), else the first.

    Parameters
    ----------
    items : sequence of EvidenceItem
        Evidence a model cited (claim, source URL, its stated date and title).
    sources : sequence of SearchResult or EvidenceItem
        What was retrieved and shown to the model: search results (``url``), or evidence items that
        already carry a search backend's date (``source_url``, e.g. members' evidence for the debate).

    Returns
    -------
    list of EvidenceItem
        One per item, in order. An item citing a source takes the source's ``published`` (None when the
        source is undated) and, when it has none, its title; an item citing no source (no URL, or a URL
        not among ``sources``) has ``published`` None: its stated date is not evidence.
    """
    by_url: dict[str, list[SearchResult | EvidenceItem]] = {}
    for s in sources:
        url = source_url(s)
        if url:
            by_url.setdefault(url, []).append(s)
    out = []
    for item in items:
        same_url = by_url.get(item.source_url or "", [])
        # an item cited by number carries its source's date (parse_evidence): a source with it, else the first
        s = next((c for c in same_url if c.published == item.published), same_url[0] if same_url else None)
        if s is None:
            item = item.model_copy(update={"published": None})
        else:
            item = item.model_copy(update={"published": s.published, "title": item.title or s.title})
        out.append(item)
    return out
