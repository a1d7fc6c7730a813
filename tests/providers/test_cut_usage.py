"""A call cut by a deadline or a cancellation keeps every attempt it made, in the ledger of its question.

The adapters run on the real SDKs against the loopback fake server (:class:`tests.providers.conftest.FakeAPI`),
whose count of the replies it served (:meth:`FakeAPI.billed`) is the oracle: every 200 reply the server sent is
either a billed call in the question's ledger (with its tokens) or, when the caller stopped waiting for it,
an unanswered call (tokens unknown). Each row is one way a member is cut.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import pytest

from agent_providers import get_provider
from agent_providers.retry import RetryingProvider, RetryPolicy
from agent_research import Ensemble, ForecasterAgent, ForecastPipeline
from agent_schemas import TokenUsage
from agent_tools import ToolExecutor
from benchmarks.harness.cost_cap import MeteredProvider, SpendMeter
from tests.helpers import FixedSearch, make_question

pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

OVERLOADED = '{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}'


#: 4 attempts; the waits between them are :class:`Waits` (the retry layer's delays are tested in test_retry.py).
POLICY = RetryPolicy(max_attempts=4, base_delay_s=0.5, max_delay_s=10.0, jitter=0.0)


class Waits:
    """The retry layer's ``async_sleep``: the first ``n_quick`` waits end at once, the next lasts until a deadline or a
    cancellation cuts it (so where the cut falls does not depend on how fast a loaded machine runs); ``blocked`` is
    set when that wait begins."""

    def __init__(self, n_quick: int) -> None:
        self.n_quick = n_quick
        self.done = 0
        self.blocked = asyncio.Event()

    async def __call__(self, seconds: float) -> None:
        self.done += 1
        if self.done > self.n_quick:
            self.blocked.set()
            await asyncio.Event().wait()


@dataclass(frozen=True)
class Cut:
    """One way a member is cut: the replies the server gives in order (status, body kind, delay in s), how many retry
    waits pass before the one the deadline cuts, the member's deadline (s) and the usage its question's ledger must
    show."""

    name: str
    api: str
    replies: tuple[tuple[int, str, float], ...]
    quick_waits: int
    deadline_s: float
    expected: TokenUsage
    llm_queries: bool = False


CUTS = [
    # the case: three billed empty answers, the deadline falls in the wait before the fourth attempt
    Cut("deadline while waiting to retry", "openai", ((200, "empty", 0),) * 3, 2, 1.5,
        TokenUsage(input_tokens=300, output_tokens=0, calls=3)),
    # a billed empty answer, then the second attempt is in flight at the deadline (the server answers it 4 s later)
    Cut("deadline with an attempt in flight", "openai", ((200, "empty", 0), (200, "answer", 4.0)), 1, 2.0,
        TokenUsage(input_tokens=100, output_tokens=0, calls=1, unanswered_calls=1)),
    # an overload (no answer, not billed), a billed empty answer, then the deadline in the wait (async SDK path)
    Cut("anthropic: an unbilled 529, a billed empty answer", "anthropic", ((529, "overloaded", 0), (200, "empty", 0)), 1,
        1.5, TokenUsage(input_tokens=100, output_tokens=1, calls=1)),
    # the research step's query-writing call is the one cut
    Cut("query writing cut while waiting to retry", "openai", ((200, "empty", 0),) * 2, 1, 1.5,
        TokenUsage(input_tokens=200, output_tokens=0, calls=2), llm_queries=True),
]


def body(api: str, kind: str, openai_reply, anthropic_reply) -> str:
    if kind == "overloaded":
        return OVERLOADED
    if api == "openai":
        return openai_reply(None if kind == "empty" else '{"p_yes_percent": 40, "rationale": "r"}', prompt=100,
                            completion=0 if kind == "empty" else 12)
    return anthropic_reply("" if kind == "empty" else '{"p_yes_percent": 40, "rationale": "r"}', input_tokens=100,
                           output_tokens=1 if kind == "empty" else 12)


def provider(api: str, fake_api, fake_key, waits: Waits) -> RetryingProvider:
    """The ``api``'s adapter on the fake server in the one retry layer, whose waits are ``waits``."""
    if api == "openai":
        adapter = get_provider("openai/gpt-4.1-mini", api_key=fake_key, base_url=f"{fake_api.url}/v1", timeout_s=10, retry=False)
    else:
        adapter = get_provider("anthropic/claude-haiku-4-5", api_key=fake_key, base_url=fake_api.url, timeout_s=10, retry=False)
    return RetryingProvider(adapter, POLICY, async_sleep=waits)


def wait_until_served(fake_api, n: int, timeout_s: float = 10.0) -> None:
    """Wait until the server has sent ``n`` replies (a reply to a cut request is sent after the cut)."""
    end = time.monotonic() + timeout_s
    while len(fake_api.served) < n and time.monotonic() < end:
        time.sleep(0.02)


@pytest.mark.parametrize("cut", CUTS, ids=[c.name for c in CUTS])
def test_a_member_cut_by_its_deadline_keeps_every_attempt_the_server_answered(cut, fake_api, fake_key, openai_reply,
                                                                             anthropic_reply):
    for status, kind, delay in cut.replies:
        fake_api.enqueue_reply(status, body(cut.api, kind, openai_reply, anthropic_reply), delay_s=delay)
    llm = provider(cut.api, fake_api, fake_key, Waits(cut.quick_waits))
    member = ForecasterAgent(llm, executor=ToolExecutor(FixedSearch()) if cut.llm_queries else None,
                             n_queries=2 if cut.llm_queries else 1, llm_queries=cut.llm_queries, agent_id="member-0")
    pipeline = ForecastPipeline(Ensemble([member], member_timeout_s=cut.deadline_s))
    trace = pipeline.run(make_question())
    f = trace.forecasts[0]
    assert f.status == "failed" and f.error.type == "ProviderTimeout"
    wait_until_served(fake_api, len(cut.replies))
    billed = fake_api.billed()
    ledger = trace.ledger.total()
    # the question's ledger holds every reply the server sent: billed calls with their tokens, and the cut one
    assert ledger.calls + ledger.unanswered_calls == billed.calls
    assert (ledger.calls, ledger.unanswered_calls, ledger.input_tokens, ledger.output_tokens) == (
        cut.expected.calls, cut.expected.unanswered_calls, cut.expected.input_tokens, cut.expected.output_tokens)
    assert trace.ledger.by_method()["ensemble"] == f.usage
    if cut.expected.input_tokens:
        assert ledger.cost_usd is not None and ledger.cost_usd > 0


def test_a_cancelled_call_keeps_what_it_paid_in_the_spend_meter(fake_api, fake_key, openai_reply):
    """The cost cap cancels in-flight questions: the attempts they made were paid and the meter counts them."""
    for _ in range(2):
        fake_api.enqueue_reply(200, openai_reply(None, prompt=100, completion=0))
    meter = SpendMeter()
    waits = Waits(1)
    llm = MeteredProvider(provider("openai", fake_api, fake_key, waits), meter)

    async def main():
        task = asyncio.ensure_future(llm.acomplete([{"role": "user", "content": "Will it rain?"}]))
        await waits.blocked.wait()  # two empty answers read, the retry layer waiting before the third attempt
        task.cancel()
        with pytest.raises(asyncio.CancelledError) as ei:
            await task
        return ei.value

    err = asyncio.run(main())
    assert meter.calls == 2 == fake_api.billed().calls
    assert meter.paid_usd == pytest.approx(2 * 100 * 0.40 / 1e6)
    assert (err.usage.calls, err.usage.input_tokens) == (2, 200)


def test_a_run_folders_ledgers_hold_every_call_the_loopback_server_answered(tmp_path):
    """The whole harness against the loopback fake of tests/doubles: members answered empty (billed, retried) and cut
    by their deadline while waiting to retry; the ledgers written to results.jsonl count every request the server
    answered, and the spend meter every USD."""
    import asyncio as aio

    from agent_providers.openai_provider import OpenAIProvider
    from agent_research.config import PipelineConfig
    from benchmarks.harness.config import RunConfig
    from benchmarks.harness.runner import BenchmarkRunner
    from benchmarks.run_folder import read_records
    from tests.doubles.fake_api import FakeProviderAPI

    server = FakeProviderAPI(answer=lambda messages: "")  # every answer empty: billed, retryable
    try:
        pipeline = PipelineConfig(n_members=2, member_timeout_s=2.2, debate=None, supervisor=None, concurrency=None)
        config = RunConfig(output_dir=str(tmp_path), run_id="r", providers=["openai/gpt-4.1-mini"], search="none",
                           methods=["mean"], baselines=[], cache=False, pipeline=pipeline)
        runner = BenchmarkRunner(config, provider_factory=lambda spec: OpenAIProvider(
            "gpt-4.1-mini", api_key="sk-test-FAKE-cut", base_url=server.url + "/v1"),
            questions=[make_question("q1"), make_question("q2")], progress=False, rate_limit=False)
        aio.run(runner.arun())  # attempts at 0 s and 0.8-1.2 s; the wait before the third (2.4 s or later) is cut at 2.2 s
        records = read_records(runner.run_dir / "results.jsonl")
        assert [r["status"] for r in records] == ["failed", "failed"]
        ledger = [e for r in records for e in r["ledger"]]
        calls, unanswered = sum(e["calls"] for e in ledger), sum(e["unanswered_calls"] for e in ledger)
        # 2 questions x 2 members x 2 attempts on an idle machine; fewer when the machine is loaded (a slow attempt is
        # still in flight at the deadline, or the second never starts): the server's count is the oracle
        assert calls + unanswered == len(server.accepted) >= 2 * 2
        assert runner.stack.spend.calls == calls
        assert runner.stack.spend.paid_usd == pytest.approx(sum(e["cost_usd"] for e in ledger)) and calls > 0
    finally:
        server.close()
