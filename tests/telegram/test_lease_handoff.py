"""A chat handed between web processes: its lease goes as the turn ends, and the waiter wakes.

Two keepers on one Postgres database stand for two web processes. Their ticks are a minute
long, so a turn that waited for a tick would outlast the test's timeout: what wakes it is
the other process letting the lease go (a notice on the turn_leases channel).
"""

import asyncio
import contextlib
import gc
import logging
import warnings
from datetime import timedelta

import pytest
from sqlalchemy import text
from sqlalchemy.exc import SAWarning

from bot.conversations.lease_wakeups import LeaseWakeups
from bot.conversations.leases import Taken, TurnLeases
from bot.telegram.runtime.leases import LeaseKeeper
from tests.telegram.test_lease_keeper import Recovered, next_turn_waits_for, until

TTL = timedelta(seconds=30)
TICK = 60.0
CHAT = 5

pytestmark = pytest.mark.parametrize(
    "database_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)


async def web_process(sessionmaker, engine, name: str) -> LeaseKeeper:
    """Return a web process's keeper: letting go as turns end, woken by others' letting go."""
    wakeups = LeaseWakeups(engine)
    assert await wakeups.listen()
    keeper = LeaseKeeper(
        TurnLeases(sessionmaker, TTL, name), Recovered(), tick=TICK, wakeups=wakeups
    )
    keeper.queued = lambda chat_id: False  # nothing more of the chat waits in this process
    return keeper


async def test_a_turn_waiting_for_another_process_starts_as_that_turn_ends(
    sessionmaker, engine, caplog
):
    first = await web_process(sessionmaker, engine, "first:1:aaaa")
    second = await web_process(sessionmaker, engine, "second:2:bbbb")
    try:
        ended = asyncio.Event()
        held = asyncio.Event()

        async def turn_in_first() -> None:
            async with first.hold(CHAT):
                held.set()
                await ended.wait()

        async def turn_in_second() -> None:
            async with second.hold(CHAT):
                pass

        answering = asyncio.create_task(turn_in_first())
        await held.wait()
        with caplog.at_level(logging.INFO):
            waiting = asyncio.create_task(turn_in_second())
            await until(lambda: "another process is answering it" in caplog.text)
        assert not waiting.done()
        ended.set()
        await answering
        # Far sooner than the tick: the first process's letting go woke the second.
        async with asyncio.timeout(10):
            await waiting
        # And the second let go in turn: a third process takes the chat fresh, not left over.
        third = TurnLeases(sessionmaker, TTL, "third:3:cccc")
        assert await third.take(CHAT) == Taken()
    finally:
        await first.close()
        await second.close()


async def lock_waits(engine, count: int) -> None:
    """Wait until count statements on the test's database wait for locks."""
    waiting = text(
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE datname = current_database() AND wait_event_type = 'Lock'"
    )
    async with asyncio.timeout(15):
        while True:
            async with engine.connect() as connection:
                if await connection.scalar(waiting) >= count:
                    return
            await asyncio.sleep(0.01)  # polled: nothing tells when a statement starts waiting


async def test_a_renewal_racing_a_turns_letting_go_leaves_it_let_go(sessionmaker, engine, caplog):
    # The tick's renewal is held up in the database (the lease's row locked by another
    # transaction) while the turn ends and lets go, and the tick's next statements after the
    # renewal are held up too (its process table locked), until the letting go is over. The
    # keeper must not count the lease as its own afterwards, or its next turn would skip
    # taking it while another process answers the chat.
    keeper = await web_process(sessionmaker, engine, "first:1:aaaa")
    other = TurnLeases(sessionmaker, TTL, "second:2:bbbb")
    try:
        ended = asyncio.Event()

        async def turn() -> None:
            async with keeper.hold(CHAT):
                await ended.wait()

        answering = asyncio.create_task(turn())
        async with engine.connect() as row, engine.connect() as table:
            await until(lambda: CHAT in keeper._expiry)
            await row.execute(
                text("SELECT chat_id FROM turn_leases WHERE chat_id = :chat FOR UPDATE"),
                {"chat": CHAT},
            )
            sweep = asyncio.create_task(keeper.sweep())
            await lock_waits(engine, 1)  # the renewal waits for the row
            # Granted once the renewal commits, before the tick reads the processes.
            lock = text("LOCK TABLE bot_processes IN ACCESS EXCLUSIVE MODE")
            locking = asyncio.create_task(table.execute(lock))
            await lock_waits(engine, 2)
            ended.set()
            await until(lambda: CHAT in keeper._releasing)
            await row.rollback()
            await locking
            await until(lambda: CHAT not in keeper._releasing)  # let go
            await table.rollback()
        await asyncio.gather(answering, sweep)
        assert await other.take(CHAT) == Taken()  # let go
        await next_turn_waits_for(other, keeper, caplog, CHAT)
    finally:
        await keeper.close()


async def test_a_listener_closed_by_a_caller_cut_off_still_returns_its_connection(engine):
    wakeups = LeaseWakeups(engine)
    assert await wakeups.listen()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        closing = asyncio.create_task(wakeups.close())
        await asyncio.sleep(0)  # close() runs to its first wait on the database
        closing.cancel()  # as a shutdown's grace period cuts off a tick
        with contextlib.suppress(asyncio.CancelledError):
            await closing
        await until(lambda: engine.pool.checkedout() == 0)
        gc.collect()
    # Handed back to the pool, not left for the garbage collector to terminate.
    assert not [w.message for w in caught if issubclass(w.category, SAWarning)]
    assert not wakeups.listening
