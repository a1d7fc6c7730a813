"""DebateAgent: bull vs bear rounds until consensus or ``max_rounds``.

Each round the bull (arguing for a higher probability) answers the bear's last argument, then the
bear (arguing for a lower one) answers the bull's argument of the same round. The debate stops early
when both sides' probabilities are within ``consensus_threshold`` of each other. Its probability is the
midpoint of the final bull and bear probabilities (each side's last successfully parsed answer),
a symmetric reconciliation in the spirit of Du et al. 2023, "Improving Factuality and Reasoning in
Language Models through Multiagent Debate" (arXiv:2305.14325).

On a question of another kind (:mod:`agent_schemas.kinds`) each side gives a whole forecast of that kind:
on a multiple-choice question the bull argues that the estimate's leading option is more likely than the
estimate says and the bear that it is less; on a numeric one, that the value lies higher or lower than
the estimate's median (:meth:`~agent_schemas.kinds.base.QuestionKind.debate_claim`). The sides agree when
their forecasts are within ``consensus_threshold`` (:meth:`~agent_schemas.kinds.base.QuestionKind.spread`),
and the debate's forecast is the mean of the two final forecasts (their linear pool; for binary, the midpoint).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from agent_providers import Ask, Provider, calling_as, provider_ask, run_sync, spent_usage
from agent_schemas import (
    AgentSummary,
    ChatMessage,
    DebateArtifact,
    DebateRound,
    DebateTurn,
    EvidenceItem,
    Question,
    ReconcileError,
    TokenUsage,
    VisibleQuestion,
    as_reconcile_error,
    as_visible,
)
from agent_schemas.kinds import BinarySpec, KindSpec, kind_of
from agent_specialists import prompts
from agent_specialists.member_cases import render_member_cases
from agent_tools.parsing import parse_answer
from agent_tools.case_facts import stable_prefix
from agent_tools.provenance import attach_provenance

Side = Literal["bull", "bear"]


class DebateAgent:
    """Structured bull/bear debate over an ensemble's disagreement.

    Parameters
    ----------
    llm : Provider
        Provider for both sides (``bull_llm`` / ``bear_llm`` override per side).
    max_rounds : int
        Maximum rounds (each round is one bull and one bear call).
    consensus_threshold : float
        Stop when ``|p_bull - p_bear| < consensus_threshold`` (probability units, in (0, 1)).
    temperature, max_tokens
        Passed to the provider (max_tokens in tokens).

    Raises
    ------
    ValueError
        If ``max_rounds < 1`` or ``consensus_threshold`` is not in (0, 1).
    """

    def __init__(
        self,
        llm: Provider,
        max_rounds: int = 3,
        consensus_threshold: float = 0.05,
        *,
        bull_llm: Provider | None = None,
        bear_llm: Provider | None = None,
        temperature: float | None = None,
        max_tokens: int | None = 400,
        seed: int | None = None,
    ) -> None:
        if max_rounds < 1:
            raise ValueError(f"max_rounds must be >= 1, got {max_rounds}")
        if not 0 < consensus_threshold < 1:
            raise ValueError(f"consensus_threshold must be in (0, 1), got {consensus_threshold}")
        self.llms: dict[Side, Provider] = {"bull": bull_llm or llm, "bear": bear_llm or llm}
        self.max_rounds = max_rounds
        self.consensus_threshold = consensus_threshold
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed

    def build_messages(
        self,
        side: Side,
        question: VisibleQuestion,
        agent_summaries: Sequence[AgentSummary],
        aggregate_p_yes: float | list[float] | None,
        opponent_last: DebateTurn | None,
        own_last: DebateTurn | None,
        round_number: int,
    ) -> list[ChatMessage]:
        """Prompt of one side in one round: :func:`agent_tools.case_facts.stable_prefix` with the member
        cases as context (:func:`~agent_specialists.member_cases.render_member_cases`: their summaries, and what each
        was shown under split or private evidence; identical for both sides, every round, and the supervisor), then this
        side's role, the current estimate (``aggregate_p_yes``: the aggregate in the kind's stored form),
        its last position and the opponent's last argument (structured and short, not a transcript; fenced
        as untrusted agent text), and the task."""
        spec, kind = question.spec, question.kind
        estimate = kind.vector(aggregate_p_yes)
        turn = [
            prompts.debate_role(side, spec, estimate),
            f"## CURRENT ESTIMATE\nEnsemble aggregate{kind.estimate_text(spec, estimate)}. Round {round_number} of at most {self.max_rounds}.",
        ]
        so_far = prompts.render_debate_so_far(side, own_last, opponent_last, spec)
        if so_far is not None:
            turn.append(so_far)
        turn.append(prompts.debate_task(spec))
        context = render_member_cases(agent_summaries, spec)
        return stable_prefix(question, context) + [ChatMessage(role="user", content="\n\n".join(turn))]

    def call_params(self, n_sources: int = 0, spec: KindSpec = BinarySpec()) -> dict[str, Any]:
        """Provider call options of a turn on a question of ``spec`` whose prompt numbers ``n_sources`` member
        evidence items (answer schema, temperature, max_tokens, seed)."""
        return dict(json_schema=prompts.debate_schema(n_sources, spec), temperature=self.temperature,
                    max_tokens=self.max_tokens, seed=self.seed)

    @staticmethod
    def turn_from_answer(side: Side, text: str | None, usage: TokenUsage, error: BaseException | None = None,
                         *, sources: Sequence[EvidenceItem] = (), spec: KindSpec = BinarySpec()) -> DebateTurn:
        """One side's :class:`DebateTurn` from its answer ``text`` (or the ``error`` the call raised).

        ``sources`` are the members' evidence items it was shown, numbered as the prompt numbers them
        (:func:`agent_specialists.prompts.summary_sources`): evidence citing ``[n]`` takes the n-th's URL, and
        dates come only from them (dated by the members' searches;
        :func:`agent_tools.provenance.attach_provenance`): a date the side states itself is dropped.

        An answer that cannot be parsed, or any exception of the call, gives a failed turn with the typed
        error (:func:`agent_schemas.as_reconcile_error`); spent tokens count. The answer is read as a forecast
        of ``spec``'s kind (:func:`agent_tools.parsing.parse_answer`).
        """
        if error is None:
            try:
                parsed = parse_answer(text or "", spec, sources=sources)
            except Exception as exc:
                error = exc
        if error is not None:
            return DebateTurn(side=side, status="failed", error=as_reconcile_error(error).to_info(), usage=usage + spent_usage(error))
        argument = str(parsed.data.get("argument") or parsed.rationale or "")
        return DebateTurn(side=side, argument=argument, p_yes=parsed.p_yes, distribution=parsed.distribution,
                          key_evidence=attach_provenance(parsed.key_evidence, sources), usage=usage)

    def is_consensus(self, bull: DebateTurn, bear: DebateTurn, spec: KindSpec = BinarySpec()) -> bool:
        """Both sides answered and their forecasts are within ``consensus_threshold`` (``|p_bull - p_bear|``
        for binary; the kind's :meth:`~agent_schemas.kinds.base.QuestionKind.spread` of the two)."""
        if bull.status != "ok" or bear.status != "ok":
            return False
        kind = kind_of(spec)
        return kind.spread(spec, [kind.forecast_of(bull), kind.forecast_of(bear)]) < self.consensus_threshold

    def artifact(self, question: VisibleQuestion, aggregate_p_yes: float | list[float] | None, rounds: list[DebateRound],
                 t0: float) -> DebateArtifact:
        """The :class:`DebateArtifact` of the rounds played (``t0``: ``time.perf_counter()`` at the start).

        Each side's final forecast is its last successfully parsed one; ``p_yes`` (``distribution`` for another
        kind) is their midpoint, None (status "failed") when a side never answered.
        """
        kind = question.kind
        final: dict[str, Any] = {"bull": None, "bear": None}
        for rd in rounds:
            for side in ("bull", "bear"):
                turn = getattr(rd, side)
                if turn.status == "ok":
                    final[side] = kind.forecast_of(turn)
        consensus = bool(rounds) and rounds[-1].consensus
        usage_by_role = {side: TokenUsage.sum(getattr(rd, side).usage for rd in rounds) for side in ("bull", "bear")}
        both = final["bull"] is not None and final["bear"] is not None
        error = None
        if not both:
            missing = [s for s in ("bull", "bear") if final[s] is None]
            error = ReconcileError(f"debate produced no parseable probability for: {', '.join(missing)}").to_info()
        return DebateArtifact(
            question_id=question.id,
            **kind.fields(kind.vector(aggregate_p_yes), prefix="aggregate_"),
            rounds=rounds,
            bull_final_probability=kind.value(final["bull"]),
            bear_final_probability=kind.value(final["bear"]),
            **kind.fields((final["bull"] + final["bear"]) / 2 if both else None),
            consensus_reached=consensus,
            early_termination=consensus and len(rounds) < self.max_rounds,
            consensus_threshold=self.consensus_threshold,
            n_failed_turns=sum((rd.bull.status == "failed") + (rd.bear.status == "failed") for rd in rounds),
            usage=usage_by_role["bull"] + usage_by_role["bear"],
            usage_by_role=usage_by_role,
            status="ok" if both else "failed",
            error=error,
            wall_time_s=time.perf_counter() - t0,
        )

    # --- one turn, one round ---------------------------------------------------------------------
    @staticmethod
    def last_turns(rounds: Sequence[DebateRound], bull: DebateTurn | None = None) -> dict[Side, DebateTurn | None]:
        """Each side's last successful turn in ``rounds`` (and ``bull``, the current round's bull turn, if
        given): what the next speaker answers and what it said last. None for a side with no ok turn yet."""
        last: dict[Side, DebateTurn | None] = {"bull": None, "bear": None}
        for turn in [t for rd in rounds for t in (rd.bull, rd.bear)] + ([bull] if bull is not None else []):
            if turn.status == "ok":
                last[turn.side] = turn
        return last

    def turn_request(
        self,
        side: Side,
        question: VisibleQuestion,
        agent_summaries: Sequence[AgentSummary],
        aggregate_p_yes: float | list[float] | None,
        rounds: Sequence[DebateRound],
        bull: DebateTurn | None = None,
    ) -> tuple[list[ChatMessage], dict[str, Any]]:
        """Messages and call options of ``side``'s turn in round ``len(rounds) + 1`` (for the bear, ``bull`` is
        the bull turn of the same round): :meth:`build_messages` with each side's last successful turn."""
        last = self.last_turns(rounds, bull)
        opponent: Side = "bear" if side == "bull" else "bull"
        messages = self.build_messages(side, question, agent_summaries, aggregate_p_yes, last[opponent], last[side], len(rounds) + 1)
        return messages, self.call_params(len(prompts.summary_sources(agent_summaries)), question.spec)

    async def aturn(
        self,
        side: Side,
        question: VisibleQuestion,
        agent_summaries: Sequence[AgentSummary],
        aggregate_p_yes: float | list[float] | None,
        rounds: Sequence[DebateRound],
        bull: DebateTurn | None = None,
        *,
        ask: Ask | None = None,
    ) -> DebateTurn:
        """Play ``side``'s turn of the next round (:meth:`turn_request`, one call, :meth:`turn_from_answer`).

        Never raises for a failure of the turn (provider, cache, prompt or parser): it is a failed turn
        with its typed error and spent tokens. ``ask`` routes the call (default: the side's provider).
        """
        try:
            messages, options = self.turn_request(side, question, agent_summaries, aggregate_p_yes, rounds, bull)
            with calling_as(side):
                text, usage = await (ask or provider_ask(self.llms[side]))(messages, options)
        except Exception as exc:  # provider, cache or prompt: a failed turn, not a failed debate
            return self.turn_from_answer(side, None, TokenUsage(), exc)
        return self.turn_from_answer(side, text, usage, sources=prompts.summary_sources(agent_summaries), spec=question.spec)

    def close_round(self, rounds: Sequence[DebateRound], bull: DebateTurn, bear: DebateTurn,
                    spec: KindSpec = BinarySpec()) -> DebateRound:
        """The :class:`DebateRound` that follows ``rounds``, with its consensus flag (:meth:`is_consensus`)."""
        return DebateRound(round_number=len(rounds) + 1, bull=bull, bear=bear, consensus=self.is_consensus(bull, bear, spec))

    def is_over(self, rounds: Sequence[DebateRound]) -> bool:
        """True after a round that reached consensus, or after ``max_rounds`` rounds."""
        return bool(rounds) and (rounds[-1].consensus or len(rounds) >= self.max_rounds)

    # --- run ---------------------------------------------------------------------------------------
    async def arun(
        self,
        question: VisibleQuestion | Question,
        agent_summaries: Sequence[AgentSummary],
        aggregate_p_yes: float | list[float] | None,
        *,
        asks: Mapping[str, Ask] | None = None,
    ) -> DebateArtifact:
        """Run the debate (async); parameters and result as in :meth:`run`. Never raises for a failed turn
        (provider, parser, cache or any other exception): it is recorded with its typed error and spent
        tokens, and the debate goes on. A :class:`Question` is reduced to its visible part first.
        ``asks`` maps "bull" / "bear" to how that side's calls reach a model (default: the side's provider).
        """
        question = as_visible(question)
        asks = asks or {}
        t0 = time.perf_counter()
        rounds: list[DebateRound] = []
        while not self.is_over(rounds):
            bull = await self.aturn("bull", question, agent_summaries, aggregate_p_yes, rounds, ask=asks.get("bull"))
            bear = await self.aturn("bear", question, agent_summaries, aggregate_p_yes, rounds, bull, ask=asks.get("bear"))
            rounds.append(self.close_round(rounds, bull, bear, question.spec))
        return self.artifact(question, aggregate_p_yes, rounds, t0)

    def run(
        self, question: VisibleQuestion | Question, agent_summaries: Sequence[AgentSummary], aggregate_p_yes: float | list[float] | None
    ) -> DebateArtifact:
        """Synchronous form of :meth:`arun`.

        Parameters
        ----------
        question : Question
        agent_summaries : sequence of AgentSummary
            ``Forecast.summary()`` of each member (failed members may be included; shown as failed).
        aggregate_p_yes : float or None
            The ensemble aggregate in [0, 1] the debate starts from.

        Returns
        -------
        DebateArtifact
            ``p_yes`` is the midpoint of the final bull and bear probabilities, None (status
            "failed") when a side never produced a parseable answer.
        """
        return run_sync(self.arun(question, agent_summaries, aggregate_p_yes))
