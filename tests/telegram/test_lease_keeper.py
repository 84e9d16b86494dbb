"""The lease keeper: a busy chat's turns share one lease, let go at the next tick, never stale."""

import asyncio
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

import pytest
from sqlalchemy import event, update
from telegram import Update

from bot.conversations.leases import LeaseLost, Taken, TurnLeases, check_fence
from bot.conversations.models import TurnLease
from bot.conversations.processes import ProcessId
from bot.telegram.runtime.leases import LeaseKeeper, needs_no_turn
from memory.models import utcnow
from tests.builders import OWNER, private_message
from tests.conversations.test_store import Clock
from tests.fakes.anthropic_server import paced

TTL = timedelta(seconds=30)
CHAT = 5


class Recovered:
    """The left-over turns a keeper was asked to answer."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, Taken]] = []

    async def __call__(self, chat_id: int, taken: Taken) -> None:
        self.calls.append((chat_id, taken))


@contextmanager
def lease_statements(engine) -> Iterator[list[str]]:
    """Collect the statements run on turn_leases while the block runs."""
    statements: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany):
        if "turn_leases" in statement:
            statements.append(statement)

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)


def processes(sessionmaker, clock: Clock, keep=lambda chat_id: False, recover=None):
    """Return this process's keeper and another process's leases, on one database and clock."""
    mine = TurnLeases(sessionmaker, TTL, "this:1:aaaa", clock)
    # A tick of 0: a lease another process holds is asked for again at once.
    keeper = LeaseKeeper(mine, recover or Recovered(), keep=keep, tick=0)
    return keeper, TurnLeases(sessionmaker, TTL, "other:2:bbbb", clock)


def update_of(words: str) -> Update:
    """Return an update with the owner's text message."""
    return Update.de_json({"update_id": 1, "message": private_message(OWNER, text=words)}, None)


async def take_over(sessionmaker, other: TurnLeases, chat_id: int, until: datetime) -> None:
    """Give the chat's lease to the other process, as when it took this one for dead."""
    async with sessionmaker.begin() as session:
        held = {"holder": other.holder, "expires_at": until}
        await session.execute(update(TurnLease).where(TurnLease.chat_id == chat_id).values(held))


async def next_turn_waits_for(
    other: TurnLeases, keeper: LeaseKeeper, caplog, chat_id: int = CHAT
) -> None:
    """Check the keeper's next turn of the chat waits while the other holds it, then runs soon."""
    started = asyncio.Event()

    async def turn() -> None:
        async with keeper.hold(chat_id):
            started.set()

    with caplog.at_level(logging.INFO):
        waiting = asyncio.create_task(turn())
        await until(lambda: started.is_set() or "another process is answering it" in caplog.text)
    # It asked the database, found the chat the other process's, and waits for it.
    assert not started.is_set()
    await other.release(chat_id)
    async with asyncio.timeout(10):
        await waiting


async def until(condition: Callable[[], bool]) -> None:
    """Let other tasks run until condition holds."""
    async with asyncio.timeout(15):
        while not condition():  # noqa: ASYNC110  # no event for it: the keeper polls too
            await asyncio.sleep(0)


async def test_a_busy_chats_turns_take_the_lease_once_and_the_next_tick_lets_it_go(
    sessionmaker, engine
):
    clock = Clock()
    keeper, other = processes(sessionmaker, clock)
    with lease_statements(engine) as statements:
        for _ in range(3):
            async with keeper.hold(CHAT):
                pass
            clock.now += timedelta(seconds=1)
        assert len(statements) == 1  # the first turn's take; the others found it held
    # Between the turns and until the tick the lease is still this process's.
    assert await other.take(CHAT) is None
    await keeper.sweep()
    assert await other.take(CHAT) == Taken()  # let go, not left over


async def test_a_lease_not_renewed_for_half_a_lease_time_is_taken_again(
    sessionmaker, engine, caplog
):
    clock = Clock()
    recovered = Recovered()
    keeper, other = processes(sessionmaker, clock, recover=recovered)
    async with keeper.hold(CHAT):
        pass
    clock.now += TTL / 2
    with lease_statements(engine) as statements:
        async with keeper.hold(CHAT):
            pass
        assert statements  # asked the database again
    # Gone for a whole lease time (no tick ran): another process took the chat meanwhile.
    clock.now += TTL
    assert await other.take(CHAT) == Taken(left_over=True)
    # It waits for the other process instead of trusting what it took before.
    await next_turn_waits_for(other, keeper, caplog)
    assert recovered.calls == []  # taken fresh: the other process finished its turn


async def test_a_turn_taken_over_writes_nothing_and_the_next_asks_for_the_lease_again(
    sessionmaker, caplog
):
    clock = Clock()
    keeper, other = processes(sessionmaker, clock)
    async with keeper.hold(CHAT):
        await take_over(sessionmaker, other, CHAT, clock.now + TTL)
        with pytest.raises(LeaseLost):
            async with sessionmaker.begin() as session:
                await check_fence(await session.connection(), CHAT)
    # Within what it took for half a lease time, yet it waits for the other process.
    await next_turn_waits_for(other, keeper, caplog)


async def test_renewals_keep_a_kept_lease_trusted_past_its_first_lease_time(sessionmaker, engine):
    # An album's answer is due: its chat keeps the lease through the ticks.
    clock = Clock()
    keeper, other = processes(sessionmaker, clock, keep=lambda chat_id: True)
    async with keeper.hold(CHAT):
        pass
    for _ in range(6):
        clock.now += TTL / 3
        assert await keeper.sweep() == []
    with lease_statements(engine) as statements:
        async with keeper.hold(CHAT):
            pass
        assert statements == []
    assert await other.take(CHAT) is None


async def test_shutdown_lets_go_of_finished_turns_and_hands_back_the_one_cut_off(
    sessionmaker, caplog
):
    clock = Clock()
    keeper, other = processes(sessionmaker, clock)
    async with keeper.hold(CHAT):
        pass
    entered = asyncio.Event()

    async def cut_off() -> None:
        async with keeper.hold(CHAT + 1):
            entered.set()
            await asyncio.Event().wait()

    turn = asyncio.create_task(cut_off())
    await entered.wait()
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn
    with caplog.at_level(logging.INFO):
        await keeper.hand_back()
    assert "handed back 1 unfinished turn(s)" in caplog.text
    # The next process answers only the turn cut off; the finished one is simply free.
    assert await other.left_over() == [CHAT + 1]
    assert await other.take(CHAT) == Taken()
    assert await other.take(CHAT + 1) == Taken(left_over=True)


async def test_a_turn_that_starts_while_the_tick_lets_its_lease_go_takes_it_afresh(sessionmaker):
    clock = Clock()
    keeper, other = processes(sessionmaker, clock)
    async with keeper.hold(CHAT):
        pass
    sweep = asyncio.create_task(keeper.sweep())
    await until(lambda: CHAT in keeper._releasing)  # the release is under way, after renewing
    async with keeper.hold(CHAT):
        # Held in the database, not only in this process's memory.
        assert await other.take(CHAT) is None
    await sweep


@pytest.mark.engines
async def test_commands_that_need_no_model_answer_while_another_process_holds_the_chat(
    harness, sessionmaker
):
    # A process of a version without process rows is answering: it is waited out.
    other = TurnLeases(sessionmaker, TTL, "other:2:bbbb", process=ProcessId("elsewhere", 2, 1))
    await other.take(OWNER)
    listed = await harness.say(OWNER, "/memory")
    assert listed and "memor" in listed[0].lower()
    assert await harness.say(OWNER, "/help")
    # A message for the model waits for that process's turn, and a tidy asks the model too.
    assert needs_no_turn(update_of("hi")) is False
    assert needs_no_turn(update_of("/memory tidy")) is False
    assert needs_no_turn(update_of("/Memory@memory_test_bot list")) is True
    assert harness.model.requests == []


async def taken_over_while_answering(harness, sessionmaker, caplog, words: str) -> TurnLeases:
    """Send words; while the model answers, give the chat's turn to another process; wait.

    Check that this process sent nothing and said why; return the other process's leases.
    """
    caplog.set_level(logging.INFO)
    harness.model.hold()
    harness.tg.push_message(OWNER, words)
    await harness.model.wait_for_requests(1)
    other = TurnLeases(sessionmaker, TTL, "other:2:bbbb")
    await take_over(sessionmaker, other, OWNER, utcnow() + TTL)
    harness.model.release()
    await harness.idle()
    assert harness.tg.messages_to(OWNER) == []
    assert f"chat {OWNER}: another process took this turn over" in caplog.text
    return other


@pytest.mark.engines
async def test_a_turn_another_process_took_over_is_neither_stored_nor_sent(
    start_bot, sessionmaker, caplog
):
    # Ticks of 0.2 s: the chat's next message asks for the lease again soon.
    harness = await start_bot(turn_lease_seconds=1.2)
    # The model is answering when another process takes the chat's turn over: this one was
    # taken for dead (starved past its beat), and the other answers the turn itself.
    other = await taken_over_while_answering(harness, sessionmaker, caplog, "hello")
    # Nothing of the answer was stored: the message waits for the process that took the turn.
    [pending] = await harness.services.conversations.unanswered()
    assert pending.conversation.chat_id == OWNER
    # And this process asks for the lease afresh: the chat's next message waits for the other.
    harness.tg.push_message(OWNER, "still there?")
    await until(lambda: "another process is answering it" in caplog.text)
    assert len(harness.model.requests) == 1
    # Once the other lets go, this one answers the chat again: one reply, to both messages.
    await other.release(OWNER)
    await harness.idle()
    assert len(harness.tg.messages_to(OWNER)) == 1
    asked = str(harness.model.requests[-1]["messages"][-1]["content"])
    assert asked.index("hello") < asked.index("still there?")


async def test_a_long_reply_sends_no_part_once_another_process_took_the_turn_over(
    start_bot, sessionmaker, caplog
):
    harness = await start_bot()
    paragraphs = [f"Paragraph {i}: " + "lorem ipsum dolor sit amet " * 10 for i in range(22)]
    # Streamed for two seconds: long enough that its first message would go out meanwhile.
    harness.model.script(paced("\n\n".join(paragraphs), first_delay=0.1, duration=2.0))
    await taken_over_while_answering(harness, sessionmaker, caplog, "tell me everything")
    assert "drafts failed" not in caplog.text  # stopped as planned, not broken
