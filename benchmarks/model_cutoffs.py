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
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass

from agent_schemas import DataValidationError, Question

__all__ = ["MODEL_CUTOFFS", "ModelCutoff", "after_cutoff_mask", "lookup_model", "training_cutoff"]

_AS_OF = dt.date(2026, 11, 30)


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
        Normalised name fragments that identify the model in a provider spec (see :func:`lookup_model`).
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
    training_data_month: str | None
    reliable_knowledge_month: str | None
    source: str
    verified: bool
    as_of: dt.date = _AS_OF
    note: str = ""

    @property
    def cutoff(self) -> dt.date:
        """Date used for leakage masks: last day of the training-data month (else the knowledge month)."""
        month = self.training_data_month or self.reliable_knowledge_month
        assert month is not None, f"{self.name} has no cutoff month"
        return _month_end(month)

    @property
    def reliable_knowledge_cutoff(self) -> dt.date | None:
        """Last day of the reliable-knowledge month, if published."""
        return None if self.reliable_knowledge_month is None else _month_end(self.reliable_knowledge_month)


_ANTHROPIC_HUB = "Anthropic Transparency Hub, 'Model Report' (anthropic.com/transparency/model-report)"
_CLAUDE4_CARD = "'System Card: Claude Opus 4 & Claude Sonnet 4' (May 2025): trained on public web data 'as of March 2025'"
_ANTHROPIC_OVERVIEW = "Anthropic docs 'Models overview' training-data cutoff column"
_OPENAI_MODELS = "OpenAI API docs model page ('knowledge cutoff')"

#: The table. Order does not matter: :func:`lookup_model` prefers the longest matching pattern.
MODEL_CUTOFFS: tuple[ModelCutoff, ...] = (
    ModelCutoff(
        "Claude Sonnet 4.6", ("claude-sonnet-4-6", "claude-4-6-sonnet", "sonnet-4-6"), "2026-02", "2025-05",
        source=f"reliable knowledge May 2025: {_ANTHROPIC_HUB}, Claude Sonnet 4.6 summary table (verified); "
        "no training-data cutoff found on a provider page: the release month (released 2026-02-17, "
        "platform.claude.com model page) is used as an upper bound",
        verified=False, as_of=dt.date(2026, 12, 1),
        note="Upper bound only (release month); questions due after February 2026 are certainly after its training data.",
    ),
    ModelCutoff(
        "Claude Sonnet 4.5", ("claude-sonnet-4-5", "claude-4-5-sonnet", "sonnet-4-5"), "2025-07", "2025-01",
        source=f"reliable knowledge Jan 2025: {_ANTHROPIC_HUB} (verified); training data Jul 2025: "
        f"{_ANTHROPIC_OVERVIEW} (NOT verified here: only a third-party listing, apxml.com, was found)",
        verified=False,
    ),
    ModelCutoff(
        "Claude Haiku 4.5", ("claude-haiku-4-5", "claude-4-5-haiku", "haiku-4-5"), "2025-07", "2025-02",
        source=f"reliable knowledge Feb 2025: {_ANTHROPIC_HUB} (verified); training data Jul 2025: "
        f"{_ANTHROPIC_OVERVIEW} (NOT verified here)",
        verified=False,
    ),
    ModelCutoff(
        "Claude Opus 4.5", ("claude-opus-4-5", "claude-4-5-opus", "opus-4-5"), "2025-08", "2025-05",
        source=f"{_ANTHROPIC_OVERVIEW}: reliable knowledge May 2025, training data Aug 2025 (NOT verified here: "
        "no provider page with these dates was found)",
        verified=False,
    ),
    ModelCutoff(
        "Claude Opus 4.1", ("claude-opus-4-1", "claude-4-1-opus", "opus-4-1"), "2025-03", "2025-01",
        source=f"training data Mar 2025 and reliable knowledge Jan 2025: {_ANTHROPIC_OVERVIEW} (NOT verified "
        f"here; consistent with {_CLAUDE4_CARD} for its predecessor)",
        verified=False,
    ),
    ModelCutoff(
        "Claude Opus 4", ("claude-opus-4", "claude-4-opus", "opus-4"), "2025-03", "2025-01",
        source=f"training data Mar 2025: {_CLAUDE4_CARD} (verified via the quote in Stanford CRFM FMTI 2025 "
        f"Anthropic report); reliable knowledge Jan 2025: {_ANTHROPIC_OVERVIEW} (NOT verified here)",
        verified=True,
    ),
    ModelCutoff(
        "Claude Sonnet 4", ("claude-sonnet-4", "claude-4-sonnet", "sonnet-4"), "2025-03", "2025-01",
        source=f"training data Mar 2025: {_CLAUDE4_CARD} (verified via the quote in Stanford CRFM FMTI 2025 "
        f"Anthropic report); reliable knowledge Jan 2025: {_ANTHROPIC_OVERVIEW} (NOT verified here)",
        verified=True,
    ),
    ModelCutoff(
        "GPT-4.1", ("gpt-4-1",), "2024-06", None,
        source="OpenAI 'Introducing GPT-4.1 in the API' (2025-04-14): 'refreshed knowledge cutoff of June 2024' "
        f"(verified via quotes in github/docs and aimlapi docs); {_OPENAI_MODELS}: Jun 01, 2024",
        verified=True, note="Also covers gpt-4.1-nano (same announcement).",
    ),
    ModelCutoff(
        "GPT-4.1 mini", ("gpt-4-1-mini",), "2024-06", None,
        source="OpenAI 'Introducing GPT-4.1 in the API' (2025-04-14): the GPT-4.1 family has a June 2024 "
        f"knowledge cutoff (verified via quotes); {_OPENAI_MODELS}: Jun 01, 2024",
        verified=True,
    ),
    ModelCutoff(
        "GPT-4o", ("gpt-4o",), "2023-10", None,
        source=f"{_OPENAI_MODELS}: Oct 01, 2023 (NOT verified here; ChatGPT system prompt 'Knowledge cutoff: "
        "2023-10' and model catalogues agree; one catalogue says 2023-09)",
        verified=False,
    ),
    ModelCutoff(
        "GPT-4o mini", ("gpt-4o-mini",), "2023-10", None,
        source=f"{_OPENAI_MODELS}: Oct 01, 2023 (verified via the published GPT-4o-mini ChatGPT system prompt "
        "'Knowledge cutoff: 2023-10')",
        verified=True,
    ),
    ModelCutoff(
        "o1", ("o1",), "2023-10", None,
        source=f"{_OPENAI_MODELS}: Oct 01, 2023 (NOT verified here)", verified=False,
    ),
    ModelCutoff(
        "o1-mini", ("o1-mini",), "2023-10", None,
        source=f"{_OPENAI_MODELS}: Oct 01, 2023 (NOT verified here)", verified=False,
    ),
    ModelCutoff(
        "o3-mini", ("o3-mini",), "2023-10", None,
        source=f"{_OPENAI_MODELS}: Oct 01, 2023 (NOT verified here)", verified=False,
    ),
    ModelCutoff(
        "o3", ("o3",), "2024-06", None,
        source=f"{_OPENAI_MODELS}: Jun 01, 2024 (NOT verified here)", verified=False,
        note="Also matches o3-pro (same base model).",
    ),
    ModelCutoff(
        "o4-mini", ("o4-mini",), "2024-06", None,
        source=f"{_OPENAI_MODELS}: Jun 01, 2024 (NOT verified here)", verified=False,
    ),
    ModelCutoff(
        "SmolLM2-135M-Instruct", ("smollm2",), "2024-11", None,
        source="HuggingFaceTB/SmolLM2-135M-Instruct model card (Hugging Face): no cutoff stated; trained on "
        "FineWeb-Edu, DCLM, The Stack and new filtered datasets (verified); released 2024-11",
        verified=False,
        note="Upper bound only: the release month. The web crawls it was trained on end earlier. "
        "Covers all SmolLM2 sizes (135M, 360M, 1.7B), released together.",
    ),
)


def _normalise(spec: str) -> str:
    """Lower-case; '.', '_', ' ' and ':' become '-' (so 'claude-sonnet-4.5' == 'claude-sonnet-4-5')."""
    return re.sub(r"[._ :]+", "-", spec.strip().lower())


def _pattern_matches(pattern: str, spec: str) -> bool:
    """Whether ``pattern`` occurs in ``spec`` as a whole name, not as the prefix of a newer version.

    The match must start at the beginning or after a non-alphanumeric character and end at the end, or
    before a separator that is not followed by a 1-2 digit minor version (``claude-opus-4`` matches
    ``claude-opus-4-20250514`` but not ``claude-opus-4-6``).
    """
    for m in re.finditer(re.escape(pattern), spec):
        start, end = m.start(), m.end()
        if start > 0 and spec[start - 1].isalnum():
            continue
        rest = spec[end:]
        if rest and rest[0].isalnum():
            continue
        if re.match(r"-\d{1,2}(?!\d)", rest):
            continue
        return True
    return False


#: Moving aliases name whichever model the provider serves today (``chatgpt-4o-latest``,
#: ``claude-3-5-sonnet-latest``, ``gpt-5-chat-latest``): their training cutoff moves with them, so it is unknown.
_MOVING_ALIAS = re.compile(r"(?:^|[-/])latest$|^chatgpt-")


def lookup_model(model_spec: str) -> ModelCutoff | None:
    """The table entry for a model spec, or None if the model is not in the table or is a moving alias.

    Parameters
    ----------
    model_spec : str
        A provider spec or model name, e.g. ``"anthropic/claude-sonnet-4-5-20250929"``,
        ``"openai/gpt-4.1-mini"``, ``"local/smollm2"``. Matching is by name fragment after normalising
        case and separators; the longest matching pattern wins (``gpt-4o-mini`` over ``gpt-4o``).

    Returns
    -------
    ModelCutoff or None
    """
    spec = _normalise(model_spec)
    name = spec.split("/", 1)[-1].split("@", 1)[0]
    if _MOVING_ALIAS.search(name):
        return None
    best: tuple[int, ModelCutoff] | None = None
    for entry in MODEL_CUTOFFS:
        for pat in entry.patterns:
            if (best is None or len(pat) > best[0]) and _pattern_matches(pat, spec):
                best = (len(pat), entry)
    return None if best is None else best[1]


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
