"""Reminders in the database: every read and write scoped by owner, each fire claimed once."""

import zoneinfo
from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.reminders.claims import FireClaims
from bot.reminders.models import FireOutcome, OwnerZone, Reminder, ReminderFire, ReminderState
from bot.reminders.records import (
    ACTIVE_STATES,
    COLUMNS,
    Place,
    ReminderLimit,
    ReminderNotFound,
    ReminderRecord,
    record_of,
)
from bot.reminders.timing import Schedule
from memory.models import utcnow
from memory.write_check import checked_write


class ReminderStore(FireClaims):
    """Creates, lists, changes and claims reminders."""

    async def zone_of(self, owner_id: int) -> str | None:
        """Return the owner's IANA zone, or None when it is not known yet."""
        async with self._sessionmaker() as session:
            return await session.scalar(
                select(OwnerZone.zone).where(OwnerZone.owner_id == owner_id)
            )

    async def set_zone(self, owner_id: int, zone: str) -> None:
        """Set the owner's zone (their future reminders are set in it)."""
        async with checked_write(self._sessionmaker) as session:
            row = await session.get(OwnerZone, owner_id)
            if row is None:
                session.add(OwnerZone(owner_id=owner_id, zone=zone))
            else:
                row.zone, row.updated_at = zone, utcnow()

    async def create(
        self,
        place: Place,
        text: str,
        schedule: Schedule,
        *,
        check_in: bool,
        limit: int,
        first_at: datetime | None = None,
    ) -> ReminderRecord:
        """Store a new reminder (due at first_at, else its first occurrence); mind the limit."""
        async with checked_write(self._sessionmaker) as session:
            active = await self._count_active(session, place.owner_id)
            if active >= limit:
                raise ReminderLimit(limit)
            reminder = Reminder(
                owner_id=place.owner_id,
                chat_id=place.chat_id,
                thread_id=place.thread_id,
                text=text,
                check_in=check_in,
                zone=str(schedule.zone),
                start_local=schedule.start,
                start_at=schedule.start_at,
                rule=schedule.rule,
                until_local=schedule.until,
                count=schedule.count,
                next_fire_at=first_at or schedule.first().at,
                state=ReminderState.ACTIVE,
            )
            session.add(reminder)
            await session.flush()
            return await self._get(session, place.owner_id, reminder.id)

    async def get(self, owner_id: int, reminder_id: int) -> ReminderRecord:
        """Return one of the owner's reminders; raise ReminderNotFound otherwise."""
        async with self._sessionmaker() as session:
            return await self._get(session, owner_id, reminder_id)

    async def upcoming(self, owner_id: int, limit: int, offset: int = 0) -> list[ReminderRecord]:
        """Return the owner's active and paused reminders, soonest first."""
        query = (
            select(*COLUMNS)
            .where(Reminder.owner_id == owner_id, Reminder.state.in_(ACTIVE_STATES))
            .order_by(Reminder.next_fire_at, Reminder.id)
            .limit(limit)
            .offset(offset)
        )
        async with self._sessionmaker() as session:
            return [record_of(row) for row in await session.execute(query)]

    async def missed(self, owner_id: int, limit: int) -> list[ReminderRecord]:
        """Return the owner's reminders that came due while the bot was down too long."""
        query = (
            select(*COLUMNS)
            .where(Reminder.owner_id == owner_id, Reminder.state == ReminderState.MISSED)
            .order_by(Reminder.updated_at.desc(), Reminder.id.desc())
            .limit(limit)
        )
        async with self._sessionmaker() as session:
            return [record_of(row) for row in await session.execute(query)]

    async def count_active(self, owner_id: int) -> int:
        """Return how many active or paused reminders the owner has."""
        async with self._sessionmaker() as session:
            return await self._count_active(session, owner_id)

    async def reschedule(
        self,
        owner_id: int,
        reminder_id: int,
        schedule: Schedule,
        text: str | None = None,
        first_at: datetime | None = None,
    ) -> ReminderRecord:
        """Give a reminder a new schedule (and text), due at first_at; it is active again."""
        async with checked_write(self._sessionmaker) as session:
            await self._get(session, owner_id, reminder_id)
            values: dict[str, object] = {
                "zone": str(schedule.zone),
                "start_local": schedule.start,
                "start_at": schedule.start_at,
                "rule": schedule.rule,
                "until_local": schedule.until,
                "count": schedule.count,
                "next_fire_at": first_at or schedule.first().at,
                "state": ReminderState.ACTIVE,
                "updated_at": utcnow(),
            }
            if text is not None:
                values["text"] = text
            await session.execute(update(Reminder).where(Reminder.id == reminder_id).values(values))
            return await self._get(session, owner_id, reminder_id)

    async def move_next(
        self, owner_id: int, reminder_id: int, next_fire_at: datetime | None
    ) -> ReminderRecord:
        """Set when a reminder fires next (a snooze or a skip); None ends it as done."""
        state = ReminderState.ACTIVE if next_fire_at is not None else ReminderState.DONE
        return await self._set(owner_id, reminder_id, next_fire_at=next_fire_at, state=state)

    async def snooze(
        self, owner_id: int, reminder_id: int, at: datetime, limit: int
    ) -> ReminderRecord:
        """Fire a reminder again at an instant: a one-off moves, a repeat gets a one-off copy."""
        reminder = await self.get(owner_id, reminder_id)
        if not reminder.repeats:
            return await self.move_next(owner_id, reminder_id, at)
        zone = zoneinfo.ZoneInfo(reminder.zone)
        local = at.astimezone(zone).replace(tzinfo=None)
        place = Place(reminder.owner_id, reminder.chat_id, reminder.thread_id)
        schedule = Schedule(zone, local, start_at=at)
        return await self.create(
            place, reminder.text, schedule, check_in=reminder.check_in, limit=limit
        )

    async def last_fire_at(self, reminder_id: int) -> datetime | None:
        """Return the instant a reminder last fired for (its scheduled time, not its send)."""
        async with self._sessionmaker() as session:
            return await session.scalar(
                select(func.max(ReminderFire.scheduled_at)).where(
                    ReminderFire.reminder_id == reminder_id
                )
            )

    async def cancel(self, owner_id: int, reminder_id: int) -> ReminderRecord:
        """Cancel a reminder for good."""
        return await self._set(
            owner_id, reminder_id, next_fire_at=None, state=ReminderState.CANCELLED
        )

    async def _set(self, owner_id: int, reminder_id: int, **values: object) -> ReminderRecord:
        """Change one of the owner's reminders and return it as it now is."""
        async with checked_write(self._sessionmaker) as session:
            await self._get(session, owner_id, reminder_id)
            await session.execute(
                update(Reminder)
                .where(Reminder.id == reminder_id)
                .values(**values, updated_at=utcnow())
            )
            return await self._get(session, owner_id, reminder_id)

    async def check_ins_sent_since(self, owner_id: int, since: datetime) -> int:
        """Return how many check-ins of the owner were answered since an instant."""
        query = (
            select(func.count())
            .select_from(ReminderFire)
            .join(Reminder, Reminder.id == ReminderFire.reminder_id)
            .where(
                Reminder.owner_id == owner_id,
                Reminder.check_in.is_(True),
                ReminderFire.outcome == FireOutcome.SENT,
                ReminderFire.sent_at >= since,
            )
        )
        async with self._sessionmaker() as session:
            return int(await session.scalar(query) or 0)

    @staticmethod
    async def _count_active(session: AsyncSession, owner_id: int) -> int:
        """Count the owner's active and paused reminders inside a session."""
        return int(
            await session.scalar(
                select(func.count())
                .select_from(Reminder)
                .where(Reminder.owner_id == owner_id, Reminder.state.in_(ACTIVE_STATES))
            )
            or 0
        )

    @staticmethod
    async def _get(session: AsyncSession, owner_id: int, reminder_id: int) -> ReminderRecord:
        """Read one of the owner's reminders inside a session."""
        row = (
            await session.execute(
                select(*COLUMNS).where(Reminder.id == reminder_id, Reminder.owner_id == owner_id)
            )
        ).first()
        if row is None:
            raise ReminderNotFound(reminder_id)
        return record_of(row)
