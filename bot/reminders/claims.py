"""Fires of due reminders: each instant claimed once, leased until its send has an outcome.

A claim writes the fire under a unique key (reminder, instant) with a lease. The process that
claimed it renews the lease while it sends and records the outcome; a fire still claimed when
its lease ran out (its process died, or a passing failure's backoff is over) is claimed again,
by exactly one process (a conditional update on the lease), and sent again.
"""

import dataclasses
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlalchemy import Row, func, select, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.reminders.models import FireOutcome, Reminder, ReminderFire, ReminderState
from bot.reminders.records import COLUMNS, Claim, Decision, ReminderRecord, record_of
from memory.db import affected
from memory.models import utcnow

logger = logging.getLogger(__name__)

Decide = Callable[[ReminderRecord], Decision]


def broken(reminder: ReminderRecord) -> Decision:
    """Return what a reminder whose schedule cannot be computed becomes: stopped, not fired."""
    # Stopped as its Stop button does; its fire, written as failed, says why.
    return Decision(FireOutcome.FAILED, None, ReminderState.CANCELLED)


class FireClaims:
    """Claims due instants, re-claims the ones whose lease ran out, and records outcomes."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession]):
        self._sessionmaker = sessionmaker

    async def next_due_at(self) -> datetime | None:
        """Return when the next due instant or the next lease to run out comes, if any."""
        async with self._sessionmaker() as session:
            due = await session.scalar(
                select(func.min(Reminder.next_fire_at)).where(
                    Reminder.state == ReminderState.ACTIVE
                )
            )
            lease = await session.scalar(
                select(func.min(ReminderFire.lease_until)).where(
                    ReminderFire.outcome == FireOutcome.CLAIMED
                )
            )
        return min((at for at in (due, lease) if at is not None), default=None)

    async def claim_due(
        self, now: datetime, limit: int, decide: Decide, lease_until: datetime | None = None
    ) -> list[Claim]:
        """Claim the instants due at now, each once, and move their reminders on.

        A reminder whose schedule cannot be computed (a bad stored rule or zone) is claimed
        as failed and stopped, so it is told once and never stops the rest of the batch.
        """
        query = (
            select(*COLUMNS)
            .where(Reminder.state == ReminderState.ACTIVE, Reminder.next_fire_at <= now)
            .order_by(Reminder.next_fire_at, Reminder.id)
            .limit(limit)
            # Another process's claims in progress are skipped, not waited for (Postgres;
            # SQLite has one writer at a time, and the conditional update below decides).
            .with_for_update(skip_locked=True)
        )
        claims = []
        async with self._sessionmaker.begin() as session:
            for row in (await session.execute(query)).all():
                reminder = record_of(row)
                try:
                    decision = decide(reminder)
                except Exception as error:
                    logger.warning(
                        "reminder %s of owner %s cannot be scheduled (%s: %s); stopped",
                        reminder.id,
                        reminder.owner_id,
                        type(error).__name__,
                        error,
                    )
                    decision = broken(reminder)
                lease = lease_until if decision.outcome is FireOutcome.CLAIMED else None
                claim = await self._claim(session, reminder, decision, lease)
                if claim is not None:
                    claims.append(claim)
        return claims

    @staticmethod
    async def _claim(
        session: AsyncSession,
        reminder: ReminderRecord,
        decision: Decision,
        lease_until: datetime | None,
    ) -> Claim | None:
        """Move one due reminder on and write its fire, unless another process already did."""
        moved = await session.execute(
            update(Reminder)
            .where(
                Reminder.id == reminder.id,
                Reminder.state == ReminderState.ACTIVE,
                Reminder.next_fire_at == reminder.next_fire_at,
            )
            .values(next_fire_at=decision.next_fire_at, state=decision.state, updated_at=utcnow())
        )
        if affected(moved) != 1:
            return None
        try:
            async with session.begin_nested():
                fire = ReminderFire(
                    reminder_id=reminder.id,
                    scheduled_at=reminder.next_fire_at,
                    outcome=decision.outcome,
                    lease_until=lease_until,
                    attempts=1,
                )
                session.add(fire)
        except IntegrityError:
            # The unique key on (reminder, instant): this instant was fired before.
            return None
        return Claim(fire.id, reminder, decision)

    async def claim_stale(self, now: datetime, limit: int, lease_until: datetime) -> list[Claim]:
        """Claim again, each by one process, the fires still unsent when their lease ran out."""
        fire = ReminderFire
        query = (
            select(fire.id, fire.scheduled_at, fire.lease_until, fire.attempts, fire.failed_at)
            .where(fire.outcome == FireOutcome.CLAIMED, fire.lease_until <= now)
            .order_by(fire.lease_until, fire.id)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
        claims = []
        async with self._sessionmaker.begin() as session:
            for row in (await session.execute(query)).all():
                taken = await session.execute(
                    update(fire)
                    .where(
                        fire.id == row.id,
                        fire.outcome == FireOutcome.CLAIMED,
                        fire.lease_until == row.lease_until,
                    )
                    .values(lease_until=lease_until, attempts=fire.attempts + 1)
                )
                if affected(taken) != 1:
                    continue  # another process took it first
                claims.append(await self._reclaimed(session, row))
        return claims

    @staticmethod
    async def _reclaimed(session: AsyncSession, row: Row[*tuple[Any, ...]]) -> Claim:
        """Return the claim of a fire taken again: its reminder as due at the fire's instant."""
        reminder_row = (
            await session.execute(
                select(*COLUMNS)
                .join(ReminderFire, ReminderFire.reminder_id == Reminder.id)
                .where(ReminderFire.id == row.id)
            )
        ).one()
        reminder = dataclasses.replace(record_of(reminder_row), next_fire_at=row.scheduled_at)
        decision = Decision(FireOutcome.CLAIMED, None, reminder.state)
        return Claim(row.id, reminder, decision, row.attempts + 1, row.failed_at)

    async def renew(self, fire_id: int, lease_until: datetime) -> None:
        """Extend the lease of a fire this process is still sending."""
        async with self._sessionmaker.begin() as session:
            await session.execute(
                update(ReminderFire)
                .where(ReminderFire.id == fire_id, ReminderFire.outcome == FireOutcome.CLAIMED)
                .values(lease_until=lease_until)
            )

    async def retry_at(self, fire_id: int, failed_at: datetime, at: datetime) -> None:
        """Leave a fire claimed after a passing failure, to be sent again at an instant."""
        async with self._sessionmaker.begin() as session:
            await session.execute(
                update(ReminderFire)
                .where(ReminderFire.id == fire_id, ReminderFire.outcome == FireOutcome.CLAIMED)
                .values(lease_until=at, failed_at=failed_at)
            )

    async def record(
        self, fire_id: int, outcome: FireOutcome, message_id: int | None = None
    ) -> None:
        """Record what became of a claimed fire; it is no longer leased."""
        sent_at = utcnow() if outcome is FireOutcome.SENT else None
        async with self._sessionmaker.begin() as session:
            await session.execute(
                update(ReminderFire)
                .where(ReminderFire.id == fire_id)
                .values(outcome=outcome, message_id=message_id, sent_at=sent_at, lease_until=None)
            )

    async def mark_missed(self, reminder_id: int) -> None:
        """Mark a one-off missed (listed in /reminders) once its fire came too late to send."""
        async with self._sessionmaker.begin() as session:
            await session.execute(
                update(Reminder)
                .where(Reminder.id == reminder_id, Reminder.state == ReminderState.DONE)
                .values(state=ReminderState.MISSED, updated_at=utcnow())
            )

    async def pause_chat(self, chat_id: int) -> int:
        """Pause every active reminder of a chat that blocked the bot; return how many."""
        async with self._sessionmaker.begin() as session:
            paused = await session.execute(
                update(Reminder)
                .where(Reminder.chat_id == chat_id, Reminder.state == ReminderState.ACTIVE)
                .values(state=ReminderState.PAUSED, updated_at=utcnow())
            )
            return affected(paused)

    async def reachable(self) -> bool:
        """Tell whether the database answers a trivial query now."""
        try:
            async with self._sessionmaker() as session:
                await session.execute(select(1))
        except (SQLAlchemyError, OSError, TimeoutError):
            return False
        return True
