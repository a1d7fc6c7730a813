"""Clusters of related questions, for honest bootstrap intervals.

Questions about one event are not independent: a market repeated across rounds, or sibling markets of
one event ("Will X win Best Picture?", "Will Y win Best Picture?", ...) resolve together. Bootstrap
intervals (:mod:`benchmarks.scoring`) resample whole clusters, so related questions must share one.
The bundled Polymarket URLs carry no event id, so siblings are found from what they share.

Rule (documented; :func:`sibling_clusters` applies it). Two questions are in one cluster when any of
these holds, and clusters are closed under it (connected components):

1. **Same source question**: same ``source`` and ``source_question_id`` (a question repeated across
   rounds or horizons).
2. **Same background** (market questions): same ``source`` and the same background text of at least
   :data:`MIN_BACKGROUND_CHARS` characters (sibling markets copy their event's description).
3. **One question pattern** (market questions): same ``source``, same scheduled close date, and texts that
   differ in one contiguous span only: the shared leading and trailing words number at least
   :data:`MIN_SHARED_WORDS` and at least :data:`MIN_SHARED_FRACTION` of the longer text, and each
   differing span has at most :data:`MAX_SPAN_WORDS` words (names of candidates, films, categories).
4. **One dataset round** (dataset questions): same ``source``, same forecast date (the question set's round)
   and same resolution date (``scheduled_close_date``, fixed in advance for a dataset question). Series of
   one source resolving on one day move together: in the bundled questions the outcomes of such questions
   correlate (dbnomics 0.29, yfinance 0.09 between questions of one source, round and date), so they are
   not independent draws. A run takes one question per series (``one_per_source_question``), so there
   this rule groups by source, round and date: 200 sampled dataset questions form 63 to 71 clusters (two
   seeded samples) instead of 200. Where a series appears at several dates, rule 1 chains its dates, and a source's whole round
   becomes one cluster.

The rule errs towards merging: a merge widens intervals, a missed sibling narrows them falsely. On the
1,958 bundled market questions due from 2025-08-01 rule 2 alone merges 342 markets into 107 groups; the
run manifest and the report give the counts for each run.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from agent_schemas import Question

__all__ = ["ClusterAssignment", "MAX_SPAN_WORDS", "MIN_BACKGROUND_CHARS", "MIN_SHARED_FRACTION", "MIN_SHARED_WORDS",
           "RULE", "one_pattern", "shared_ends", "sibling_clusters"]

MIN_BACKGROUND_CHARS = 100
MIN_SHARED_WORDS = 5  # 4 would join unrelated "<X> by June 30, 2026?" questions
MIN_SHARED_FRACTION = 0.4
MAX_SPAN_WORDS = 8
RULE = ("same source question; or, for market questions of one source, the same background "
        f"(>= {MIN_BACKGROUND_CHARS} chars) or one question pattern with the same scheduled close date; "
        "or, for dataset questions of one source, the same forecast date and resolution date")


@dataclass
class ClusterAssignment:
    """Cluster label per question id, with counts for the manifest and the report.

    Attributes
    ----------
    labels : dict of str to str
        Question id -> cluster label (the smallest ``source|source_question_id`` of the cluster).
    n_source_questions : int
        Distinct ``source|source_question_id`` keys (the clusters of rule 1 alone).
    n_clusters : int
        Clusters after all rules.
    """

    labels: dict[str, str] = field(default_factory=dict)
    n_source_questions: int = 0
    n_clusters: int = 0

    @property
    def merged(self) -> int:
        """Source questions merged into another cluster by rules 2 and 3 (count)."""
        return self.n_source_questions - self.n_clusters

    def summary(self) -> dict[str, object]:
        """JSON-serialisable counts and the rule, for the manifest."""
        return {"rule": RULE, "source_questions": self.n_source_questions, "clusters": self.n_clusters,
                "merged_siblings": self.merged}


def one_pattern(a: str, b: str) -> bool:
    """Whether texts ``a`` and ``b`` differ in one contiguous span only (rule 3's text test).

    Examples
    --------
    >>> one_pattern("Will Avatar win Best Picture at the 98th Academy Awards?",
    ...             "Will Frankenstein win Best Film Editing at the 98th Academy Awards?")
    True
    >>> one_pattern("Will the Fed cut rates in December?", "Will Bitcoin reach $100k in December?")
    False
    """
    wa, wb = a.split(), b.split()
    if wa == wb:
        return True
    pre, suf = shared_ends(wa, wb)
    shared = pre + suf
    spans = (len(wa) - shared, len(wb) - shared)
    return (shared >= MIN_SHARED_WORDS and shared >= MIN_SHARED_FRACTION * max(len(wa), len(wb))
            and max(spans) <= MAX_SPAN_WORDS)


def shared_ends(a: Sequence[str], b: Sequence[str]) -> tuple[int, int]:
    """How many leading and trailing tokens two token lists share, the trailing ones counted only among those the
    leading ones left (so the two never overlap on the shorter list).

    >>> shared_ends("Will A win B ?".split(), "Will C win B ?".split())
    (1, 3)
    """
    limit = min(len(a), len(b))
    pre = 0
    while pre < limit and a[pre] == b[pre]:
        pre += 1
    suf = 0
    while suf < limit - pre and a[-1 - suf] == b[-1 - suf]:
        suf += 1
    return pre, suf


def sibling_clusters(questions: Sequence[Question]) -> ClusterAssignment:
    """Assign every question to a cluster by the module's rule.

    Parameters
    ----------
    questions : sequence of Question, length n_questions

    Returns
    -------
    ClusterAssignment
        ``labels`` has one entry per question id.
    """
    keys = sorted({q.cluster_id for q in questions})
    parent = {k: k for k in keys}

    def find(k: str) -> str:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    by_background: dict[tuple[str, str], list[str]] = defaultdict(list)
    by_close: dict[tuple, dict[str, str]] = defaultdict(dict)
    by_dataset_round: dict[tuple, list[str]] = defaultdict(list)
    for q in questions:
        if q.question_type == "dataset" and q.scheduled_close_date is not None:
            by_dataset_round[(q.source, q.forecast_date, q.scheduled_close_date)].append(q.cluster_id)
        if q.question_type != "market":
            continue
        bg = " ".join(q.background.split())
        if len(bg) >= MIN_BACKGROUND_CHARS:
            by_background[(q.source, bg)].append(q.cluster_id)
        if q.scheduled_close_date is not None:
            first = by_close[(q.source, q.scheduled_close_date)].setdefault(" ".join(q.text.split()), q.cluster_id)
            if first != q.cluster_id:  # the same text again (one question listed twice): one pattern, zero spans
                union(first, q.cluster_id)
    for members in (*by_background.values(), *by_dataset_round.values()):
        for k in members[1:]:
            union(members[0], k)
    for texts in by_close.values():
        items = list(texts.items())
        for i, (ta, ka) in enumerate(items):
            for tb, kb in items[i + 1:]:
                if find(ka) != find(kb) and one_pattern(ta, tb):
                    union(ka, kb)
    labels = {q.id: find(q.cluster_id) for q in questions}
    return ClusterAssignment(labels, len(keys), len({find(k) for k in keys}))
