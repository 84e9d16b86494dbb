"""Background work done once across processes: each job's run for a period claimed in the database.

A run (retention for a day, an owner's nightly tidy pass for their local date) is claimed by
inserting its row, or by taking over a row whose lease ran out before it was done: its process
died, and the next process to ask does the work. The claimer renews the lease while it works
and marks the row done at the end; a failure leaves it for the lease to run out and another try.
Done rows older than a few weeks are pruned as new ones are claimed.
"""

import asyncio
import contextlib
import enum
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime, timedelta
from typing import TypeVar

from sqlalchemy import delete, or_, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.conversations.models import JobClaim
from memory.db import affected, dialect_insert
from memory.models import utcnow

logger = logging.getLogger(__name__)

T = TypeVar("T")
# How long a done claim is kept: long enough that no period comes round again.
KEPT = timedelta(days=35)


class JobName(enum.StrEnum):
    """The background jobs claimed once across processes."""

    RETENTION = "retention"
    NIGHTLY_TIDY = "nightly-tidy"


class JobClaims:
    """Claim a job's run for a period, renew the claim, and mark it done."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        holder: str,
        ttl: timedelta,
        clock: Callable[[], datetime] = utcnow,
    ):
        self._sessionmaker = sessionmaker
        self.holder = holder
        self.ttl = ttl
        self._clock = clock

    async def claim(self, name: JobName, period: str) -> bool:
        """Claim the run unless it is done or another live process holds it; tell if claimed."""
        now = self._clock()
        values = {"claimed_by": self.holder, "lease_until": now + self.ttl}
        async with self._sessionmaker.begin() as session:
            connection = await session.connection()
            insert = dialect_insert(connection.dialect.name)
            row = {"name": str(name), "period": period, **values}
            inserted = await connection.execute(
                insert(JobClaim).values(row).on_conflict_do_nothing().returning(JobClaim.name)
            )
            if inserted.first() is not None:
                await connection.execute(
                    delete(JobClaim).where(JobClaim.name == name, JobClaim.done_at < now - KEPT)
                )
                return True
            # A claim left by a process that died (its lease ran out, not done): taken over.
            taken = await connection.execute(
                update(JobClaim)
                .where(
                    JobClaim.name == name,
                    JobClaim.period == period,
                    JobClaim.done_at.is_(None),
                    or_(JobClaim.lease_until <= now, JobClaim.claimed_by == self.holder),
                )
                .values(values)
            )
            if affected(taken):
                logger.info("took over %s for %s, which a stopped process left", name, period)
            return bool(affected(taken))

    async def renew(self, name: JobName, period: str) -> bool:
        """Keep the claim another lease time; tell whether it is still this process's."""
        async with self._sessionmaker.begin() as session:
            renewed = await session.execute(
                update(JobClaim)
                .where(
                    JobClaim.name == name,
                    JobClaim.period == period,
                    JobClaim.claimed_by == self.holder,
                )
                .values(lease_until=self._clock() + self.ttl)
            )
            return bool(affected(renewed))

    async def finish(self, name: JobName, period: str) -> None:
        """Mark the run done: no process runs it again."""
        async with self._sessionmaker.begin() as session:
            await session.execute(
                update(JobClaim)
                .where(
                    JobClaim.name == name,
                    JobClaim.period == period,
                    JobClaim.claimed_by == self.holder,
                )
                .values(done_at=self._clock())
            )

    @contextlib.asynccontextmanager
    async def _renewing(self, name: JobName, period: str) -> AsyncIterator[None]:
        """Renew the claim every third of a lease time while the block runs."""

        async def keep() -> None:
            while True:
                await asyncio.sleep(self.ttl.total_seconds() / 3)
                await self.renew(name, period)

        keeper = asyncio.create_task(keep(), name=f"claim of {name} {period}")
        try:
            yield
        finally:
            keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await keeper

    async def run_once(
        self, name: JobName, period: str, work: Callable[[], Awaitable[T]]
    ) -> T | None:
        """Run work if this process claims the run; mark it done after. None: not claimed."""
        if not await self.claim(name, period):
            return None
        async with self._renewing(name, period):
            result = await work()
        await self.finish(name, period)
        return result
