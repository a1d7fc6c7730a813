"""Who sees which search results in an ensemble: the three evidence modes of ``PipelineConfig.evidence``.

``shared`` (the default, the pipeline as it always ran)
    Every member runs its own research (:meth:`agent_research.ForecasterAgent.gather_evidence`): the question
    text as its first query, so on a deterministic backend every member is shown the same results; with
    ``llm_queries`` each member also writes its own further queries, whose results it alone sees. The debate
    and the supervisor see the members' summaries (the evidence each cited), as before: prompts, records and
    manifests are the ones written before evidence modes.
``split``
    One research pass per question, the first member's (:meth:`~agent_research.ForecasterAgent.gather_evidence`:
    the question text, and its own written queries with ``llm_queries``); the pass's results (each shown once,
    :func:`agent_tools.shown_results`) are dealt into disjoint shares, one per member (:func:`deal`, seeded by the
    run's seed and the question id), and each member is shown its share only. The shares' union is the pass's
    results; with fewer results than members some shares are empty. The search is made once instead of once per
    member; the query-writing call, if any, is charged to the first member.
``private``
    Each member writes all its ``n_queries`` queries itself (one call, with its persona:
    :meth:`~agent_research.ForecasterAgent.gather_own_evidence`), searches them, and is shown only its own
    results; no member is shown another's. The question text is searched only by a member that wrote no query.

In ``split`` and ``private`` the debate and the supervisor are also shown what each member was shown, labelled
by member (:func:`agent_tools.evidence.render_member_evidence`), and the trace records it
(:class:`agent_schemas.MemberEvidence`).

Source of the design: issue 37 (InfoDelphi, arXiv 2607.01661: deliberation helped only when the agents held
private evidence).
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TypeVar

from agent_schemas import SearchResult

__all__ = ["deal", "result_names"]

T = TypeVar("T")


def deal(pool: Sequence[T], n_shares: int, seed: int | None, question_id: str) -> list[list[T]]:
    """Deal ``pool`` into ``n_shares`` disjoint shares whose union is ``pool``.

    The positions are shuffled by a generator seeded with SHA-256 of ``"{seed}|{question_id}"`` (so a run's
    seed and the question fix the deal, and another question gets another), then dealt round-robin: share ``i``
    gets shuffled positions ``i, i + n, i + 2n, ...``, so shares differ in size by at most one. Each share keeps
    the pool's order (the search ranking).

    Raises
    ------
    ValueError
        When ``n_shares < 1``.

    Examples
    --------
    >>> shares = deal(list("abcde"), 2, 0, "q1")
    >>> sorted(x for s in shares for x in s), sorted(len(s) for s in shares)
    (['a', 'b', 'c', 'd', 'e'], [2, 3])
    """
    if n_shares < 1:
        raise ValueError(f"n_shares must be >= 1, got {n_shares}")
    digest = hashlib.sha256(f"{seed}|{question_id}".encode("utf-8")).digest()
    order = list(range(len(pool)))
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(order)
    return [[pool[j] for j in sorted(order[i::n_shares])] for i in range(n_shares)]


def result_names(results: Iterable[SearchResult]) -> dict[tuple[str, str], str]:
    """How a trace names each distinct result of one question (:class:`agent_schemas.MemberEvidence`), keyed as
    prompts tell results apart (``(url, title)``, :func:`agent_tools.shown_results`): its URL, or its title when it has
    none; when two results share a URL (a data source's page under several questions' titles), ``URL — title`` for
    each of them, so that two results never get one name and disjoint shares are recorded disjoint.

    Examples
    --------
    >>> a, b, c = (SearchResult(title=t, url=u) for t, u in (("A", "https://x.org"), ("B", "https://x.org"), ("C", "")))
    >>> list(result_names([a, b, c, a]).values())
    ['https://x.org — A', 'https://x.org — B', 'C']
    """
    keys = list(dict.fromkeys((r.url, r.title) for r in results))
    per_url = Counter(url for url, _ in keys if url)
    return {(url, title): (url if per_url[url] == 1 else f"{url} — {title}") if url else title for url, title in keys}
