"""Grammar-constrained sampling for the embedded llama.cpp model: check the sampled token, filter only on rejection.

llama-cpp-python (0.3.x) puts the JSON-schema grammar into its sampler chain, so at every generated token
the grammar tests every token of the vocabulary (49,152 for SmolLM2) before the chain picks one. llama.cpp's
own sampler (``common_sampler_sample`` in ``common/sampling.cpp``, used by ``llama-server`` and
``llama-cli``, ``grammar_first = false``) does it the other way round: it samples from the chain without the
grammar, asks the grammar whether that one token is allowed, and only when it is not does it filter the
whole vocabulary by the grammar and sample again from the same logits. :class:`ResamplingGrammarSampler`
does the same.

* **Greedy decoding (temperature 0) is unchanged token for token**: the most likely token is either allowed
  (then it is also the most likely allowed token) or rejected and the grammar-filtered pick follows.
* **Sampling (temperature > 0)** draws from the same logits with the same chain, but the random draws
  differ, so a seed gives another (equally valid) answer than llama-cpp-python's chain; without truncation
  (top-k/top-p/min-p) the distribution is exactly the grammar-conditioned one: a token ``t`` allowed by the
  grammar is drawn first with probability ``p(t)`` and after a rejection with ``(1 - p(A)) p(t) / p(A)``
  (``A`` the allowed set), together ``p(t) / p(A)``. With truncation it is llama.cpp's behaviour.
* Every answer still satisfies the grammar: a token leaves the sampler only after the grammar allowed it.

Measured on SmolLM2-135M, one thread, the nine calls of one pipeline question (``benchmarks/perf/
grammar_sampling.py --rounds 2``, on a loaded machine): 11% of generated tokens are rejected and
resampled; 26.8 instead of 30.9 ms per generated token (1.15x); the greedy answers of all nine calls identical. Select llama-cpp-python's chain with
``LocalLlamaProvider(grammar_sampling="filter")``.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any, Literal, get_args

import numpy as np

#: How a grammar constrains sampling: ``"resample"`` checks the sampled token and filters the vocabulary
#: only when the grammar rejects it (llama.cpp's default); ``"filter"`` filters the whole vocabulary at
#: every token (llama-cpp-python's chain, the behaviour before issue 15).
GrammarSampling = Literal["resample", "filter"]
GRAMMAR_SAMPLING_MODES: tuple[str, ...] = get_args(GrammarSampling)


class ResamplingGrammarSampler:
    """A sampler for ``llama_cpp.Llama.generate``: the chain without the grammar picks a token, the grammar
    checks it, and only a rejected token is picked again from the grammar-filtered vocabulary.

    Parameters
    ----------
    llama : llama_cpp.Llama
        The model whose vocabulary the grammar is compiled against.
    chain : llama_cpp._internals.LlamaSampler
        llama-cpp-python's sampler chain built without the grammar (penalties, then greedy or
        top-k/typical/top-p/min-p/temperature/dist).
    grammar : LlamaGrammar made by :func:`schema_grammar`
        The grammar (its GBNF text ``gbnf`` and start rule ``root``).

    Attributes
    ----------
    steps : int
        Tokens sampled so far.
    resampled : int
        Of them, tokens the grammar rejected at first (picked again under the grammar).
    """

    def __init__(self, llama: Any, chain: Any, grammar: Any) -> None:
        from llama_cpp import llama_cpp as C

        self._c = C
        self.chain = chain
        self.n_vocab = int(llama.n_vocab())
        self.grammar = C.llama_sampler_init_grammar(C.llama_model_get_vocab(llama.model), grammar.gbnf.encode("utf-8"),
                                                    grammar.root.encode("utf-8"))
        if not self.grammar:
            raise ValueError("llama.cpp could not build a sampler from the grammar")
        dtype = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])
        if dtype.itemsize != ctypes.sizeof(C.llama_token_data):
            raise RuntimeError("llama_token_data layout changed: cannot build candidate arrays")
        self._candidates = np.empty(self.n_vocab, dtype=dtype)
        self._ids = np.arange(self.n_vocab, dtype=np.int32)
        self._one = (C.llama_token_data * 1)()
        self.steps = 0
        self.resampled = 0

    def _pick(self, logits: np.ndarray, *, grammar: bool) -> int:
        """Token chosen by the chain from ``logits`` (shape ``(n_vocab,)``), after the grammar's filter if
        ``grammar``. Nothing is accepted here."""
        c = self._candidates
        c["id"] = self._ids
        c["logit"] = logits
        c["p"] = 0.0
        arr = self._c.llama_token_data_array(c.ctypes.data_as(self._c.llama_token_data_p), self.n_vocab, -1, False)
        if grammar:
            self._c.llama_sampler_apply(self.grammar, ctypes.byref(arr))
        self._c.llama_sampler_apply(self.chain.sampler, ctypes.byref(arr))
        return int(arr.data[arr.selected].id)

    def _allowed(self, token: int) -> bool:
        """Whether the grammar, in its current state, allows ``token`` next."""
        one = self._one
        one[0].id, one[0].logit, one[0].p = token, 0.0, 0.0
        arr = self._c.llama_token_data_array(ctypes.cast(one, self._c.llama_token_data_p), 1, -1, False)
        self._c.llama_sampler_apply(self.grammar, ctypes.byref(arr))
        return not math.isinf(one[0].logit)

    def sample(self, ctx: Any, idx: int = -1) -> int:
        """Sample the next token from the logits at ``idx`` of ``ctx`` (a ``llama_cpp._internals.LlamaContext``)
        and accept it into the grammar and the chain, as ``LlamaSampler.sample`` does."""
        self.steps += 1
        ptr = self._c.llama_get_logits_ith(ctx.ctx, idx)
        logits = np.ctypeslib.as_array(ptr, shape=(self.n_vocab,))
        token = self._pick(logits, grammar=False)
        if not self._allowed(token):
            self.resampled += 1
            token = self._pick(logits, grammar=True)
        self._c.llama_sampler_accept(self.grammar, token)
        self._c.llama_sampler_accept(self.chain.sampler, token)
        return token

    def close(self) -> None:
        """Free the grammar sampler (the chain frees itself)."""
        if self.grammar:
            self._c.llama_sampler_free(self.grammar)
            self.grammar = None

    def __del__(self) -> None:
        self.close()


def schema_gbnf(json_schema: str) -> str:
    """The GBNF grammar of the JSON schema text ``json_schema``: llama-cpp-python's converter (``SchemaConverter``,
    as its ``json_schema_to_gbnf`` runs it), with one fix to how it writes a literal the model must produce (a
    property name, an enum or const value).

    The converter writes ``json.dumps(value)`` into a GBNF string literal escaping only quotes and line breaks,
    not backslashes (llama-cpp-python 0.3.x, ``SchemaConverter._format_literal``). So a property name holding a
    ``"`` (an option label ``Will "Inside Out 2" win?``: JSON ``\\"``) or a ``\\`` gives a literal that
    ends early and a grammar llama.cpp cannot parse (every call on that schema fails), and a JSON ``\\uXXXX``
    escape of a non-ASCII character is read by GBNF as its own escape (the same character, by luck). Here the
    value is written as JSON with its characters as they are (``ensure_ascii=False``) and every backslash of
    that JSON text is escaped for GBNF, so the model writes exactly the JSON of the value.

    Raises
    ------
    Exception
        Whatever llama-cpp-python's converter raises for a schema it cannot turn into a grammar.
    """
    import json

    from llama_cpp.llama_grammar import SchemaConverter

    class LiteralSafeConverter(SchemaConverter):
        def _format_literal(self, literal: str) -> str:
            try:  # a JSON value (json.dumps of a name or enum value): its characters as they are
                text = json.dumps(json.loads(literal), ensure_ascii=False)
            except ValueError:  # one character of a "not this literal" rule
                text = literal
            return super()._format_literal(text.replace("\\", "\\\\"))

    converter = LiteralSafeConverter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    converter.visit(converter.resolve_refs(json.loads(json_schema), "stdin"), "")
    return converter.format_grammar()


def schema_grammar(json_schema: str) -> Any:
    """A ``llama_cpp.LlamaGrammar`` for the JSON schema text ``json_schema`` (:func:`schema_gbnf`) that also keeps
    its GBNF text as ``gbnf`` and its start rule as ``root``, the public form :class:`ResamplingGrammarSampler` reads.

    Raises
    ------
    Exception
        Whatever llama-cpp-python's converter raises for a schema it cannot turn into a grammar.
    """
    from llama_cpp.llama_grammar import LLAMA_GRAMMAR_DEFAULT_ROOT, LlamaGrammar

    gbnf = schema_gbnf(json_schema)
    grammar = LlamaGrammar.from_string(gbnf, verbose=False)
    grammar.gbnf, grammar.root = gbnf, LLAMA_GRAMMAR_DEFAULT_ROOT
    return grammar


def llama_class(grammar_sampling: GrammarSampling) -> type:
    """The ``llama_cpp.Llama`` class that samples under a grammar as ``grammar_sampling`` says: llama-cpp-python's
    own class for ``"filter"``, a subclass using :class:`ResamplingGrammarSampler` for ``"resample"``.

    Raises
    ------
    ValueError
        If ``grammar_sampling`` is not one of :data:`GRAMMAR_SAMPLING_MODES`.
    """
    if grammar_sampling not in GRAMMAR_SAMPLING_MODES:
        raise ValueError(f"grammar_sampling must be one of {', '.join(GRAMMAR_SAMPLING_MODES)}, got {grammar_sampling!r}")
    import llama_cpp

    if grammar_sampling == "filter":
        return llama_cpp.Llama
    global _RESAMPLING_LLAMA
    if _RESAMPLING_LLAMA is None:
        class ResamplingLlama(llama_cpp.Llama):
            """``llama_cpp.Llama`` whose grammar-constrained sampling checks the sampled token first
            (:class:`ResamplingGrammarSampler`, for a grammar of :func:`schema_grammar`); without a grammar,
            with another grammar, or with logits processors, it is unchanged. ``last_sampler`` is the sampler of
            the latest generation (its ``steps`` and ``resampled`` counts), None before the first.

            This overrides llama-cpp-python's ``_init_sampler`` (0.3.x), its one place where a generation's
            sampler is built; ``tests/providers/test_llama_sampling.py`` checks it against the installed version.
            """

            last_sampler: Any = None

            def _init_sampler(self, *args: Any, grammar: Any = None, logits_processor: Any = None, **kwargs: Any) -> Any:
                if grammar is None or logits_processor is not None or getattr(grammar, "gbnf", None) is None:
                    sampler = super()._init_sampler(*args, grammar=grammar, logits_processor=logits_processor, **kwargs)
                else:
                    chain = super()._init_sampler(*args, grammar=None, logits_processor=None, **kwargs)
                    sampler = ResamplingGrammarSampler(self, chain, grammar)
                self.last_sampler = sampler
                return sampler

        _RESAMPLING_LLAMA = ResamplingLlama
    return _RESAMPLING_LLAMA


_RESAMPLING_LLAMA: type | None = None
