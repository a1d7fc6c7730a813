"""Known training-data cutoffs of the models the toolkit runs, for leakage-aware reporting.

A model may have seen a question's outcome in training when the outcome was public before the model's
training-data cutoff. Report results on questions whose forecast date is after the cutoff separately
(:func:`after_cutoff_mask`); ForecastBench's DATA_CARD caveat 6 asks for exactly this.

Which date counts as "the cutoff"
---------------------------------
Providers publish up to two dates: a *reliable knowledge cutoff* (where the model's knowledge is most
complete) and a *training-data cutoff* (the latest data in training). For leakage the later one is the
honest bound, so :attr:`ModelCutoff.cutoff` is the training-data cutoff when known, else the reliable
knowledge cutoff. Dates published as a month are read as the **last day of that month** (e.g. "Jul 2025"
-> 2025-07-31), and OpenAI's "Jun 01, 2024"-style dates as their month, so the bound errs late: a
question counted "after cutoff" really is after it.

Every entry says where its value comes from and whether it was checked (``verified``); values not
checked against a provider page in the session that wrote this table say so in ``source``. ``as_of`` is
the date the entry was last checked. Update the table when providers publish new dates.

How a spec finds its entry
--------------------------
Only the **model name** is read (:func:`model_name`): the part of the spec after the provider and before
``@`` (the server URL is never read), and of that the part after the last ``/`` (an organisation prefix
such as OpenRouter's ``openai/gpt-4o`` or Hugging Face's ``HuggingFaceTB/SmolLM2-135M-Instruct``), lower-cased
with ``.``, ``_``, ``:`` and spaces as ``-``. The name must match one of an entry's :attr:`ModelCutoff.patterns`
**whole**, anchored at both ends. Variants an entry covers are spelled out in its patterns (``o3(?:-pro)?``;
SmolLM2's GGUF files only under llama.cpp's own quantisation names, :data:`LLAMA_CPP_QUANTS`). So ``marco-o1``,
``Skywork-o1-Open-Llama-3.1-8B``, a fine-tune named ``smollm2-q4-mytune`` and a server whose URL path says
``gpt-4o`` match nothing, and a name that matches nothing has no cutoff: the run stops and asks for
``--date-from`` (it fails closed).

A name ending in a date (``-20250929``, ``-2024-08-06``: a dated snapshot) is its model only when it is one of the
entry's published :attr:`ModelCutoff.snapshots` (either date form). A provider's later snapshot may be trained on
later data (``gpt-4o-2024-08-06`` and ``gpt-4o-2024-11-20`` are different models), and a date that is not a
published snapshot may be anything, so an unlisted dated name has no cutoff (fails closed) until its snapshot
is added to the table with its source.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass

from agent_schemas import DataValidationError, Question

__all__ = ["MODEL_CUTOFFS", "ModelCutoff", "after_cutoff_mask", "lookup_model", "model_name", "training_cutoff"]

_AS_OF = dt.date(2026, 11, 30)


#: A dated snapshot of a model (``claude-sonnet-4-5-20250929``, ``gpt-4o-2024-08-06``), after normalising.
_DATED = re.compile(r"(.+)-(\d{4})-?(\d{2})-?(\d{2})")


def _snapshot_key(name: str) -> str | None:
    """A normalised dated name with its date as ``YYYYMMDD`` (either form of the date is one snapshot), or None
    when the name does not end in a date."""
    m = _DATED.fullmatch(name)
    return None if m is None else f"{m[1]}-{m[2]}{m[3]}{m[4]}"


def _month_end(month: str) -> dt.date:
    year, mon = (int(x) for x in month.split("-"))
    return dt.date(year, mon, calendar.monthrange(year, mon)[1])


@dataclass(frozen=True)
class ModelCutoff:
    """One model's published cutoff dates and their provenance.

    Attributes
    ----------
    name : str
        Display name, e.g. ``"Claude Sonnet 4.5"``.
    patterns : tuple of str
        Regular expressions over the normalised model name (see :func:`model_name`), each matched whole:
        anchored at both ends, with an optional dated snapshot suffix added by :meth:`matches`.
    examples : tuple of str
        Specs that must find this entry and no other (checked by the tests); the first is the canonical name.
    snapshots : tuple of str
        The provider's published dated snapshots of the model (``gpt-4o-2024-08-06``): the only dated names
        that find the entry (see the module docstring).
    training_data_month : str or None
        Training-data cutoff as ``"YYYY-MM"``, if published.
    reliable_knowledge_month : str or None
        Reliable knowledge cutoff as ``"YYYY-MM"``, if published.
    source : str
        Where the values come from (page titles), and which were not verified.
    verified : bool
        True when the date used as :attr:`cutoff` was checked against a provider page or a direct quote.
    as_of : datetime.date
        When the entry was last checked.
    note : str
        Anything a reader should know (e.g. an upper bound only).
    """

    name: str
    patterns: tuple[str, ...]
    examples: tuple[str, ...]
    training_data_month: str | None
    reliable_knowledge_month: str | None
    source: str
    verified: bool
    as_of: dt.date = _AS_OF
    note: str = ""
    snapshots: tuple[str, ...] = ()

    @property
    def cutoff(self) -> dt.date:
        """Date used for leakage masks: last day of the training-data month (else the knowledge month)."""
        month = self.training_data_month or self.reliable_knowledge_month
        assert month is not None, f"{self.name} has no cutoff month"
        return _month_end(month)

    def matches(self, name: str) -> bool:
        """Whether a normalised model name (:func:`model_name`) is this model: a name ending in a date is one of
        its :attr:`snapshots` (``-YYYYMMDD`` or ``-YYYY-MM-DD``); any other name matches one pattern whole."""
        key = _snapshot_key(name)
        if key is not None:
            return key in {_snapshot_key(model_name(s)) for s in self.snapshots}
        return any(re.fullmatch(p, name) for p in self.patterns)

    @property
    def reliable_knowledge_cutoff(self) -> dt.date | None:
        """Last day of the reliable-knowledge month, if published."""
        return None if self.reliable_knowledge_month is None else _month_end(self.reliable_knowledge_month)


_ANTHROPIC_HUB = "Anthropic Transparency Hub, 'Model Report' (anthropic.com/transparency/model-report)"
_CLAUDE4_CARD = "'System Card: Claude Opus 4 & Claude Sonnet 4' (May 2025): trained on public web data 'as of March 2025'"
_ANTHROPIC_OVERVIEW = "Anthropic docs 'Models overview' training-data cutoff column"
_OPENAI_MODELS = "OpenAI API docs model page ('knowledge cutoff')"
#: SmolLM2 of any size, instruct or base, under the names llama.cpp, Ollama and Hugging Face serve it, and the
#: embedded provider's own names (``smollm2-q8_0``, ``smollm2-packaged``) and GGUF quantisations (``-q4_k_m``).
_SMOLLM2 = r"smollm2(?:-(?:135m|360m|1-7b))?(?:-instruct)?(?:-(?:{quants}|packaged))?"

#: llama.cpp's quantisation type names (``llama-quantize --help``; ``ggml_type`` and ``llama_ftype``), normalised
#: (``Q4_K_M`` -> ``q4-k-m``), and Ollama's ``fp16``/``fp32`` tags: the only suffixes a GGUF build of a model
#: carries. Anything else after a model's name (``-q4-mytune``) is another model: a fine-tune.
LLAMA_CPP_QUANTS = (
    "q4-0", "q4-1", "q5-0", "q5-1", "q8-0", "q2-k", "q2-k-s", "q3-k", "q3-k-s", "q3-k-m", "q3-k-l", "q4-k", "q4-k-s",
    "q4-k-m", "q5-k", "q5-k-s", "q5-k-m", "q6-k", "q4-0-4-4", "q4-0-4-8", "q4-0-8-8", "iq1-s", "iq1-m", "iq2-xxs",
    "iq2-xs", "iq2-s", "iq2-m", "iq3-xxs", "iq3-xs", "iq3-s", "iq3-m", "iq4-nl", "iq4-xs", "tq1-0", "tq2-0", "mxfp4",
    "f16", "fp16", "bf16", "f32", "fp32",
)
_SMOLLM2 = _SMOLLM2.format(quants="|".join(re.escape(q) for q in LLAMA_CPP_QUANTS))

#: The table. Order does not matter: a name matches at most one entry (the tests check every example).
MODEL_CUTOFFS: tuple[ModelCutoff, ...] = (
    ModelCutoff(
        "Claude Sonnet 4.6", ("claude-sonnet-4-6", "claude-4-6-sonnet"), ("claude-sonnet-4-6", "anthropic/claude-sonnet-4.6"), "2026-02", "2025-05",
        source=f"reliable knowledge May 2025: {_ANTHROPIC_HUB}, Claude Sonnet 4.6 summary table (verified); "
        "no training-data cutoff found on a provider page: the release month (released 2026-02-17, "
        "platform.claude.com model page) is used as an upper bound",
        verified=False, as_of=dt.date(2026, 12, 1),
        note="Upper bound only (release month); questions due after February 2026 are certainly after its training data.",
    ),
    ModelCutoff(
        "Claude Sonnet 4.5", ("claude-sonnet-4-5", "claude-4-5-sonnet"),
        ("claude-sonnet-4-5", "anthropic/claude-sonnet-4-5-20250929", "openai-compatible/anthropic/claude-sonnet-4.5@https://openrouter.ai/api/v1"), "2025-07", "2025-01",
        source=f"reliable knowledge Jan 2025: {_ANTHROPIC_HUB} (verified); training data Jul 2025: "
        f"{_ANTHROPIC_OVERVIEW} (NOT verified here: only a third-party listing, apxml.com, was found)",
        snapshots=("claude-sonnet-4-5-20250929",), verified=False,
    ),
    ModelCutoff(
        "Claude Haiku 4.5", ("claude-haiku-4-5", "claude-4-5-haiku"), ("claude-haiku-4-5", "anthropic/claude-haiku-4-5-20251001"), "2025-07", "2025-02",
        source=f"reliable knowledge Feb 2025: {_ANTHROPIC_HUB} (verified); training data Jul 2025: "
        f"{_ANTHROPIC_OVERVIEW} (NOT verified here)",
        snapshots=("claude-haiku-4-5-20251001",), verified=False,
    ),
    ModelCutoff(
        "Claude Opus 4.5", ("claude-opus-4-5", "claude-4-5-opus"), ("claude-opus-4-5", "anthropic/claude-opus-4-5-20251101"), "2025-08", "2025-05",
        source=f"{_ANTHROPIC_OVERVIEW}: reliable knowledge May 2025, training data Aug 2025 (NOT verified here: "
        "no provider page with these dates was found)",
        snapshots=("claude-opus-4-5-20251101",), verified=False,
    ),
    ModelCutoff(
        "Claude Opus 4.1", ("claude-opus-4-1", "claude-4-1-opus"), ("claude-opus-4-1", "anthropic/claude-opus-4-1-20250805"), "2025-03", "2025-01",
        source=f"training data Mar 2025 and reliable knowledge Jan 2025: {_ANTHROPIC_OVERVIEW} (NOT verified "
        f"here; consistent with {_CLAUDE4_CARD} for its predecessor)",
        snapshots=("claude-opus-4-1-20250805",), verified=False,
    ),
    ModelCutoff(
        "Claude Opus 4", ("claude-opus-4", "claude-4-opus"), ("claude-opus-4", "anthropic/claude-opus-4-20250514"), "2025-03", "2025-01",
        source=f"training data Mar 2025: {_CLAUDE4_CARD} (verified via the quote in Stanford CRFM FMTI 2025 "
        f"Anthropic report); reliable knowledge Jan 2025: {_ANTHROPIC_OVERVIEW} (NOT verified here)",
        snapshots=("claude-opus-4-20250514",), verified=True,
    ),
    ModelCutoff(
        "Claude Sonnet 4", ("claude-sonnet-4", "claude-4-sonnet"), ("claude-sonnet-4", "anthropic/claude-sonnet-4-20250514"), "2025-03", "2025-01",
        source=f"training data Mar 2025: {_CLAUDE4_CARD} (verified via the quote in Stanford CRFM FMTI 2025 "
        f"Anthropic report); reliable knowledge Jan 2025: {_ANTHROPIC_OVERVIEW} (NOT verified here)",
        snapshots=("claude-sonnet-4-20250514",), verified=True,
    ),
    ModelCutoff(
        "GPT-4.1", ("gpt-4-1(?:-nano)?",), ("gpt-4.1", "openai/gpt-4.1-2025-04-14", "openai/gpt-4.1-nano"), "2024-06", None,
        source="OpenAI 'Introducing GPT-4.1 in the API' (2025-04-14): 'refreshed knowledge cutoff of June 2024' "
        f"(verified via quotes in github/docs and aimlapi docs); {_OPENAI_MODELS}: Jun 01, 2024",
        snapshots=("gpt-4.1-2025-04-14", "gpt-4.1-nano-2025-04-14"), verified=True, note="Also covers gpt-4.1-nano (same announcement).",
    ),
    ModelCutoff(
        "GPT-4.1 mini", ("gpt-4-1-mini",), ("gpt-4.1-mini", "openai/gpt-4.1-mini-2025-04-14"), "2024-06", None,
        source="OpenAI 'Introducing GPT-4.1 in the API' (2025-04-14): the GPT-4.1 family has a June 2024 "
        f"knowledge cutoff (verified via quotes); {_OPENAI_MODELS}: Jun 01, 2024",
        snapshots=("gpt-4.1-mini-2025-04-14",), verified=True,
    ),
    ModelCutoff(
        "GPT-4o", ("gpt-4o",), ("gpt-4o", "openai/gpt-4o-2024-08-06", "openai-compatible/openai/gpt-4o@https://openrouter.ai/api/v1"), "2023-10", None,
        source=f"{_OPENAI_MODELS}: Oct 01, 2023 (NOT verified here; ChatGPT system prompt 'Knowledge cutoff: "
        "2023-10' and model catalogues agree; one catalogue says 2023-09)",
        snapshots=("gpt-4o-2024-05-13", "gpt-4o-2024-08-06", "gpt-4o-2024-11-20"), verified=False,
    ),
    ModelCutoff(
        "GPT-4o mini", ("gpt-4o-mini",), ("gpt-4o-mini", "openai/gpt-4o-mini-2024-07-18"), "2023-10", None,
        source=f"{_OPENAI_MODELS}: Oct 01, 2023 (verified via the published GPT-4o-mini ChatGPT system prompt "
        "'Knowledge cutoff: 2023-10')",
        snapshots=("gpt-4o-mini-2024-07-18",), verified=True,
    ),
    ModelCutoff(
        "o1", ("o1",), ("o1", "openai/o1-2024-12-17"), "2023-10", None,
        source=f"{_OPENAI_MODELS}: Oct 01, 2023 (NOT verified here)", snapshots=("o1-2024-12-17",), verified=False,
    ),
    ModelCutoff(
        "o1-mini", ("o1-mini",), ("o1-mini", "openai/o1-mini-2024-09-12"), "2023-10", None,
        source=f"{_OPENAI_MODELS}: Oct 01, 2023 (NOT verified here)", snapshots=("o1-mini-2024-09-12",), verified=False,
    ),
    ModelCutoff(
        "o3-mini", ("o3-mini",), ("o3-mini", "openai/o3-mini-2025-01-31"), "2023-10", None,
        source=f"{_OPENAI_MODELS}: Oct 01, 2023 (NOT verified here)", snapshots=("o3-mini-2025-01-31",), verified=False,
    ),
    ModelCutoff(
        "o3", ("o3(?:-pro)?",), ("o3", "openai/o3-2025-04-16", "openai/o3-pro"), "2024-06", None,
        source=f"{_OPENAI_MODELS}: Jun 01, 2024 (NOT verified here)", snapshots=("o3-2025-04-16", "o3-pro-2025-06-10"), verified=False,
        note="Also matches o3-pro (same base model).",
    ),
    ModelCutoff(
        "o4-mini", ("o4-mini",), ("o4-mini", "openai/o4-mini-2025-04-16"), "2024-06", None,
        source=f"{_OPENAI_MODELS}: Jun 01, 2024 (NOT verified here)", snapshots=("o4-mini-2025-04-16",), verified=False,
    ),
    ModelCutoff(
        "SmolLM2-135M-Instruct", (_SMOLLM2,),
        ("smollm2", "local/smollm2-q8_0", "local/smollm2-packaged", "openai-compatible/smollm2:135m@http://127.0.0.1:11434/v1",
         "openai-compatible/HuggingFaceTB/SmolLM2-135M-Instruct@http://127.0.0.1:8080/v1",
         "openai-compatible/smollm2-1.7b-instruct-q4_k_m@http://127.0.0.1:8080/v1"), "2024-11", None,
        source="HuggingFaceTB/SmolLM2-135M-Instruct model card (Hugging Face): no cutoff stated; trained on "
        "FineWeb-Edu, DCLM, The Stack and new filtered datasets (verified); released 2024-11",
        verified=False,
        note="Upper bound only: the release month. The web crawls it was trained on end earlier. "
        "Covers all SmolLM2 sizes (135M, 360M, 1.7B), released together.",
    ),
)


def model_name(spec: str) -> str:
    """The normalised model name of a provider spec: the only part of it a cutoff is looked up by.

    The part before the first ``@`` (a server URL is never read), after its last ``/`` (the provider, and an
    organisation prefix such as ``openai/`` on OpenRouter or ``HuggingFaceTB/``), lower-cased, with ``.``,
    ``_``, ``:`` and spaces as ``-`` (so ``claude-sonnet-4.5`` is ``claude-sonnet-4-5``).

    Examples
    --------
    >>> model_name("openai-compatible/marco-o1@http://127.0.0.1:9/gpt-4o/v1")
    'marco-o1'
    >>> model_name("local/smollm2-q8_0")
    'smollm2-q8-0'
    """
    name = spec.split("@", 1)[0].rsplit("/", 1)[-1]
    return re.sub(r"[._ :]+", "-", name.strip().lower())


#: Moving aliases name whichever model the provider serves today (``chatgpt-4o-latest``,
#: ``claude-3-5-sonnet-latest``, ``gpt-5-chat-latest``): their training cutoff moves with them, so it is
#: unknown. No pattern of the table admits one; this guard keeps it so when patterns are added.
_MOVING_ALIAS = re.compile(r"-latest$|^chatgpt-")


def lookup_model(model_spec: str) -> ModelCutoff | None:
    """The table entry for a model spec, or None if its model name is not in the table or is a moving alias.

    Parameters
    ----------
    model_spec : str
        A provider spec or model name, e.g. ``"anthropic/claude-sonnet-4-5-20250929"``,
        ``"openai/gpt-4.1-mini"``, ``"local/smollm2"``. Only :func:`model_name` of it is read, and it must
        match an entry's pattern whole (see the module docstring): ``"openai-compatible/marco-o1@..."`` is not
        o1.

    Returns
    -------
    ModelCutoff or None
    """
    name = model_name(model_spec)
    if _MOVING_ALIAS.search(name):
        return None
    return next((entry for entry in MODEL_CUTOFFS if entry.matches(name)), None)


def training_cutoff(model_spec: str) -> dt.date | None:
    """Training-data cutoff of a model (see module docstring for which date), or None if unknown.

    Parameters
    ----------
    model_spec : str
        Provider spec or model name, e.g. ``"local/smollm2"``.

    Returns
    -------
    datetime.date or None

    Examples
    --------
    >>> training_cutoff("anthropic/claude-sonnet-4-5")
    datetime.date(2025, 7, 31)
    >>> training_cutoff("local/smollm2")
    datetime.date(2024, 11, 30)
    >>> training_cutoff("some/unknown-model") is None
    True
    """
    entry = lookup_model(model_spec)
    return None if entry is None else entry.cutoff


def after_cutoff_mask(questions: Sequence[Question], model_spec: str, *, cutoff: dt.date | None = None) -> list[bool]:
    """For each question, whether its forecast date is strictly after the model's training cutoff.

    Parameters
    ----------
    questions : sequence of Question, length n_questions
    model_spec : str
        Provider spec or model name looked up in :data:`MODEL_CUTOFFS`.
    cutoff : datetime.date, optional
        Use this cutoff instead of the table (for a model not in it, or a stricter bound).

    Returns
    -------
    list of bool, length n_questions
        ``forecast_date > cutoff``: True marks questions the model cannot have seen resolved in training.

    Raises
    ------
    DataValidationError
        If ``cutoff`` is not given and the model is not in the table (the message lists known models);
        an unknown cutoff is never guessed.
    """
    if cutoff is None:
        cutoff = training_cutoff(model_spec)
        if cutoff is None:
            known = ", ".join(e.name for e in MODEL_CUTOFFS)
            raise DataValidationError(
                f"no known training cutoff for model {model_spec!r}; pass cutoff=... explicitly. Known models: {known}",
                field="model_spec", value=model_spec,
            )
    return [q.forecast_date > cutoff for q in questions]
