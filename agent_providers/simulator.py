"""The simulator: a seeded simulation of forecasters, a debate and a supervisor. It is not a model.

``get_provider("sim")`` answers every role of the pipeline (forecaster, query writing, bull, bear,
supervisor) with schema-valid JSON, reports deterministic token usage (``ceil(characters / 4)``, as
:class:`ScriptedProvider`) at a cost of $0, and never calls a network. It exists so that the whole
harness (runs, reports, intervals, scale, the leaderboard) can be tried at zero cost, and so that
teaching material can show what each reconciliation method does to forecasts of a *known* quality.
Its leaderboard measures the simulation's parameters, never a model's skill; reports label it
"simulated".

What it knows, and how
----------------------
Forecasters see only the visible question. The simulator is told more, on purpose: its **world**
(:class:`SimWorld`) holds each question's outcome, crowd probability at freeze and source, for the
bundled ForecastBench questions (loaded at first use) plus every question the benchmark runner hands
it (:meth:`SimulatorProvider.bind_questions`). It finds which question a prompt is about from the
prompt's pinned case facts (question text and forecast date: the part every forecaster sees) and
takes everything hidden from its world, never from the prompt. Which role a request plays it reads from the
caller's label (:func:`agent_providers.roles.calling_as`, set by every agent; :func:`request_role`), never
from the prompt's wording. A question its world does not hold
fails the call with :class:`~agent_schemas.BadRequest` (no default probability).

The simulation, per question (all draws are hashed from ``seed`` and the question, so answers are
reproducible whatever the call order):

1. **Anchor** ``p*`` (``anchor=``):

   * ``truth`` (default): a calibrated "true probability" drawn from the outcome ``o``:
     ``p* ~ Beta(k*m + o, k*(1 - m) + 1 - o)``, the posterior of a ``Beta(k*m, k*(1 - m))`` prior
     after seeing ``o``, where ``m`` is the world's yes-rate of the question's source (Laplace
     smoothed). Drawn this way ``p*`` is calibrated wherever the sample's yes-rate is ``m``
     (``P(o = 1 | p*) = p*``), and its expected Brier score is known: ``E[p*(1 - p*)]`` under the
     prior. ``k`` (pseudo-count, > 0) sets the skill: small ``k`` gives sharp, skilful anchors, large
     ``k`` pulls every anchor to ``m``.
   * ``crowd``: the crowd / market probability at freeze (the source's yes-rate ``m`` where there is
     none, e.g. dataset questions; likewise ``truth`` for an unresolved question).
   * ``base``: the source's yes-rate ``m`` (no question-specific information).

2. **Agents.** On the log-odds scale, agent ``a`` (each ensemble member, the debate, the supervisor)
   says ``x_a = scale * logit(p*) + bias + sigma_a * (sqrt(rho) * c + sqrt(1 - rho) * z_a)`` with
   standard normal draws ``c`` (shared by every agent of the question: correlated errors) and ``z_a``
   (the agent's own). ``sigma`` is ``noise`` for members, ``debate_noise`` and ``supervisor_noise``
   (default ``noise``) for the specialists. ``scale > 1`` makes agents over-confident, ``< 1``
   under-confident; ``bias`` shifts them towards Yes (> 0) or No. A member is identified by its
   prompt (persona) and call seed, so two members with the same persona and seed agree.
   Probabilities are answered as integer percents in [1, 99]. A member states a confidence read from
   its own error draw ``z_a`` as the supervisor's is (below): informative by construction.

   **What the errors share: model family and evidence.** The shared term splits by what drives it (issue 37).
   With ``F_f`` the family term of the agent's model family ``f`` (``family=``) and ``E_A`` the evidence term
   of the set ``A`` of search results its prompt shows, the error is::

       sigma_a * (sqrt(rho) * F_f + sqrt(evidence_rho) * E_A + sqrt(1 - rho - evidence_rho) * z_a)

   * ``F_f = a * c' + sqrt(1 - a^2) * h_f`` with ``a^2 = cross_family``: ``c'`` is common to every family,
     ``h_f`` the family's own draw. For the default family (``sim``) ``(c', h_sim)`` is the rotation of
     ``(c, w)`` (``c' = a c + sqrt(1 - a^2) w``, ``h_sim = sqrt(1 - a^2) c - a w``, ``w`` a further draw), so
     ``F_sim = c`` exactly: a default simulator answers what it answered before families existed, and every
     family is distributed alike.
   * ``E_A = sum_{j in A} u_j / sqrt(|A|)``, one standard normal ``u_j`` per (question, result), the result
     named by its URL (its title when it has none) in the prompt's ``<untrusted_search_results>`` blocks (a
     member's numbered results; for the debate and the supervisor under split or private evidence, the results
     each member was shown, so a reconciler shares the evidence of the members it reads); a prompt without
     results counts as the one pseudo-result "no evidence". Agents shown the same results share ``E_A``; agents
     shown disjoint results draw independent terms.

   So the correlation of two agents' log-odds errors is known in closed form
   (:func:`error_correlation_of`)::

       rho * (1 if same family else cross_family)  +  evidence_rho * |A_i & A_j| / sqrt(|A_i| * |A_j|)

   and the mean of ``m`` equally noisy members errs with variance ``sigma^2 * (rho_bar + (1 - rho_bar) / m)``,
   ``rho_bar`` their mean pairwise correlation (:func:`pooled_error_variance`): the less the members share, the
   better their pool. With the default ``evidence_rho = 0`` what members read does not matter (the simulator
   of before issue 37); ``experiment diversity`` on ``sim/evidence_rho=0.3`` makes shared evidence cost what the
   literature says it does.
3. **Debate.** In round ``r`` the bull says ``sigmoid(x_debate + g / 2**(r-1))`` and the bear
   ``sigmoid(x_debate - g / 2**(r-1))`` with ``g = 0.5``: they converge, so the debate's midpoint is
   about ``sigmoid(x_debate)``.
4. **Supervisor.** It names the widest disagreement among the members (and the next one when asked
   for two), proposes the question text as the clarifying search, and decides ``sigmoid(x_sup)``
   with a confidence read from its own error draw: ``high`` when ``|z_sup| < 0.674`` (half of the
   draws), ``medium`` below 1.150 (a quarter), ``low`` otherwise. Confidence is therefore
   informative by construction, which is what the default combination rule assumes.

5. **Member weights** (role ``member_weights``: a hub's supervisor, :mod:`agent_specialists.member_weights`):
   weights ``r^-2 x exp(0.3 z)`` from each member's past relative score ``r`` as the prompt's score lines state
   it (``r = 1`` with fewer than 10 past events; the schema's selection limit keeps the highest), ``z`` seeded by the member and the prompt's question; it needs
   no world and never reads the fenced method summaries.

Other kinds
-----------
Multiple-choice and numeric questions (a question whose world record holds such a spec) are simulated alike in
their kind's form, by :mod:`agent_providers.simulator_kinds` (a Dirichlet anchor drawn from the outcome; a
calibrated normal in the range's locations); binary questions never go there, so their answers are exactly
the ones above. The world keys a question as its prompt shows it (:func:`world_key`: the text, then the
options or range its kind states).

Spec
----
``sim`` or ``sim/<name>=<value>,...`` with the names of :class:`SimParams`, for example
``sim/anchor=crowd,noise=0.8,rho=0.5``. The provider's ``model`` is the full parameter list (recorded
in manifests); its ``spec`` names the parameters that differ from the defaults.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import hashlib
import json
import math
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from statistics import NormalDist
from typing import Any, Literal

from agent_schemas import BadRequest, ChatMessage, Completion, Question, TokenUsage, UnknownProvider
from agent_schemas.kinds import BinarySpec, KindSpec
from agent_providers.base import Provider
from agent_providers.roles import CallRole, call_role
from agent_providers.scripted import count_tokens_approx

#: Registry prefix of the simulator.
SIM_PREFIX = "sim"
#: Standard normal quantiles that split the supervisor's error draws into high / medium / low confidence
#: (|z| below the 75% quantile: half of the draws; below the 87.5% quantile: a further quarter).
CONFIDENCE_Z = (0.6745, 1.1503)
#: Half the bull-bear gap of the first debate round (log-odds); it halves every round.
DEBATE_GAP = 0.5
#: Anchors are kept inside [ANCHOR_EPS, 1 - ANCHOR_EPS] before taking log-odds.
ANCHOR_EPS = 0.005

Anchor = Literal["truth", "crowd", "base"]
#: A request's role: a pipeline call's label (:data:`agent_providers.roles.CallRole`), or "other".
Role = Literal[CallRole, "other"]


@dataclass(frozen=True)
class SimParams:
    """Parameters of the simulation (see the module docstring for the model they drive).

    Attributes
    ----------
    anchor : {"truth", "crowd", "base"}
        What agents are noisy around: a calibrated probability drawn from the outcome, the crowd
        probability at freeze, or the source's yes-rate.
    k : float
        Prior pseudo-count of the ``truth`` anchor (> 0); lower is sharper and more skilful.
    noise : float
        Standard deviation of a member's error on the log-odds scale (>= 0).
    rho : float
        Correlation of the agents' errors on one question, in [0, 1].
    bias : float
        Shift of every agent on the log-odds scale (> 0 towards Yes).
    scale : float
        Multiplier of the anchor's log-odds (> 0): above 1 over-confident, below 1 under-confident.
    debate_noise, supervisor_noise : float or None
        Error standard deviation of the debate and of the supervisor (default: ``noise``).
    seed : int
        Seed of every draw.
    family : str
        The agents' model family (letters, digits, ``-`` and ``_``): agents of one family share the family term of
        their errors (module docstring). Default ``sim``, whose draws are those of before families existed. The
        family and evidence terms apply to binary questions; other kinds keep the one common draw
        (:mod:`agent_providers.simulator_kinds`).
    cross_family : float
        Share of ``rho`` that agents of different families share, in [0, 1] (default 1/3: with ``rho = 0.3`` two
        families' errors correlate 0.1).
    evidence_rho : float
        Correlation two agents' errors gain from being shown the same search results, in [0, 1 - rho] (default 0:
        evidence does not matter). Parameters added with the family and evidence terms are named in
        :meth:`describe` only when set, so the default simulator's model name is unchanged.
    """

    anchor: Anchor = "truth"
    k: float = 2.0
    noise: float = 0.5
    rho: float = 0.3
    bias: float = 0.0
    scale: float = 1.0
    debate_noise: float | None = None
    supervisor_noise: float | None = None
    seed: int = 0
    family: str = "sim"
    cross_family: float = 1 / 3
    evidence_rho: float = 0.0

    def __post_init__(self) -> None:
        problems = []
        if self.anchor not in ("truth", "crowd", "base"):
            problems.append(f"anchor must be truth, crowd or base, got {self.anchor!r}")
        if not self.k > 0:
            problems.append(f"k must be > 0, got {self.k}")
        for name in ("noise", "debate_noise", "supervisor_noise"):
            v = getattr(self, name)
            if v is not None and not v >= 0:
                problems.append(f"{name} must be >= 0, got {v}")
        if not 0 <= self.rho <= 1:
            problems.append(f"rho must be in [0, 1], got {self.rho}")
        if not 0 <= self.cross_family <= 1:
            problems.append(f"cross_family must be in [0, 1], got {self.cross_family}")
        if not 0 <= self.evidence_rho <= 1 - self.rho:
            problems.append(f"evidence_rho must be in [0, 1 - rho] = [0, {1 - self.rho:g}], got {self.evidence_rho}")
        if not re.fullmatch(r"[A-Za-z0-9_\-]{1,40}", self.family):
            problems.append(f"family must be 1-40 letters, digits, '-' or '_', got {self.family!r}")
        if not self.scale > 0:
            problems.append(f"scale must be > 0, got {self.scale}")
        if not all(math.isfinite(getattr(self, f.name)) for f in fields(self) if isinstance(getattr(self, f.name), float)):
            problems.append("parameters must be finite numbers")
        if problems:
            raise UnknownProvider(f"invalid simulator parameters: {'; '.join(problems)}")

    @classmethod
    def parse(cls, text: str | None) -> "SimParams":
        """Parameters from the part of a spec after ``sim/`` (``"anchor=crowd,noise=0.8"``); defaults for ''/None.

        Raises
        ------
        UnknownProvider
            For an unknown name, a value that is not a number (or not an anchor), or a value out of range.
        """
        if not text:
            return cls()
        kinds = {f.name: f for f in fields(cls)}
        values: dict[str, Any] = {}
        for part in text.split(","):
            name, sep, raw = (s.strip() for s in part.partition("="))
            if not sep or name not in kinds:
                raise UnknownProvider(
                    f"simulator spec 'sim/{text}': {part.strip()!r} is not name=value with a name among "
                    f"{', '.join(kinds)} (example: sim/anchor=crowd,noise=0.8)")
            try:
                values[name] = raw if name in ("anchor", "family") else (int(raw) if name == "seed" else float(raw))
            except ValueError:
                raise UnknownProvider(f"simulator spec 'sim/{text}': {name}={raw!r} is not a number") from None
        return cls(**values)

    def describe(self, *, only_changed: bool = False) -> str:
        """``name=value`` pairs joined by commas (every parameter, or only those that differ from the defaults)."""
        default = SimParams()
        parts = []
        for f in fields(self):
            v = getattr(self, f.name)
            if (only_changed or f.name in SHARED_TERM_PARAMS) and v == getattr(default, f.name):
                continue
            if v is None:
                continue
            parts.append(f"{f.name}={_num(v)}")
        return ",".join(parts)


#: Parameters of the family and evidence terms (issue 37), named by :meth:`SimParams.describe` only when set.
SHARED_TERM_PARAMS = ("family", "cross_family", "evidence_rho")


def _num(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


# --- the world -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorldRecord:
    """What the simulator knows about one question and forecasters do not."""

    question_id: str
    source: str
    outcome: int | float | None
    crowd_p_yes: float | None
    spec: KindSpec | None = None
    """The question's kind spec; None for a binary question (the bundled ones)."""
    crowd_forecast: tuple[float, ...] | None = None
    """The crowd's forecast of a non-binary question in its kind's form (e.g. sibling markets' prices)."""

    @property
    def binary(self) -> bool:
        """Whether the question is binary (its outcome 0/1 counts in the source's yes-rate)."""
        return self.spec is None or isinstance(self.spec, BinarySpec)


def question_key(text: str, forecast_date: dt.date | str) -> tuple[str, str]:
    """How a prompt names its question: the stripped question text and the ISO forecast date."""
    date = forecast_date.isoformat() if isinstance(forecast_date, dt.date) else str(forecast_date)
    return text.strip(), date


def world_key(question: Question) -> tuple[str, str]:
    """How a prompt names ``question`` (:func:`question_key` of what its case facts show before the forecast
    date: the text and, for a non-binary question, the lines its kind states below it: options, range)."""
    lines = "".join(f"\n  {line}" for line in question.kind.question_lines(question.spec))
    return question_key(question.text.strip() + lines, question.forecast_date)


class SimWorld:
    """The simulator's knowledge: per question (keyed by :func:`question_key`) its outcome, crowd
    probability and source. Questions with the same text and forecast date (24 pairs in the bundled
    data) are indistinguishable from a prompt: the simulation averages their anchors.
    """

    def __init__(self, records: Iterable[tuple[tuple[str, str], WorldRecord]] = ()) -> None:
        self._by_key: dict[tuple[str, str], dict[str, WorldRecord]] = {}
        self._lock = threading.Lock()
        self._rates: dict[str, float] | None = None
        self._add(records)

    @classmethod
    def from_questions(cls, questions: Iterable[Question]) -> "SimWorld":
        """A world holding ``questions`` (their outcomes and crowd probabilities)."""
        world = cls()
        world.add(questions)
        return world

    @classmethod
    def bundled(cls) -> "SimWorld":
        """A world holding the 18,021 bundled ForecastBench questions (a new, independent object)."""
        return cls(_bundled_records())

    def add(self, questions: Iterable[Question]) -> None:
        """Add (or replace, by question id) the records of ``questions``."""
        self._add((world_key(q),
                   WorldRecord(q.id, q.source, q.outcome, q.crowd_p_yes, q.spec,
                               None if q.crowd_forecast is None else tuple(q.crowd_forecast))) for q in questions)

    def _add(self, records: Iterable[tuple[tuple[str, str], WorldRecord]]) -> None:
        with self._lock:
            for key, rec in records:
                self._by_key.setdefault(key, {})[rec.question_id] = rec
            self._rates = None

    def __len__(self) -> int:
        return sum(len(v) for v in self._by_key.values())

    def lookup(self, text: str, forecast_date: dt.date | str) -> list[WorldRecord]:
        """The records of the question a prompt shows (empty when the world does not hold it)."""
        return list(self._by_key.get(question_key(text, forecast_date), {}).values())

    def yes_rate(self, source: str) -> float:
        """``(yes + 1) / (resolved + 2)`` over the world's resolved questions of ``source`` (Laplace)."""
        rates = self._rates
        if rates is None:
            counts: dict[str, list[int]] = {}
            for recs in list(self._by_key.values()):
                for r in recs.values():
                    if r.outcome is not None and r.binary:
                        c = counts.setdefault(r.source, [0, 0])
                        c[0] += r.outcome
                        c[1] += 1
            rates = {s: (y + 1) / (n + 2) for s, (y, n) in counts.items()}
            self._rates = rates
        return rates.get(source, 0.5)


@functools.lru_cache(maxsize=1)
def _bundled_records() -> tuple[tuple[tuple[str, str], WorldRecord], ...]:
    from agent_tools.datasets import load_forecastbench_questions  # raw read of the bundled parquet

    df = load_forecastbench_questions(columns=["qid", "question", "forecast_due_date", "source", "outcome", "crowd_prob_at_freeze"])
    out = []
    for qid, text, date, source, outcome, crowd in df.itertuples(index=False, name=None):
        crowd_p = None if crowd is None or crowd != crowd else float(crowd)
        o = None if outcome is None or outcome != outcome else int(outcome)
        out.append((question_key(str(text), str(date)[:10]), WorldRecord(str(qid), str(source), o, crowd_p)))
    return tuple(out)


# --- reading a prompt ------------------------------------------------------------------------------

_CASE_FACTS = re.compile(r"^- Question: (?P<text>.*?)\n- Forecast date \(information cutoff\): (?P<date>\d{4}-\d{2}-\d{2})",
                         re.S | re.M)
_MEMBER_LINE = re.compile(r"- (?P<id>[\w.\-]+) \([^)]*\): p_yes (?P<p>\d+)%")
#: A debate prompt's round line ("Round 2 of at most 3"): the round and the round limit.
ROUND_PATTERN = re.compile(r"Round (\d+) of at most (\d+)")
_AGGREGATE = re.compile(r"Ensemble aggregate p_yes: (\d+)%")


def request_role(json_schema: dict[str, Any] | None) -> Role:
    """Which pipeline role a request is: the caller's label (:func:`agent_providers.roles.calling_as`, which every
    agent sets); an unlabelled request by its answer schema's fields alone (``queries``, ``disagreements``, or a
    forecast's ``p_yes_percent``: ``"forecaster"``); else ``"other"``. Never by the prompt's wording, so rewording a
    prompt cannot change what the simulator answers. A debate turn or a supervisor's decision is known only by its
    label (their schemas say no side, and the decision's fields are a forecaster's)."""
    labelled = call_role()
    if labelled is not None:
        return labelled  # type: ignore[return-value]  # call_role() holds a CallRole (calling_as checks it)
    props = set((json_schema or {}).get("properties", {}))
    if "queries" in props:
        return "queries"
    if "disagreements" in props:
        return "disagreements"
    if "p_yes_percent" in props and "argument" not in props:
        return "forecaster"
    return "other"


#: A weighting prompt's past-score line (agent_specialists.member_weights): the member and its relative score.
_TRACK_LINE = re.compile(r"^- (?P<id>\S+): relative score (?P<r>[0-9.]+|none) over (?P<n>\d+) past events$", re.M)
#: Noise of the simulated supervisor's weights (standard deviation on the log scale) and past events it trusts.
WEIGHT_NOISE, WEIGHT_MIN_PAST = 0.3, 10


def _member_weights(messages: Sequence[ChatMessage], json_schema: dict[str, Any] | None) -> str:
    """The simulated supervisor's member weights: ``r^-2 x exp(0.3 z)`` from each member's past relative score
    ``r`` as the prompt states it (``r = 1`` with fewer than :data:`WEIGHT_MIN_PAST` past events), ``z`` a normal
    draw seeded by the member and the prompt's question line, as integer percents; the highest ``maxItems`` of the
    answer schema (the selection limit) are listed. It reads only the prompt's
    score lines (never the fenced method summaries, never an outcome)."""
    text = "\n".join(m.content for m in messages)
    head = text.split("## PAST SCORES", 1)[0]
    raw = {}
    for m in _TRACK_LINE.finditer(text.split("## METHOD SUMMARIES", 1)[0]):
        r = 1.0 if m.group("r") == "none" or int(m.group("n")) < WEIGHT_MIN_PAST else max(float(m.group("r")), 1e-3)
        raw[m.group("id")] = r ** -2.0 * math.exp(WEIGHT_NOISE * seeded_normal("member_weights", head, m.group("id")))
    most = (json_schema or {}).get("properties", {}).get("weights", {}).get("maxItems", len(raw))
    chosen = sorted(raw, key=lambda k: -raw[k])[:most]  # the schema's selection limit: the highest weights
    top = max(raw.values(), default=1.0)
    weights = [{"model": k, "weight_percent": int(round(100 * raw[k] / top)),
                "reason": f"simulated: weight from past relative score, noise {WEIGHT_NOISE} on the log scale"}
               for k in chosen if round(100 * raw[k] / top) > 0]
    return json.dumps({"weights": weights, "summary": "Simulated supervisor, not a model: weights r^-2 with seeded noise."})


#: The family whose family term is the common draw ``c`` of before families existed (module docstring).
DEFAULT_FAMILY = "sim"
#: The pseudo-result of a prompt that shows no search result (its agents share "knowing nothing more").
NO_EVIDENCE = "(no evidence)"
_RESULT_BLOCK = re.compile(r"<untrusted_search_results>(.*?)</untrusted_search_results>", re.S)
#: A result's first line as :func:`agent_tools.render_evidence` writes it: ``[n] title — source, date — url``, or as
#: :func:`agent_tools.evidence.render_member_evidence` lists what each member was shown (for the debate and the
#: supervisor under split or private evidence): ``    - title — source, date — url: snippet``.
_RESULT_LINE = re.compile(r"^(?:\[\d+\] |\s+- )(?P<title>.*) — .* — (?P<url>no url|\S+?)(?:: .*)?$", re.M)


def shown_evidence(messages: Sequence[ChatMessage]) -> list[str]:
    """The search results a prompt shows, each named by its URL (by its title when it has none), in order, once each."""
    names: dict[str, None] = {}
    for m in messages:
        for block in _RESULT_BLOCK.findall(m.content):
            for line in _RESULT_LINE.finditer(block):
                url = line.group("url")
                names[line.group("title") if url == "no url" else url] = None
    return list(names)


def error_correlation_of(params: Sequence[SimParams], evidence: Sequence[Sequence[str]]) -> list[list[float]]:
    """The closed-form correlation matrix of the log-odds errors of agents on one question (module docstring).

    Agent ``i`` runs on a simulator with ``params[i]`` (its family; ``rho`` and ``evidence_rho`` must be equal for
    every agent, ``cross_family`` too when families differ) and is shown the results ``evidence[i]`` (names as
    :func:`shown_evidence` gives them; empty: no result).

    Returns
    -------
    list of list of float, shape (n_agents, n_agents)
        ``rho * (1 or cross_family) + evidence_rho * |A_i & A_j| / sqrt(|A_i| |A_j|)``, ones on the diagonal.

    Raises
    ------
    ValueError
        When the lists differ in length or the agents' ``rho``, ``evidence_rho``, ``cross_family`` or ``seed`` differ
        (their draws would not share the terms the formula assumes).
    """
    if len(params) != len(evidence):
        raise ValueError(f"params and evidence must be as long: {len(params)} vs {len(evidence)}")
    first = params[0] if params else SimParams()
    for q in params:
        if (q.rho, q.evidence_rho, q.cross_family, q.seed) != (first.rho, first.evidence_rho, first.cross_family, first.seed):
            raise ValueError("every agent needs the same rho, evidence_rho, cross_family and seed for the closed form")
    sets = [set(e) or {NO_EVIDENCE} for e in evidence]
    out = []
    for i, (pi, ai) in enumerate(zip(params, sets)):
        row = []
        for j, (pj, aj) in enumerate(zip(params, sets)):
            if i == j:
                row.append(1.0)
                continue
            fam = first.rho * (1.0 if pi.family == pj.family else first.cross_family)
            row.append(fam + first.evidence_rho * len(ai & aj) / math.sqrt(len(ai) * len(aj)))
        out.append(row)
    return out


def pooled_error_variance(noise: float, mean_rho: float, n_members: int) -> float:
    """Variance of the mean of ``n_members`` log-odds errors of standard deviation ``noise`` with mean pairwise
    correlation ``mean_rho``: ``noise^2 * (mean_rho + (1 - mean_rho) / n_members)`` (log-odds units squared; the
    design effect of Kish 1965, section 8.2). The smaller, the better the members' pool.

    Raises
    ------
    ValueError
        If ``n_members < 1``.
    """
    if n_members < 1:
        raise ValueError(f"n_members must be >= 1, got {n_members}")
    return noise ** 2 * (mean_rho + (1 - mean_rho) / n_members)


def member_key(seed: int | None, task: str) -> str:
    """Which member a forecaster request comes from: its call seed and its task text (persona included)."""
    return f"forecaster|{seed}|{hashlib.blake2b(task.encode(), digest_size=6).hexdigest()}"


def _question_in(messages: Sequence[ChatMessage]) -> tuple[str, str] | None:
    for m in messages:
        match = _CASE_FACTS.search(m.content)
        if match:
            return match.group("text"), match.group("date")
    return None


# --- draws ------------------------------------------------------------------------------------------


def seeded_uniform(*parts: Any) -> float:
    """A uniform number in (0, 1) hashed from ``parts`` (the same on every platform and version)."""
    h = hashlib.blake2b("\x1f".join(str(p) for p in parts).encode(), digest_size=8).digest()
    return (int.from_bytes(h, "big") + 0.5) / 2.0**64


def seeded_normal(*parts: Any) -> float:
    """A standard normal number hashed from ``parts`` (the inverse normal CDF of :func:`seeded_uniform`)."""
    return NormalDist().inv_cdf(seeded_uniform(*parts))


def _logit(p: float) -> float:
    p = min(max(p, ANCHOR_EPS), 1 - ANCHOR_EPS)
    return math.log(p / (1 - p))


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))


def _percent(p: float) -> int:
    return int(min(max(round(100 * p), 1), 99))


# --- the provider ------------------------------------------------------------------------------------


class SimulatorProvider(Provider):
    """A simulation of the pipeline's agents behind the provider contract (see the module docstring).

    Parameters
    ----------
    params : SimParams or str, optional
        The simulation's parameters, or their spec text (``"anchor=crowd,noise=0.8"``).
    world : SimWorld, optional
        What the simulation knows; default the bundled ForecastBench questions, loaded at first use.
    latency_s : float
        Simulated latency per call in seconds (default 0).

    Raises
    ------
    UnknownProvider
        For invalid parameters.

    Notes
    -----
    Calls cost 0.0 USD; usage is ``ceil(len(text) / 4)`` tokens per message and answer, one call each.
    A call fails with :class:`~agent_schemas.BadRequest` when its prompt names a question the world
    does not hold; an answer longer than ``max_tokens`` is cut (stop reason ``length``, which the
    pipeline records as a truncated answer), as a model's would be.
    """

    name = SIM_PREFIX
    supports_json_schema = True
    default_model = "default"

    def __init__(self, params: SimParams | str | None = None, *, world: SimWorld | None = None, latency_s: float = 0.0) -> None:
        self.params = params if isinstance(params, SimParams) else SimParams.parse(params)
        super().__init__(self.params.describe())
        self._world = world
        self._world_lock = threading.Lock()
        self.latency_s = latency_s

    @property
    def spec(self) -> str:
        changed = self.params.describe(only_changed=True)
        return SIM_PREFIX + (f"/{changed}" if changed else "")

    @property
    def world(self) -> SimWorld:
        """The simulation's world (the bundled questions are loaded at first use)."""
        if self._world is None:
            with self._world_lock:
                if self._world is None:
                    self._world = SimWorld.bundled()
        return self._world

    def bind_questions(self, questions: Iterable[Question]) -> None:
        """Hand the simulator the harness's records of ``questions`` (outcome included): the benchmark
        runner calls this for the questions of a run, so user question files can be simulated too."""
        self.world.add(questions)

    # --- the simulation ----------------------------------------------------------------------------
    def anchor(self, records: Sequence[WorldRecord]) -> float:
        """The anchor ``p*`` of a question (the mean over indistinguishable records), in (0, 1); an
        unresolved question (``truth``) or one without a crowd probability (``crowd``) gets the yes-rate ``m``."""
        p = self.params
        values = []
        for r in records:
            m = self.world.yes_rate(r.source)
            if p.anchor == "crowd" and r.crowd_p_yes is not None:
                values.append(r.crowd_p_yes)
            elif p.anchor == "truth" and r.outcome is not None:
                values.append(_beta_quantile(p.k * m + r.outcome, p.k * (1 - m) + 1 - r.outcome,
                                             seeded_uniform(p.seed, "anchor", r.question_id)))
            else:
                values.append(m)
        return sum(values) / len(values)

    def agent_logodds(self, anchor: float, key: tuple[str, str], agent: str, sigma: float,
                      evidence: Sequence[str] = ()) -> tuple[float, float]:
        """``(x, z)``: an agent's log-odds and its own standard normal error draw.

        ``evidence`` names the search results the agent's prompt shows (:func:`shown_evidence`); it matters only
        with ``evidence_rho > 0`` (module docstring).
        """
        p = self.params
        shared = self.family_term(key)
        own = seeded_normal(p.seed, "agent", agent, *key)
        if p.evidence_rho == 0:
            err = math.sqrt(p.rho) * shared + math.sqrt(1 - p.rho) * own
        else:
            err = (math.sqrt(p.rho) * shared + math.sqrt(p.evidence_rho) * self.evidence_term(key, evidence)
                   + math.sqrt(1 - p.rho - p.evidence_rho) * own)
        x = p.scale * _logit(anchor) + p.bias + sigma * err
        return x, own

    def family_term(self, key: tuple[str, str]) -> float:
        """``F_f``: the standard normal error term every agent of this simulator's family shares on question ``key``
        (module docstring); ``c`` itself for the default family."""
        p = self.params
        c = seeded_normal(p.seed, "common", *key)
        if p.family == DEFAULT_FAMILY:
            return c
        a = math.sqrt(p.cross_family)
        b = math.sqrt(1 - p.cross_family)
        across = a * c + b * seeded_normal(p.seed, "across-families", *key)
        return a * across + b * seeded_normal(p.seed, "family", p.family, *key)

    def evidence_term(self, key: tuple[str, str], evidence: Sequence[str]) -> float:
        """``E_A``: the standard normal error term of being shown the results ``evidence`` on question ``key``
        (``sum u_j / sqrt(|A|)``; no result counts as the pseudo-result :data:`NO_EVIDENCE`)."""
        items = sorted(set(evidence)) or [NO_EVIDENCE]
        return sum(seeded_normal(self.params.seed, "evidence", item, *key) for item in items) / math.sqrt(len(items))

    def latent_p(self, question: Question) -> float:
        """The anchor ``p*`` the simulation uses for ``question`` (for teaching and tests).

        Raises
        ------
        ValueError
            For a question that is not binary (:func:`agent_providers.simulator_kinds.member_forecasts` simulates those).
        BadRequest
            When the world does not hold the question.
        """
        _binary_only(question)
        return self.anchor(self.world_records(world_key(question)))

    def member_panel(self, questions: Sequence[Question], n_members: int) -> list[list[float]]:
        """Members' p_yes for ``questions`` as the simulation draws them, without prompts (for teaching and tests).

        Member ``i`` is the agent ``panel-i``: the harness's member model exactly (anchor, ``scale``,
        ``bias``, ``noise``, and the question's error ``c`` that every agent shares, weighted by ``rho``)
        with its own draw ``z``. A member of a harness run is named by its prompt and seed instead
        (:func:`member_key`), so its draws differ from these but follow the same distribution; with
        ``rho=1`` (no own error) they are equal. Values are what a member answers: integer percents in
        [1, 99], divided by 100.

        Parameters
        ----------
        questions : sequence of Question, length n_questions
            Questions the world holds (the bundled ones, or those given to :meth:`bind_questions`).
        n_members : int
            Members per question (>= 1).

        Returns
        -------
        list of list of float, shape (n_questions, n_members)
            p_yes in [0.01, 0.99]; ``numpy.asarray`` of it is the ``(n_questions, n_members)`` panel that
            :mod:`agent_research.aggregation` takes.

        Raises
        ------
        ValueError
            If ``n_members < 1`` or a question is not binary.
        BadRequest
            When the world does not hold a question.
        """
        if n_members < 1:
            raise ValueError(f"n_members must be >= 1, got {n_members}")
        rows = []
        for q in questions:
            _binary_only(q)
            key = world_key(q)
            anchor = self.anchor(self.world_records(key))
            rows.append([_percent(_sigmoid(self.agent_logodds(anchor, key, f"panel-{i}", self.params.noise)[0])) / 100
                         for i in range(n_members)])
        return rows

    def world_records(self, key: tuple[str, str]) -> list[WorldRecord]:
        """The world's records of a question ``(text, forecast date)``; raises BadRequest when it has none."""
        records = self.world.lookup(*key)
        if not records:
            raise BadRequest(
                f"{self.spec}: the question {key[0][:80]!r} (forecast date {key[1]}) is not in the simulator's world; "
                "the world holds the bundled ForecastBench questions and the questions of a benchmark run. "
                "In Python pass world=SimWorld.from_questions([...]) or call bind_questions()",
                provider=self.spec, model=self.model)
        return records

    def answer(self, messages: Sequence[ChatMessage], json_schema: dict[str, Any] | None, seed: int | None) -> str:
        """The simulated answer text of one request (deterministic)."""
        role = request_role(json_schema)
        if role == "member_weights":
            return _member_weights(messages, json_schema)
        found = _question_in(messages)
        if role == "other" or found is None:
            note = ("forecast-reconcile simulator (not a language model): it answers the forecasting roles "
                    "(forecaster, bull, bear, supervisor, query writing) of prompts that show a question's case facts")
            return json.dumps({"note": note}) if json_schema else note
        key = question_key(*found)
        text = key[0]
        if role == "queries":
            held = self.world.lookup(*key)
            if held and not held[0].binary:  # the question's first line, without its options or range
                text = text.split("\n", 1)[0]
            return json.dumps({"queries": [" ".join(text.split())[:80]]})
        records = self.world_records(key)
        if not records[0].binary:
            from agent_providers.simulator_kinds import KIND_SIMULATIONS  # noqa: PLC0415  (it imports this module)

            return KIND_SIMULATIONS[records[0].spec.kind].answer(self, role, records, key, messages, json_schema, seed)
        anchor = self.anchor(records)
        p = self.params
        tail = messages[-1].content
        seen = shown_evidence(messages) if p.evidence_rho else ()
        if role == "forecaster":
            x, own = self.agent_logodds(anchor, key, member_key(seed, tail), p.noise, seen)
            err = x - (p.scale * _logit(anchor) + p.bias)
            return json.dumps({
                "rationale": f"Simulated forecaster, not a model: a seeded draw around the simulation's anchor "
                             f"(anchor={p.anchor}), error {err:+.2f} on the log-odds scale.",
                "key_evidence": [], "confidence": stated_confidence(own), "p_yes_percent": _percent(_sigmoid(x))})
        if role in ("bull", "bear"):
            x, _ = self.agent_logodds(anchor, key, "debate", p.noise if p.debate_noise is None else p.debate_noise, seen)
            rnd = ROUND_PATTERN.search(tail)
            r = int(rnd.group(1)) if rnd else 1
            gap = DEBATE_GAP / 2 ** (r - 1)
            q = _percent(_sigmoid(x + gap if role == "bull" else x - gap))
            agg = _AGGREGATE.search(tail)
            start = f"the ensemble's {agg.group(1)}%" if agg else "the estimate"
            direction = "higher" if role == "bull" else "lower"
            return json.dumps({
                "argument": f"Simulated {role}, round {r}: argues for a {direction} probability than {start}; "
                            f"moves to {q}% (the sides converge each round).",
                "key_evidence": [], "p_yes_percent": q})
        members = [(m.group("id"), int(m.group("p"))) for m in _MEMBER_LINE.finditer("\n".join(x.content for x in messages))]
        if role == "disagreements":
            n = (json_schema or {}).get("properties", {}).get("disagreements", {}).get("maxItems", 1)
            return json.dumps({"disagreements": _disagreements(members, text, n)})
        x, own = self.agent_logodds(anchor, key, "supervisor", p.noise if p.supervisor_noise is None else p.supervisor_noise, seen)
        confidence = stated_confidence(own)
        supported, gaps = tail.count("-> SUPPORTED:"), tail.count("-> GAP:")
        span = f"members {min(q for _, q in members)}-{max(q for _, q in members)}%" if members else "no member answers"
        return json.dumps({
            "rationale": f"Simulated supervisor: {span}; {supported} disagreement(s) supported, {gaps} gap(s); "
                         f"own draw {_percent(_sigmoid(x))}%, confidence {confidence} (|z|={abs(own):.2f}).",
            "key_evidence": [], "confidence": confidence, "p_yes_percent": _percent(_sigmoid(x))})

    def _simulate(self, messages: list[ChatMessage], json_schema: dict[str, Any] | None, max_tokens: int | None,
                  seed: int | None) -> Completion:
        text = self.answer(messages, json_schema, seed)
        usage = TokenUsage(input_tokens=sum(count_tokens_approx(m.content) for m in messages),
                           output_tokens=count_tokens_approx(text), calls=1, cost_usd=0.0)
        stop: Literal["stop", "length"] = "stop"
        if max_tokens is not None and usage.output_tokens > max_tokens:  # cut like a model at its token limit
            text, stop = text[: 4 * max_tokens], "length"
        return Completion(text=text, usage=usage, model=self.model, provider=self.spec, stop_reason=stop)

    def _complete(self, messages, *, json_schema, temperature, max_tokens, seed) -> Completion:
        if self.latency_s:
            import time

            time.sleep(self.latency_s)
        return self._simulate(messages, json_schema, max_tokens, seed)

    async def _acomplete(self, messages, *, json_schema, temperature, max_tokens, seed) -> Completion:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        return self._simulate(messages, json_schema, max_tokens, seed)


def _binary_only(question: Question) -> None:
    if not isinstance(question.spec, BinarySpec):
        raise ValueError(f"question {question.id!r} is {question.spec.kind}, not binary: its members are simulated by "
                         "agent_providers.simulator_kinds.member_forecasts")


def stated_confidence(own: float) -> str:
    """The confidence an agent states from its own standard normal error draw: "high" when ``|own|`` is below
    the 75% quantile (half of the draws), "medium" below the 87.5% quantile (a quarter), else "low"."""
    return "high" if abs(own) < CONFIDENCE_Z[0] else "medium" if abs(own) < CONFIDENCE_Z[1] else "low"


def _disagreements(members: list[tuple[str, int]], text: str, max_items: int) -> list[dict[str, Any]]:
    """The widest gap among the members (and, when two may be named, the median member against the
    farther extreme), each with the question text as the clarifying query (schema field lengths kept)."""
    query = " ".join(text.split())[:50]
    if len(members) < 2:
        return [{"topic": "how likely Yes is", "description": "only one member answered", "agents": [m[0] for m in members][:2],
                 "query": query}]
    ranked = sorted(members, key=lambda m: (m[1], m[0]))
    lo, hi = ranked[0], ranked[-1]
    out = [{"topic": "how likely Yes is", "description": f"{lo[0]} says {lo[1]}%, {hi[0]} says {hi[1]}%"[:80],
            "agents": [lo[0][:12], hi[0][:12]], "query": query}]
    if max_items >= 2 and len(ranked) >= 3:
        mid = ranked[len(ranked) // 2]
        far = lo if mid[1] - lo[1] > hi[1] - mid[1] else hi
        out.append({"topic": "how far to move from the median", "description": f"{mid[0]} says {mid[1]}%, {far[0]} says {far[1]}%"[:80],
                    "agents": [mid[0][:12], far[0][:12]], "query": query[:44].rstrip() + " odds"})
    return out


def _beta_quantile(a: float, b: float, u: float) -> float:
    """The ``u`` quantile of ``Beta(a, b)`` (scipy's regularised incomplete beta inverse)."""
    from scipy.special import betaincinv

    return float(betaincinv(a, b, u))


def is_simulated(spec: str) -> bool:
    """True for specs of the simulator (``sim`` or ``sim/...``)."""
    return spec == SIM_PREFIX or spec.startswith(SIM_PREFIX + "/")


#: One line that labels results of the simulator wherever they are shown.
SIMULATION_NOTE = ("SIMULATED: the 'sim' provider is a seeded simulation, not a model; these scores measure the "
                   "simulation's parameters (anchor, noise, correlation, bias), not any model's forecasting skill.")


def implied_extremizing_factor(params: SimParams, sources: Sequence[tuple[float, float, float]], n_members: int, *,
                               n_draws: int = 400_000, seed: int = 0) -> float:
    """The extremizing factor ``d`` the simulation implies for ``n_members`` members (``anchor=truth``): the
    population maximum-likelihood ``d`` of ``sigmoid(d * mean_i logit p_i)``, the value
    :func:`agent_research.aggregation.fit_extremizing_factor` approaches as the resolved questions grow.

    Derivation. Members say ``x_i = s*L + b + sigma*(sqrt(rho)*c + sqrt(1 - rho)*z_i)`` with ``L = logit(p*)``
    (module docstring), so their mean log-odds is ``x = s*L + b + e`` with ``e ~ N(0, tau^2)``,
    ``tau^2 = sigma^2 * (rho + (1 - rho) / n_members)``: averaging removes the members' own errors but not
    the shared one. Without noise and bias ``P(Yes | x) = sigmoid(L) = sigmoid(x / s)``, so ``d = 1 / s``
    exactly (members who shrink the log-odds by ``s`` are undone by ``1 / s``). Noise attenuates it: for a
    Gaussian ``L`` the regression of ``L`` on ``x`` has slope ``Var(sL) / (s * (Var(sL) + tau^2))``, so
    ``d ~ (1 / s) * Var(sL) / (Var(sL) + tau^2)`` (regression dilution), less again for the logistic link.
    With Beta-distributed anchors, clipping and integer-percent answers no closed form is exact, so this
    computes it numerically: ``n_draws`` questions drawn from the simulation's own distributions (outcome
    ``o``, then ``p* | o ~ Beta(k*m + o, k*(1 - m) + 1 - o)``, the shared and own errors, percents rounded as
    the simulator answers), and the ``d`` in [0, 10] minimising their mean log loss (bounded Brent).

    Parameters
    ----------
    params : SimParams
        The simulation (``anchor`` must be ``truth``); ``noise``, ``rho``, ``scale``, ``bias`` and ``k`` are used.
    sources : sequence of (m, f, share)
        Per source of the scored questions: the world's yes-rate ``m`` (the anchor's prior mean, in (0, 1)),
        the frequency ``f`` of Yes among the scored questions, and the source's share of them (weights).
    n_members : int
        Members averaged (>= 1).
    n_draws : int
        Simulated questions (the Monte Carlo error of ``d`` is about 0.01 at the default 400,000).
    seed : int
        Seed of the draws.

    Returns
    -------
    float
        The implied ``d``.

    Raises
    ------
    ValueError
        For another anchor, no source, shares that do not sum to a positive number, or ``n_members < 1``.
    """
    import numpy as np
    from scipy import optimize, special

    if params.anchor != "truth":
        raise ValueError(f"the implied d is defined for anchor=truth, got anchor={params.anchor}")
    if n_members < 1 or not sources or sum(s for _, _, s in sources) <= 0:
        raise ValueError("need n_members >= 1 and at least one source with a positive share")
    rng = np.random.default_rng(seed)
    total = sum(s for _, _, s in sources)
    xs, os = [], []
    for m, f, share in sources:
        n = max(int(round(n_draws * share / total)), 1)
        o = (rng.random(n) < f).astype(float)
        p_star = rng.beta(params.k * m + o, params.k * (1 - m) + 1 - o)
        logit = special.logit(np.clip(p_star, ANCHOR_EPS, 1 - ANCHOR_EPS))
        err = math.sqrt(params.rho) * rng.standard_normal(n)[:, None] + math.sqrt(1 - params.rho) * rng.standard_normal((n, n_members))
        x = params.scale * logit[:, None] + params.bias + params.noise * err
        pct = np.clip(np.round(100 * special.expit(x)), 1, 99) / 100
        xs.append(special.logit(pct).mean(axis=1))
        os.append(o)
    xbar, sign = np.concatenate(xs), 2 * np.concatenate(os) - 1

    def mean_log_loss(d: float) -> float:
        return float(np.logaddexp(0.0, -d * sign * xbar).mean())

    return float(optimize.minimize_scalar(mean_log_loss, bounds=(0.0, 10.0), method="bounded", options={"xatol": 1e-6}).x)
