"""Offline BM25 search over dated documents (``bm25s``), including a corpus built from bundled ForecastBench data.

Ranking is Okapi BM25 (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond",
2009) as implemented by ``bm25s`` (Lù, 2024, arXiv:2407.03618; default ``lucene`` variant, k1=1.5, b=0.75).
When a cutoff date is given, documents published after it are removed *before* ranking, so up to
``max_results`` documents dated on or before the cutoff come back. Undated documents are kept here;
the :class:`~agent_tools.executor.ToolExecutor` applies the undated policy.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agent_schemas import DataValidationError, SearchOutcome, SearchResult
from agent_tools.datasets import QUESTIONS_FILE, forecastbench_dir
from agent_tools.relevance import word_tokens
from agent_tools.search_base import DateLike, SearchClient, parse_published, to_date, trim_text

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_UNDATED = np.iinfo(np.int64).min


@dataclass(frozen=True)
class CorpusDocument:
    """One dated document of a :class:`LocalCorpusSearch` corpus.

    Attributes
    ----------
    title : str
        Title shown with results.
    url : str
        Stable URL or document-id URL (e.g. ``forecastbench://<source>/<source_question_id>``).
    text : str
        Full text that is indexed (non-empty).
    published : date or None
        Publication (availability) date; None when undated.
    kind : str
        Free label recorded in :attr:`SearchResult.source` (e.g. ``"background"``).
    """

    title: str
    url: str
    text: str
    published: dt.date | None = None
    kind: str = ""


def _is_missing(v: Any) -> bool:
    if v is None:
        return True
    if isinstance(v, (str, bytes, bool, list, dict, tuple)):
        return False
    import pandas as pd  # noqa: PLC0415

    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def _document_from_mapping(row: Mapping[str, Any], i: int, source: str | None) -> CorpusDocument:
    text = row.get("text")
    if _is_missing(text) or not isinstance(text, str) or not text.strip():
        raise DataValidationError(f"corpus row {i}: 'text' must be a non-empty string, got {text!r}",
                                  field="text", row=i, value=text, source=source)
    out: dict[str, Any] = {"text": text}
    for key in ("title", "url", "kind"):
        v = row.get(key)
        if _is_missing(v):
            v = ""
        if not isinstance(v, str):
            raise DataValidationError(f"corpus row {i}: {key!r} must be a string, got {v!r}",
                                      field=key, row=i, value=v, source=source)
        out[key] = v
    if not out["url"]:
        out["url"] = f"corpus://{i}"
    pub = row.get("published")
    if _is_missing(pub) or pub == "":
        out["published"] = None
    else:
        parsed = parse_published(pub)
        if parsed is None or isinstance(pub, bool):
            raise DataValidationError(f"corpus row {i}: 'published' is not a date: {pub!r}",
                                      field="published", row=i, value=pub, source=source)
        out["published"] = parsed
    return CorpusDocument(**out)


class LocalCorpusSearch(SearchClient):
    """BM25 search over an in-memory corpus of dated documents.

    Parameters
    ----------
    documents : iterable of CorpusDocument or mapping
        Mappings need ``text`` and may have ``title``, ``url``, ``published`` (ISO date / datetime /
        None) and ``kind``.
    name : str
        Recorded in :attr:`SearchResult.source` (``"<name>:<kind>"`` when the document has a kind).
    snippet_chars : int
        Maximum snippet length in characters; the snippet is the best-matching passage.
    k1, b : float
        BM25 parameters (term-frequency saturation and length normalisation).

    Raises
    ------
    DataValidationError
        For a row without text or with an unreadable ``published`` value (names row, column, value).
    ValueError
        If the corpus is empty.
    """

    name = "local-corpus"

    def __init__(
        self,
        documents: Iterable[CorpusDocument | Mapping[str, Any]],
        *,
        name: str = "local-corpus",
        snippet_chars: int = 300,
        k1: float = 1.5,
        b: float = 0.75,
        _source: str | None = None,
    ) -> None:
        import bm25s  # noqa: PLC0415 - heavy-ish import kept local
        from bm25s.tokenization import Tokenizer  # noqa: PLC0415

        docs: list[CorpusDocument] = []
        for i, d in enumerate(documents):
            if isinstance(d, CorpusDocument):
                if not d.text.strip():
                    raise DataValidationError(f"corpus row {i}: 'text' is empty", field="text", row=i, value=d.text, source=_source)
                docs.append(d)
            elif isinstance(d, Mapping):
                docs.append(_document_from_mapping(d, i, _source))
            else:
                raise DataValidationError(f"corpus row {i}: expected a mapping or CorpusDocument, got {type(d).__name__}",
                                          row=i, value=d, source=_source)
        if not docs:
            raise ValueError("documents is empty: a corpus needs at least one document")
        if snippet_chars < 20:
            raise ValueError(f"snippet_chars must be >= 20, got {snippet_chars!r}")
        self.name = name  # type: ignore[misc]
        self.snippet_chars = int(snippet_chars)
        self._docs = docs
        self._published = np.array(
            [d.published.toordinal() if d.published else _UNDATED for d in docs], dtype=np.int64
        )
        self._tokenizer = Tokenizer(stopwords="en")
        tokens = self._tokenizer.tokenize(
            [f"{d.title}\n{d.text}" for d in docs], return_as="tuple", show_progress=False
        )
        self._retriever = bm25s.BM25(k1=k1, b=b)
        self._retriever.index(tokens, show_progress=False)
        self._id_to_word = {i: w for w, i in self._tokenizer.get_vocab_dict().items()}

    def __len__(self) -> int:
        return len(self._docs)

    def __repr__(self) -> str:
        return f"LocalCorpusSearch(name={self.name!r}, n_documents={len(self._docs)})"

    @property
    def documents(self) -> list[CorpusDocument]:
        """The indexed documents (a copy of the list)."""
        return list(self._docs)

    # --- construction ----------------------------------------------------------------------------
    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> "LocalCorpusSearch":
        """Build a corpus from a JSONL (``.jsonl``/``.json``, one object per line) or Parquet file.

        Columns / keys: ``text`` (required), ``title``, ``url``, ``published``, ``kind``.

        Raises
        ------
        FileNotFoundError
            If ``path`` does not exist.
        DataValidationError
            For an unreadable JSON line, a missing ``text`` column, or a bad row (names row, column, value).
        """
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"corpus file not found: {p}")
        rows: list[Mapping[str, Any]] = []
        if p.suffix.lower() == ".parquet":
            import pandas as pd  # noqa: PLC0415

            df = pd.read_parquet(p)
            if "text" not in df.columns:
                raise DataValidationError(f"{p}: missing required column 'text' (columns: {list(df.columns)})",
                                          field="text", source=str(p))
            rows = df.to_dict(orient="records")
        elif p.suffix.lower() in (".jsonl", ".json", ".ndjson"):
            with p.open(encoding="utf-8") as fh:
                for lineno, line in enumerate(fh):
                    if not line.strip():
                        continue
                    try:
                        obj = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise DataValidationError(f"{p}: line {lineno + 1} is not valid JSON ({exc.msg})",
                                                  row=len(rows), value=line.strip()[:200], source=str(p)) from exc
                    if not isinstance(obj, dict):
                        raise DataValidationError(f"{p}: line {lineno + 1} is not a JSON object",
                                                  row=len(rows), value=obj, source=str(p))
                    rows.append(obj)
        else:
            raise ValueError(f"corpus file must be .jsonl, .json, .ndjson or .parquet, got {p.name!r}")
        return cls(rows, _source=str(p), **kwargs)

    @classmethod
    def default(cls) -> "LocalCorpusSearch":
        """The offline corpus built from the bundled ForecastBench questions (built once per process).

        Documents are the distinct texts of the ``background``, ``market_resolution_criteria``,
        ``source_intro`` and ``freeze_value_explanation`` columns (the freeze *value* itself, e.g. the
        crowd probability, is not included). Each is dated at the earliest ``freeze_datetime`` (UTC
        date) of a question that carries it (the date the text was frozen, 6-10 days before that
        question's ``forecast_due_date``), titled with that question's text and linked to the
        question's ``url`` or ``forecastbench://<source>/<source_question_id>`` (never the qid, which ends
        with the actual resolution date). Identical texts are indexed once. Source
        intros and freeze-value explanations shared by several questions are titled by their source
        and linked as ``forecastbench://source/<source>``. Building takes about 2-3 s (measured on 2
        cores); the result is cached for the process.
        """
        return _default_corpus(str(forecastbench_dir() / QUESTIONS_FILE))

    # --- search ----------------------------------------------------------------------------------
    def search(self, query: str, *, max_results: int = 5, cutoff_date: DateLike | None = None) -> SearchOutcome:
        """BM25 top-``max_results`` documents for ``query``, among those dated on or before ``cutoff_date``.

        Documents with a zero BM25 score (no query term) are not returned. Ties keep corpus order.

        Raises
        ------
        ValueError
            For an empty query, ``max_results < 1`` or an unreadable ``cutoff_date``.
        """
        if not isinstance(query, str) or not query.strip():
            raise ValueError(f"query must be a non-empty string, got {query!r}")
        if int(max_results) < 1:
            raise ValueError(f"max_results must be >= 1, got {max_results!r}")
        cutoff = to_date(cutoff_date)
        t0 = time.perf_counter()
        ids = self._tokenizer.tokenize([query], update_vocab=False, return_as="ids", show_progress=False)[0]
        terms = {self._id_to_word[i] for i in ids if self._id_to_word.get(i)}
        if not terms:
            return SearchOutcome(status="ok", attempted_query=query, results=[], attempts=1,
                                 latency_s=time.perf_counter() - t0)
        scores = np.asarray(self._retriever.get_scores(list(ids)), dtype=float)
        allowed = scores > 0
        if cutoff is not None:
            allowed &= (self._published <= cutoff.toordinal()) | (self._published == _UNDATED)
        candidates = np.flatnonzero(allowed)
        order = candidates[np.argsort(-scores[candidates], kind="stable")][: int(max_results)]
        results = [self._result(self._docs[i], terms) for i in order]
        return SearchOutcome(status="ok", attempted_query=query, results=results, attempts=1,
                             latency_s=time.perf_counter() - t0)

    def _result(self, doc: CorpusDocument, terms: set[str]) -> SearchResult:
        return SearchResult(
            title=doc.title,
            url=doc.url,
            snippet=best_passage(doc.text, terms, self.snippet_chars),
            published=doc.published,
            source=f"{self.name}:{doc.kind}" if doc.kind else self.name,
        )


def best_passage(text: str, terms: set[str], max_chars: int = 300) -> str:
    """The run of consecutive sentences (at most ``max_chars`` characters) matching most query terms.

    Score of a window: number of distinct ``terms`` it contains, then total term occurrences; the
    earliest window wins ties. The passage is whitespace-collapsed and cut at a word boundary with "…".
    """
    sentences = [" ".join(s.split()) for s in _SENTENCE_SPLIT.split(text)]
    sentences = [s for s in sentences if s]
    if not sentences:
        return ""
    words = [word_tokens(s) for s in sentences]
    best, best_key = 0, (-1, -1)
    best_end = 1
    for i in range(len(sentences)):
        length, distinct, total, j = 0, set(), 0, i
        while j < len(sentences) and (j == i or length + 1 + len(sentences[j]) <= max_chars):
            length += len(sentences[j]) + (1 if j > i else 0)
            hits = [w for w in words[j] if w in terms]
            distinct.update(hits)
            total += len(hits)
            j += 1
        key = (len(distinct), total)
        if key > best_key:
            best, best_key, best_end = i, key, j
    return trim_text(" ".join(sentences[best:best_end]), max_chars)


_DEFAULT_COLUMNS = ("background", "market_resolution_criteria", "source_intro", "freeze_value_explanation")


@functools.lru_cache(maxsize=2)
def _default_corpus(path: str) -> LocalCorpusSearch:
    from agent_tools.datasets import load_forecastbench_questions  # noqa: PLC0415

    df = load_forecastbench_questions(
        path, columns=["qid", "question", "url", "source", "source_question_id", "freeze_datetime", *_DEFAULT_COLUMNS]
    )
    col = {c: df[c].tolist() for c in df.columns}  # plain lists: a dict pass is faster than pandas sorts here
    freeze_of: dict[str, dt.date] = {}
    for s in set(col["freeze_datetime"]):
        freeze_of[s] = parse_published(s)  # type: ignore[assignment]
    first: dict[str, tuple[tuple[dt.date, int, str], int, str]] = {}
    questions_of: dict[str, set[str]] = {}
    for rank, kind in enumerate(_DEFAULT_COLUMNS):
        for i, raw in enumerate(col[kind]):
            if not isinstance(raw, str) or not raw.strip():
                continue
            text = raw.strip()
            key = (freeze_of[col["freeze_datetime"][i]], rank, col["qid"][i])
            if text not in first or key < first[text][0]:
                first[text] = (key, i, kind)
            questions_of.setdefault(text, set()).add(f"{col['source'][i]}|{col['source_question_id'][i]}")
    docs: list[CorpusDocument] = []
    for text, (key, i, kind) in sorted(first.items(), key=lambda kv: kv[1][0]):
        source, url = col["source"][i], col["url"][i]
        shared = len(questions_of[text]) > 1  # boilerplate is described by its source, not by one question
        if kind == "source_intro":
            title, url = f"About {source} questions (ForecastBench source description)", f"forecastbench://source/{source}"
        elif kind == "freeze_value_explanation" and shared:
            title, url = f"Meaning of the freeze value of {source} questions", f"forecastbench://source/{source}"
        else:
            title = " ".join(str(col["question"][i]).split())
            # never the qid: bundled ids end with the actual resolution date, which is hindsight
            sqid = col["source_question_id"][i]
            url = url if isinstance(url, str) and url.strip() else f"forecastbench://{source}/{sqid}"
        docs.append(CorpusDocument(title=title, url=url, text=text, published=key[0], kind=kind))
    return LocalCorpusSearch(docs, name="local-corpus:forecastbench", _source=path)
