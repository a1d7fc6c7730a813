"""How the embedded model's contexts (slots) are shared between calls: prompt affinity, waiting, release.

Pure logic: the slots hold no model (``LoadedModel.slot`` never touches ``llama``), so these run without
llama-cpp-python.
"""

from __future__ import annotations

import threading
import time

import pytest

from agent_providers.local_llama import AFFINITY_CHARS, IDLE_S, WAIT_CHARS, WAIT_FRACTION, LoadedModel, ModelSlot, common_prefix_chars, default_slots, wait_bar

SYSTEM = "system\nYou forecast binary questions.\nuser\n"
QUESTION_A = SYSTEM + "## CASE FACTS\n- Question: Will the A index close above 100?\n" + "evidence about A. " * 30
QUESTION_B = SYSTEM + "## CASE FACTS\n- Question: Will team B win the cup?\n" + "evidence about B. " * 30


def model(n: int = 2) -> LoadedModel:
    return LoadedModel([ModelSlot(llama=None, lock=threading.Lock(), index=i) for i in range(n)], path=None)


def test_common_prefix_chars_counts_characters():
    assert common_prefix_chars("abcdef", "abcxyz") == 3
    assert common_prefix_chars("abc", "abc") == 3
    assert common_prefix_chars("abc", "abcd") == 3
    assert common_prefix_chars("", "abc") == 0
    assert common_prefix_chars(QUESTION_A, QUESTION_B) == len(SYSTEM) + len("## CASE FACTS\n- Question: Will t")


def test_default_slots_fill_the_cores(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert (default_slots(1), default_slots(2), default_slots(3)) == (2, 1, 1)
    monkeypatch.setattr("os.cpu_count", lambda: 8)
    assert (default_slots(1), default_slots(3)) == (8, 2)


def test_free_slot_with_the_longest_shared_prefix_is_chosen_then_the_least_recently_used():
    m = model()
    with m.slot(QUESTION_A) as first:
        pass
    with m.slot(QUESTION_B) as second:  # shares only the opening with slot 0: the unused slot is as good
        pass
    assert (first.index, second.index) == (0, 1)
    with m.slot(QUESTION_A + " member 2") as again:
        assert again.index == 0 and again.prompt == QUESTION_A + " member 2"
    with m.slot(SYSTEM + "another question") as fresh:  # ties: the least recently used slot
        assert fresh.index == 1


def test_a_call_waits_for_the_busy_slot_that_holds_its_question_and_an_unrelated_call_does_not():
    m = model()
    with m.slot(QUESTION_A):
        pass
    got: dict[str, int] = {}
    release = threading.Event()
    started = threading.Event()

    def hold_a():
        with m.slot(QUESTION_A + " member 0") as s:
            got["holder"] = s.index
            started.set()
            release.wait(5)

    def same_question():
        with m.slot(QUESTION_A + " member 1") as s:
            got["same"] = s.index
            got["same_at"] = time.monotonic()

    holder = threading.Thread(target=hold_a)
    holder.start()
    started.wait(5)
    waiter = threading.Thread(target=same_question)
    waiter.start()
    time.sleep(0.2)
    assert "same" not in got  # slot 1 is free, but it shares far less of the prompt: the call waits
    assert common_prefix_chars(QUESTION_A, QUESTION_B) + AFFINITY_CHARS < len(QUESTION_A)
    with m.slot(QUESTION_B) as other:  # another question's call takes the free slot at once
        assert other.index == 1
    released_at = time.monotonic()
    release.set()
    holder.join(5)
    waiter.join(5)
    assert got["holder"] == 0 and got["same"] == 0 and got["same_at"] >= released_at


def test_every_slot_busy_means_waiting_and_a_released_slot_is_taken():
    m = model(1)
    order = []
    inside = threading.Event()

    def first():
        with m.slot("x"):
            inside.set()
            time.sleep(0.2)
            order.append("first done")

    t = threading.Thread(target=first)
    t.start()
    inside.wait(5)
    with m.slot("y"):
        order.append("second in")
    t.join(5)
    assert order == ["first done", "second in"]


def test_a_direct_user_of_the_first_slots_lock_is_respected():
    m = model(1)
    got = []

    def call():
        with m.slot("z") as s:
            got.append(s.index)

    with m.lock:  # e.g. benchmarks/perf/provider_overhead.py calls the llama directly
        t = threading.Thread(target=call)
        t.start()
        time.sleep(0.2)
        assert got == []
    t.join(5)
    assert got == [0] and not m.lock.locked()


@pytest.mark.parametrize("n", [1, 3])
def test_the_slot_is_released_when_the_call_raises(n):
    m = model(n)
    with pytest.raises(RuntimeError):
        with m.slot("boom"):
            raise RuntimeError("llama.cpp failed")
    assert not any(s.lock.locked() for s in m.slots)


# The main job's opening (issue 15's profile): every prompt starts with these 367 characters.
LONG_SYSTEM = "system\n" + "You are a member of a team that forecasts binary questions. " * 6 + "\nuser\n## CASE FACTS\n"
MEMBER_C = LONG_SYSTEM + "- Question: Will C happen?\n" + "evidence about C. " * 130 + "\n## YOUR STYLE\nbase rates"
MEMBER_D = LONG_SYSTEM + "- Question: Will D happen?\n" + "evidence about D. " * 130 + "\n## YOUR STYLE\nbase rates"


def hold(m: LoadedModel, prompt: str):
    """Take a slot for ``prompt`` in a thread and keep it until the returned event is set."""
    taken, release = threading.Event(), threading.Event()
    got = {}

    def run():
        with m.slot(prompt) as s:
            got["index"] = s.index
            taken.set()
            release.wait(5)

    t = threading.Thread(target=run)
    t.start()
    taken.wait(5)
    return got, release, t


def start_call(m: LoadedModel, prompt: str):
    """Ask for a slot for ``prompt`` in a thread that gives it back at once; returns the dict that gets the
    slot's index and the thread."""
    got = {}

    def run():
        with m.slot(prompt) as s:
            got["index"] = s.index

    t = threading.Thread(target=run)
    t.start()
    return got, t


def test_a_new_question_takes_the_empty_slot_although_the_busy_one_shares_the_common_opening():
    m = model()
    got, release, t = hold(m, MEMBER_C)
    shared = common_prefix_chars(MEMBER_C, MEMBER_D)
    assert AFFINITY_CHARS < shared < wait_bar(len(MEMBER_D))  # more than the old bar of 256: it used to wait
    assert shared < WAIT_CHARS  # the common opening is below the absolute bar too
    other, d = start_call(m, MEMBER_D)
    d.join(2)  # at once, beside the other question (the old rule waited here for slot 0)
    assert other == {"index": 1} and got["index"] == 0
    release.set()
    t.join(5)
    d.join(5)


@pytest.mark.parametrize("other_question_just_ended", [False, True], ids=["other slot never used", "other slot used just now"])
def test_a_member_waits_for_the_slot_holding_its_questions_evidence(other_question_just_ended):
    m = model()
    if other_question_just_ended:  # the other slot's question issued its last call under IDLE_S ago
        with m.slot(QUESTION_B):
            pass
        assert IDLE_S > 0.2
    got, release, t = hold(m, MEMBER_C)
    order = []

    def member_2():
        with m.slot(MEMBER_C.replace("base rates", "news")) as s:
            order.append(("member 2", s.index))

    w = threading.Thread(target=member_2)
    w.start()
    time.sleep(0.2)
    assert order == []  # the other slot is free, but this one holds 97% of the prompt
    order.append(("released", got["index"]))
    release.set()
    t.join(5)
    w.join(5)
    assert order == [("released", got["index"]), ("member 2", got["index"])]


def test_a_specialist_waits_for_the_slot_holding_its_questions_case_facts_and_summaries():
    # the proportions of the main job: the supervisor's decision shares its stable prefix (system, case
    # facts, member summaries: about 40% of its prompt) with the question's debate turn in the busy slot
    prefix = SYSTEM + "## CASE FACTS\n- Question: Will the A index close above 100?\n" + "summary of A. " * 20
    bull = prefix + "## YOUR ROLE\nYou are the BULL. " + "argue higher. " * 30
    decision = prefix + "## DISAGREEMENTS\n" + "coverage and clarifying evidence. " * 14 + "## TASK\nReconcile."
    assert 0.35 < common_prefix_chars(bull, decision) / len(decision) < 0.45
    m = model()
    with m.slot(QUESTION_B):
        pass  # slot 0 last held question B
    got, release, t = hold(m, QUESTION_B + " member 2")  # question B's next call is on slot 0
    waiter = {}
    with m.slot(bull) as s:  # question A's debate turn takes the free slot 1
        assert s.index == 1
    got_a, release_a, t_a = hold(m, bull)  # ... and holds it again for its next turn
    assert got_a == {"index": 1}

    def supervisor():
        with m.slot(decision) as s:
            waiter["index"] = s.index

    w = threading.Thread(target=supervisor)
    w.start()
    release.set()  # slot 0 (question B's context) is free now, slot 1 holds question A
    t.join(5)
    time.sleep(0.2)
    assert waiter == {}  # it does not take question B's context: it waits for its own
    release_a.set()
    t_a.join(5)
    w.join(5)
    assert waiter == {"index": 1}


def test_the_wait_bar_is_a_fraction_of_a_short_prompt_and_a_fixed_length_for_a_long_one():
    assert wait_bar(2000) == pytest.approx(WAIT_FRACTION * 2000) == pytest.approx(600)
    assert wait_bar(9600) == WAIT_CHARS == 1000  # 30% would be 2,880 characters
    assert wait_bar(500) == AFFINITY_CHARS


def test_a_long_decision_prompt_waits_for_its_questions_context_although_it_shares_under_a_third():
    # the main job's longest decision (issue 15's profiles): about 9,600 characters, of which the
    # question's context holds about 2,800 (29%); it used to take the other question's context
    prefix = SYSTEM + "## CASE FACTS\n- Question: Will the A index close above 100?\n" + "summary of A. " * 190
    bear = prefix + "## YOUR ROLE\nYou are the BEAR. " + "argue lower. " * 60
    decision = prefix + "## DISAGREEMENTS\n" + "clarifying evidence of A. " * 260 + "## TASK\nReconcile."
    shared = common_prefix_chars(bear, decision)
    assert 0.25 < shared / len(decision) < WAIT_FRACTION and shared > WAIT_CHARS
    m = model()
    got_b, release_b, t_b = hold(m, QUESTION_B)  # question B on slot 0
    got_a, release_a, t_a = hold(m, bear)  # question A's bear turn on slot 1
    release_b.set()  # question B's context is free now
    t_b.join(5)
    waiter, w = start_call(m, decision)
    time.sleep(0.2)
    assert waiter == {}  # slot 0 is free, but slot 1 holds 2,800 characters of the prompt more
    release_a.set()
    t_a.join(5)
    w.join(5)
    assert (got_b, got_a, waiter) == ({"index": 0}, {"index": 1}, {"index": 1})


def test_at_the_end_of_a_run_a_call_takes_the_context_idle_for_a_second_rather_than_wait():
    # the last question of a run: the other question's context finished its last call over IDLE_S ago,
    # so the member takes it (and processes its prompt there) instead of leaving a core idle
    m = model()
    with m.slot(QUESTION_B) as s:
        assert s.index == 0
    got, release, t = hold(m, MEMBER_C)  # question C's member 1 on slot 1
    assert got == {"index": 1}
    m.slots[0].last_used = time.monotonic() - IDLE_S - 0.5  # question B's context: idle since
    member_2, w = start_call(m, MEMBER_C.replace("base rates", "news"))  # slot 1 holds 97% of it, but is busy
    w.join(2)
    taken_at_once = dict(member_2)
    release.set()
    t.join(5)
    w.join(5)
    assert taken_at_once == {"index": 0}

