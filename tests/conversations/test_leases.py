"""Turn leases: one process's while it renews, another's once it is gone, never after a restore."""

import asyncio
import socket
import sqlite3
import subprocess
from contextlib import closing
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import text, update
from sqlalchemy.engine import make_url

from bot.conversations.leases import Taken, TurnLeases
from bot.conversations.models import BotProcess, TurnLease
from bot.conversations.processes import ProcessId, this_process
from tests.conversations.test_store import Clock

TTL = timedelta(seconds=30)
CHAT = 5


def two_processes(sessionmaker, clock: Clock) -> tuple[TurnLeases, TurnLeases]:
    """Return the leases of an old and a new process on one database and one clock."""
    return (
        TurnLeases(sessionmaker, TTL, "old:1:aaaa", clock),
        TurnLeases(sessionmaker, TTL, "new:2:bbbb", clock),
    )


async def test_a_lease_is_its_holders_while_it_renews_and_free_once_it_lapses(sessionmaker):
    clock = Clock()
    old, new = two_processes(sessionmaker, clock)
    assert await old.take(CHAT) == Taken()
    assert await old.take(CHAT) == Taken()  # its own again: nothing left over
    assert await new.take(CHAT) is None
    for _ in range(4):  # two lease times, renewed every third of one
        clock.now += TTL / 3
        assert await old.renew() == [CHAT]
        assert await new.take(CHAT) is None
        assert await new.left_over() == []
    clock.now += TTL
    assert await new.left_over() == [CHAT]
    assert await new.take(CHAT) == Taken(left_over=True)
    # The old holder is gone as far as the database knows: it renews nothing any more.
    assert await old.renew() == []
    assert await old.take(CHAT) is None


async def test_a_released_lease_is_taken_fresh_and_a_handed_back_one_at_once(sessionmaker):
    clock = Clock()
    old, new = two_processes(sessionmaker, clock)
    await old.take(CHAT)
    await old.release(CHAT)
    assert await new.take(CHAT) == Taken()
    await new.release(CHAT)

    await old.take(CHAT)
    await old.take(CHAT + 1)
    await old.take(CHAT + 2)
    await old.release(CHAT + 2, CHAT + 3)  # several at once; the one not held is no matter
    assert await new.take(CHAT + 2) == Taken()
    assert await old.hand_back() == 2
    assert sorted(await new.left_over()) == [CHAT, CHAT + 1]
    assert await new.take(CHAT) == Taken(left_over=True)
    # Releasing someone else's lease does nothing.
    await old.release(CHAT)
    assert await old.take(CHAT) is None


async def restore_copy(database_url: str, tmp_path: Path, meanwhile) -> None:
    """Back the database up, await meanwhile(), then restore the backup, the documented ways."""
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite" and url.database:
        backup = tmp_path / "backup.db"
        with closing(sqlite3.connect(url.database)) as live, closing(sqlite3.connect(backup)) as b:
            live.backup(b)
        await meanwhile()
        with closing(sqlite3.connect(backup)) as b, closing(sqlite3.connect(url.database)) as live:
            b.backup(live)  # what the sqlite3 shell's .restore does
        return
    dump = tmp_path / "bot.dump"
    run = subprocess.run
    await asyncio.to_thread(
        run, ["pg_dump", "--format=custom", "--no-owner", f"--file={dump}", database_url],
        check=True,
    )  # fmt: skip
    await meanwhile()
    await asyncio.to_thread(
        run, ["pg_restore", "--clean", "--if-exists", "--no-owner", f"--dbname={database_url}",
              str(dump)], check=True,
    )  # fmt: skip


async def test_a_lease_from_before_a_restore_is_left_over_but_marked_restored(
    sessionmaker, engine, database_url, tmp_path
):
    clock = Clock()
    old, new = two_processes(sessionmaker, clock)
    await old.take(CHAT)

    async def then_the_turn_ends() -> None:
        await old.release(CHAT)

    # The backup is taken mid-turn; the turn ends (and is answered) after it.
    await engine.dispose()
    await restore_copy(database_url, tmp_path, then_the_turn_ends)
    await engine.dispose()
    clock.now += TTL
    assert await new.left_over() == [CHAT]
    assert await new.take(CHAT) == Taken(left_over=True, restored=True)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_a_crash_leaves_the_same_copy_so_its_turn_is_not_marked_restored(sessionmaker):
    clock = Clock()
    old, new = two_processes(sessionmaker, clock)
    await old.take(CHAT)
    clock.now += TTL
    assert await new.take(CHAT) == Taken(left_over=True, restored=False)


def gone_pid() -> int:
    """Return the pid of a process of this host that has exited."""
    finished = subprocess.Popen(["true"])
    finished.wait()
    return finished.pid


def here(pid: int, started: int | None) -> ProcessId:
    """Return a process of this host."""
    return ProcessId(socket.gethostname()[:64], pid, started)


async def test_a_process_whose_row_lapsed_has_its_leases_freed_before_they_lapse(sessionmaker):
    clock = Clock()
    old = TurnLeases(sessionmaker, TTL, "old:1:aaaa", clock, ProcessId("elsewhere", 1, 5))
    new = TurnLeases(sessionmaker, TTL, "new:2:bbbb", clock)
    await old.take(CHAT)
    await old.renew()
    clock.now += old.beat / 2
    assert await new.free_dead() == []  # alive as far as anyone can tell
    assert await new.take(CHAT) is None
    clock.now += old.beat / 2
    assert old.beat < TTL and await new.free_dead() == ["old:1:aaaa"]
    assert await new.left_over() == [CHAT]
    assert await new.take(CHAT) == Taken(left_over=True)


async def waiting_on_a_lock(engine) -> None:
    """Wait until a connection to the test's database waits for a lock another one holds."""
    query = text(
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE datname = current_database() AND wait_event_type = 'Lock'"
    )
    async with asyncio.timeout(10), engine.connect() as connection:
        while not (await connection.execute(query)).scalar():
            await connection.rollback()  # a fresh snapshot of the activity next time
            await asyncio.sleep(0.01)


@pytest.mark.parametrize(
    "database_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
async def test_freeing_a_process_as_it_renews_waits_for_the_renewal_and_frees_nothing(
    sessionmaker, engine
):
    clock = Clock()
    late = TurnLeases(sessionmaker, TTL, "late:1:aaaa", clock, ProcessId("elsewhere", 1, 5))
    new = TurnLeases(sessionmaker, TTL, "new:2:bbbb", clock)
    await late.take(CHAT)
    await late.renew()
    clock.now += late.beat  # its row lapsed: it looks dead, but it is renewing just now
    async with engine.connect() as renewal:
        # As TurnLeases.renew writes: its process's row first, then its leases.
        await renewal.execute(
            update(BotProcess)
            .where(BotProcess.holder == late.holder)
            .values(expires_at=clock.now + late.beat)
        )
        freeing = asyncio.create_task(new.free_dead())
        await waiting_on_a_lock(engine)
        await renewal.execute(
            update(TurnLease)
            .where(TurnLease.holder == late.holder)
            .values(expires_at=clock.now + TTL)
        )
        await renewal.commit()
    # No deadlock (Postgres would abort one of the two after a second): the freeing waited
    # for the row, then found the process alive.
    assert await freeing == []
    assert await new.take(CHAT) is None


async def test_a_gone_pid_of_this_host_frees_its_leases_at_once_a_live_one_does_not(
    sessionmaker,
):
    clock = Clock()
    me = this_process()
    assert me.started is not None  # Linux: /proc tells when a process started
    dead = TurnLeases(sessionmaker, TTL, "dead:1:aaaa", clock, here(gone_pid(), me.started))
    # A pid reused by another process (this one) that started at another time.
    reused = TurnLeases(sessionmaker, TTL, "reused:2:bbbb", clock, here(me.pid, me.started - 1))
    alive = TurnLeases(sessionmaker, TTL, "alive:3:cccc", clock, me)
    # A process of a version without rows is waited out as before.
    no_row = TurnLeases(sessionmaker, TTL, "norow:4:dddd", clock, me)
    new = TurnLeases(sessionmaker, TTL, "new:5:eeee", clock, me)
    for chat, leases in enumerate((dead, reused, alive, no_row)):
        await leases.take(chat)
        if leases is not no_row:
            await leases.renew()
    assert await new.free_dead() == ["dead:1:aaaa", "reused:2:bbbb"]
    assert sorted(await new.left_over()) == [0, 1]
    assert await new.take(2) is None and await new.take(3) is None


async def test_a_process_stopped_cleanly_leaves_no_row(sessionmaker):
    clock = Clock()
    old = TurnLeases(sessionmaker, TTL, "old:1:aaaa", clock, here(gone_pid(), None))
    new = TurnLeases(sessionmaker, TTL, "new:2:bbbb", clock)
    await old.take(CHAT)
    await old.renew()
    assert await old.hand_back() == 1
    assert await new.free_dead() == []
    assert await new.left_over() == [CHAT]
