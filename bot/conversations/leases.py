"""Turn leases: a chat's turn belongs to one process at a time, for as long as it renews.

A process takes a chat's lease before it stores anything of a turn and gives it up once the
turn is over (the keeper in bot.telegram.runtime.leases decides when). On Postgres, letting
leases go notifies the channel turn_leases with each chat's id (bot.conversations.lease_wakeups
wakes the turns other processes have waiting for them). While it lives it renews its leases;
at shutdown it hands back the ones it did not finish (holder NULL). A lease whose holder is
gone (handed back, or not renewed in time) is a turn left unfinished: the next process to
take it answers what was left first.

Each process also keeps a row of its own (bot_processes), renewed with its leases and
expiring sooner than them: a process whose row expired, or that ran on this host and whose
pid is gone, is known dead, and its leases are freed at once (free_dead) instead of after a
whole lease time. A holder without a row (a version from before rows) is waited out.

A process taken for dead may still be alive (starved of CPU past its beat). The model's side
of a turn is stored only while its process still holds the chat's lease (the Fence its keeper
sets around the turn, checked in the write's own transaction), so such a process stores and
sends nothing once another has taken the turn over: one answer, not two. The memories,
questions and reminders its tool calls write pass the same check (fenced_writes), and a
long reply's parts sent while it streams ask first (check_turn).
"""

import contextlib
import os
import secrets
import socket
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

from sqlalchemy import (
    ColumnElement,
    Delete,
    Text,
    Update,
    cast,
    delete,
    func,
    literal_column,
    or_,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession, async_sessionmaker

from bot.conversations import statements
from bot.conversations.models import BotProcess, TurnLease
from bot.conversations.processes import ProcessId, gone_here, this_process
from memory.db import affected, dialect_insert
from memory.models import utcnow
from memory.write_check import WRITE_CHECK

# What tells two copies of a database apart: Postgres gives a restored table a new oid, and
# SQLite's backup API (the shell's .restore) and VACUUM move the schema cookie on.
INCARNATION = {
    "postgresql": "(SELECT 'turn_leases'::regclass::oid::bigint)",
    "sqlite": "(SELECT schema_version FROM pragma_schema_version())",
}
# How long a process's row lasts unless renewed (at most the lease time): a process silent
# this long is taken for dead, so its ticks come at least four times as often.
BEAT = timedelta(seconds=10)
# The Postgres channel told the chat id of every lease let go.
CHANNEL = "turn_leases"


def holder_name() -> str:
    """Return a name for this process that no other process, here or elsewhere, shares."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{secrets.token_hex(4)}"


@dataclass(frozen=True)
class Taken:
    """A lease just taken; left_over when a gone process left the chat's turn unfinished."""

    left_over: bool = False
    # The row predates a restore from a backup: its turn may have been answered since.
    restored: bool = False


class LeaseLost(Exception):
    """Another process took the chat's turn over: this one must store and send no more of it."""


@dataclass
class Fence:
    """The lease a turn is answered under; lost once another process took the turn over."""

    chat_id: int
    holder: str
    lost: bool = False


# Set by the keeper around each turn it holds a lease for (unset: nothing to check).
FENCE: ContextVar[Fence | None] = ContextVar("turn_fence", default=None)


def _fence_of(chat_id: int) -> Fence | None:
    """Return the fence of the turn being answered, if it is the chat's."""
    fence = FENCE.get()
    return fence if fence is not None and fence.chat_id == chat_id else None


async def check_fence(connection: AsyncConnection, chat_id: int) -> None:
    """Raise LeaseLost unless the turn being written still holds the chat's lease, if fenced."""
    if (fence := _fence_of(chat_id)) is None:
        return
    # A write, not a read: it locks the lease's row (Postgres) or the database (SQLite) until
    # the turn's write commits, so a takeover waits for it and then reads the turn stored.
    params = {"chat": chat_id, "holding": fence.holder}
    if not affected(await connection.execute(statements.fence_statement(), params)):
        fence.lost = True
        raise LeaseLost(chat_id)


async def check_turn(sessionmaker: async_sessionmaker[AsyncSession], chat_id: int) -> None:
    """Raise LeaseLost unless the chat's fenced turn still holds its lease (before a send)."""
    if _fence_of(chat_id) is not None:  # no transaction where no turn is fenced
        async with sessionmaker.begin() as session:
            await check_fence(await session.connection(), chat_id)


@contextlib.contextmanager
def fenced_writes(chat_id: int) -> Iterator[None]:
    """Let the block's memory and reminder writes commit only under the chat's fence, if any."""
    token = WRITE_CHECK.set(partial(check_fence, chat_id=chat_id))
    try:
        yield
    finally:
        WRITE_CHECK.reset(token)


async def _let_go(connection: AsyncConnection, statement: Delete | Update) -> int:
    """Run a statement letting leases go; on Postgres notify each chat in it; say how many."""
    statement = statement.returning(TurnLease.chat_id)
    if connection.dialect.name == "postgresql":
        # One statement: the notices go out when, and only if, the letting go commits.
        gone = statement.cte("let_go")
        notify = select(func.pg_notify(CHANNEL, cast(gone.c.chat_id, Text))).select_from(gone)
        return len((await connection.execute(notify)).all())
    return len((await connection.execute(statement)).all())


def _incarnation(connection: AsyncConnection) -> ColumnElement[int]:
    """Return SQL for the current copy of the database."""
    return literal_column(INCARNATION[connection.dialect.name])


class TurnLeases:
    """Take, renew, release and hand back this process's chat leases."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        ttl: timedelta,
        holder: str | None = None,
        clock: Callable[[], datetime] = utcnow,
        process: ProcessId | None = None,
    ):
        self._sessionmaker = sessionmaker
        self.ttl = ttl
        self.beat = min(ttl, BEAT)
        self.holder = holder or holder_name()
        self._clock = clock
        self.process = process or this_process()

    def now(self) -> datetime:
        """Return the time by the clock the leases' expiries are written in."""
        return self._clock()

    async def take(self, chat_id: int) -> Taken | None:
        """Take the chat's lease, or return None while another live process holds it."""
        now = self._clock()
        async with self._sessionmaker.begin() as session:
            connection = await session.connection()
            if await self._insert(connection, chat_id, now):
                return Taken()
            current = _incarnation(connection).label("current")
            row = (
                await connection.execute(
                    select(
                        TurnLease.holder, TurnLease.expires_at, TurnLease.incarnation, current
                    ).where(TurnLease.chat_id == chat_id)
                )
            ).one_or_none()
            if row is None:
                return None  # released just now: the caller asks again
            if row.holder == self.holder:
                return Taken()
            gone = or_(TurnLease.holder.is_(None), TurnLease.expires_at <= now)
            taken = await connection.execute(
                update(TurnLease)
                .where(TurnLease.chat_id == chat_id, gone)
                .values(self._values(connection, now))
            )
            if not affected(taken):
                return None
            return Taken(left_over=True, restored=row.incarnation != row.current)

    def _values(self, connection: AsyncConnection, now: datetime) -> dict[str, object]:
        """Return the columns of a lease this process holds from now."""
        return {
            "holder": self.holder,
            "expires_at": now + self.ttl,
            "incarnation": _incarnation(connection),
        }

    async def _insert(self, connection: AsyncConnection, chat_id: int, now: datetime) -> bool:
        """Insert the chat's lease unless a row exists; tell whether it was inserted."""
        insert = dialect_insert(connection.dialect.name)
        values = {"chat_id": chat_id, **self._values(connection, now)}
        statement = insert(TurnLease).values(values).on_conflict_do_nothing()
        inserted = await connection.execute(statement.returning(TurnLease.chat_id))
        return inserted.first() is not None

    async def renew(self) -> list[int]:
        """Renew this process's row and every lease it holds; return the leases' chats."""
        now = self._clock()
        async with self._sessionmaker.begin() as session:
            connection = await session.connection()
            await self._beat(connection, now)
            renewed = await connection.execute(
                update(TurnLease)
                .where(TurnLease.holder == self.holder)
                .values(expires_at=now + self.ttl)
                .returning(TurnLease.chat_id)
            )
            return sorted(renewed.scalars())

    async def _beat(self, connection: AsyncConnection, now: datetime) -> None:
        """Write this process's row, lasting until a beat from now."""
        insert = dialect_insert(connection.dialect.name)
        values = {
            "holder": self.holder,
            "host": self.process.host,
            "pid": self.process.pid,
            "started": self.process.started,
            "expires_at": now + self.beat,
        }
        statement = insert(BotProcess).values(values)
        await connection.execute(
            statement.on_conflict_do_update(
                index_elements=[BotProcess.holder], set_={"expires_at": values["expires_at"]}
            )
        )

    async def free_dead(self) -> list[str]:
        """Free the leases of the processes known dead, for others to take; return their names."""
        now = self._clock()
        async with self._sessionmaker() as session:
            rows = (await session.execute(select(BotProcess))).scalars().all()
        here = [
            r.holder
            for r in rows
            if r.host == self.process.host
            and r.holder != self.holder
            and gone_here(ProcessId(r.host, r.pid, r.started))
        ]
        gone = here + [r.holder for r in rows if r.expires_at <= now and r.holder not in here]
        if not gone:
            return []
        # Checked again as they are freed: a process late with its row may have renewed it.
        dead = or_(BotProcess.holder.in_(here), BotProcess.expires_at <= now)
        async with self._sessionmaker.begin() as session:
            connection = await session.connection()
            # The rows, then their leases: the order a renewal takes them in (its row, then its
            # leases), so freeing a process that renews just then waits instead of deadlocking,
            # and finds it alive.
            deleted = await connection.execute(
                delete(BotProcess)
                .where(BotProcess.holder.in_(gone), dead)
                .returning(BotProcess.holder)
            )
            freed = sorted(deleted.scalars())
            if freed:
                await _let_go(
                    connection,
                    update(TurnLease)
                    .where(TurnLease.holder.in_(freed))
                    .values(holder=None, expires_at=now),
                )
            return freed

    async def release(self, *chat_ids: int) -> None:
        """Give up the chats' leases: their turns are over."""
        async with self._sessionmaker.begin() as session:
            await _let_go(
                await session.connection(),
                delete(TurnLease).where(
                    TurnLease.chat_id.in_(chat_ids), TurnLease.holder == self.holder
                ),
            )

    async def hand_back(self) -> int:
        """Let go of every lease still held, so another process answers them now; say how many."""
        async with self._sessionmaker.begin() as session:
            count = await _let_go(
                await session.connection(),
                update(TurnLease)
                .where(TurnLease.holder == self.holder)
                .values(holder=None, expires_at=self._clock()),
            )
            await session.execute(delete(BotProcess).where(BotProcess.holder == self.holder))
            return count

    async def left_over(self) -> list[int]:
        """Return the chats whose lease's holder is gone: handed back or not renewed in time."""
        gone = or_(TurnLease.holder.is_(None), TurnLease.expires_at <= self._clock())
        async with self._sessionmaker() as session:
            found = await session.scalars(
                select(TurnLease.chat_id).where(gone).order_by(TurnLease.expires_at)
            )
            return list(found)
