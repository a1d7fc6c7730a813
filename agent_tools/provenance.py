"""Keep the claim-to-source mapping honest: cited evidence gets its date and title from the search result."""

from __future__ import annotations

from collections.abc import Sequence

from agent_schemas import EvidenceItem, SearchResult


def attach_provenance(items: Sequence[EvidenceItem], results: Sequence[SearchResult]) -> list[EvidenceItem]:
    """Return ``items`` with ``published`` and ``title`` taken from the search result with the same URL.

    A model may misstate a source's date; the date recorded is the one the search backend reported.
    Items citing a URL that was not among ``results`` are returned unchanged.
    """
    by_url = {r.url: r for r in results if r.url}
    out = []
    for item in items:
        r = by_url.get(item.source_url or "")
        if r is not None:
            item = item.model_copy(update={"published": r.published, "title": item.title or r.title})
        out.append(item)
    return out
