"""Reminders are delivered at least once; one owner's bad row stops no one else's (both engines)."""

import asyncio
import functools
from datetime import timedelta

import pytest
from sqlalchemy import select, update

from bot.reminders.due import BACKOFF, LEASE, RETRY_FOR, Delivery, DueLoop, decide
from bot.reminders.models import FireOutcome, Reminder, ReminderFire, ReminderState
from bot.reminders.records import Claim, Place
from bot.reminders.store import ReminderStore
from memory.db import create_engine, create_sessionmaker
from tests.reminders.clock import FakeClock
from tests.reminders.test_due import ANN, T0, RecordingOutlet, add

BOB = Place(owner_id=222, chat_id=222)
PASSING = Delivery(FireOutcome.FAILED, passing=True)


@pytest.fixture
def reminders(sessionmaker) -> ReminderStore:
    return ReminderStore(sessionmaker)


class ScriptedOutlet(RecordingOutlet):
    """Answers each send from a script (then sends), and records every notice."""

    def __init__(self, *answers: Delivery):
        super().__init__()
        self.answers = list(answers)

    async def fire(self, claim: Claim, late: bool) -> Delivery:
        self.fired.append((claim.reminder.id, claim.reminder.next_fire_at, late))
        self.arrived.set()
        if self.answers:
            return self.answers.pop(0)
        return Delivery(FireOutcome.SENT, 1000 + len(self.fired))


async def outcomes(sessionmaker, reminder_id: int) -> list[str]:
    async with sessionmaker() as session:
        rows = await session.scalars(
            select(ReminderFire.outcome).where(ReminderFire.reminder_id == reminder_id)
        )
        return list(rows)


async def test_a_bad_stored_rule_stops_its_reminder_alone_and_its_owner_is_told_once(
    reminders, sessionmaker
):
    bad = await add(
        reminders, T0, BOB, text="bad one", at_local="2026-11-24T09:05", rule="FREQ=DAILY"
    )
    good = await add(reminders, T0, in_duration="PT10M")
    # Stored before rules were checked: its next time cannot be worked out.
    async with sessionmaker.begin() as session:
        await session.execute(
            update(Reminder).where(Reminder.id == bad.id).values(rule="FREQ=YEARLY;INTERVAL=-1")
        )
    clock, outlet = FakeClock(T0 + timedelta(minutes=10)), ScriptedOutlet()
    loop = DueLoop(reminders, outlet, clock)
    assert await loop.fire_due() == 2
    # Due first, it did not stop the other owner's reminder, which fired on time.
    assert outlet.fired == [(good.id, T0 + timedelta(minutes=10), False)]
    assert outlet.broken == [bad.id]
    for _ in range(3):
        clock.advance(timedelta(minutes=1))
        assert await loop.fire_due() == 0
    assert outlet.broken == [bad.id]  # told once, not every minute
    assert (await reminders.get(BOB.owner_id, bad.id)).state is ReminderState.CANCELLED
    assert await outcomes(sessionmaker, bad.id) == [FireOutcome.FAILED]


async def test_a_passing_failure_is_sent_again_with_backoff_and_arrives_once(
    reminders, sessionmaker
):
    reminder = await add(reminders, T0, in_duration="PT1M")
    clock, outlet = FakeClock(T0 + timedelta(minutes=1)), ScriptedOutlet(PASSING, PASSING)
    loop = DueLoop(reminders, outlet, clock)
    assert await loop.fire_due() == 1
    assert await loop.fire_due() == 0  # not again before its backoff
    assert await reminders.next_due_at() == clock.now() + BACKOFF[0]
    clock.advance(BACKOFF[0])
    assert await loop.fire_due() == 1
    clock.advance(BACKOFF[1] - timedelta(seconds=1))
    assert await loop.fire_due() == 0
    clock.advance(timedelta(seconds=1))
    assert await loop.fire_due() == 1
    clock.advance(timedelta(hours=1))
    assert await loop.fire_due() == 0
    due = T0 + timedelta(minutes=1)
    # Tried three times; the third, 90 seconds late, is not late enough to say so.
    assert outlet.fired == [(reminder.id, due, False)] * 3
    assert outlet.unsent == []
    assert await outcomes(sessionmaker, reminder.id) == [FireOutcome.SENT]


async def test_passing_failures_are_retried_for_a_bounded_time_then_the_chat_is_told_once(
    reminders, sessionmaker
):
    reminder = await add(reminders, T0, in_duration="PT1M")
    start = T0 + timedelta(minutes=1)
    clock, outlet = FakeClock(start), ScriptedOutlet(*[PASSING] * 50)
    loop = DueLoop(reminders, outlet, clock)
    await loop.fire_due()
    while not outlet.unsent and clock.now() - start < 2 * RETRY_FOR:
        clock.advance(BACKOFF[-1])
        await loop.fire_due()
    assert outlet.unsent == [reminder.id]
    assert RETRY_FOR <= clock.now() - start <= RETRY_FOR + BACKOFF[-1]
    tries = len(outlet.fired)
    assert 4 <= tries <= 10
    clock.advance(timedelta(hours=1))
    assert await loop.fire_due() == 0
    assert len(outlet.fired) == tries and outlet.unsent == [reminder.id]
    assert await outcomes(sessionmaker, reminder.id) == [FireOutcome.FAILED]
    assert await reminders.next_due_at() is None


async def test_a_claim_whose_process_died_is_sent_again_once_after_its_lease_marked_late(
    database_url,
):
    engines = [create_engine(database_url) for _ in range(2)]
    try:
        stores = [ReminderStore(create_sessionmaker(engine)) for engine in engines]
        reminder = await add(stores[0], T0, in_duration="PT1M")
        due = T0 + timedelta(minutes=1)
        decide_now = functools.partial(decide, now=due)
        # Claimed, and then its process died before it sent anything.
        assert len(await stores[0].claim_due(due, 100, decide_now, due + LEASE)) == 1
        clock = FakeClock(due + LEASE - timedelta(seconds=1))
        outlets = [ScriptedOutlet(), ScriptedOutlet()]
        loops = [DueLoop(s, o, clock) for s, o in zip(stores, outlets, strict=True)]
        assert await asyncio.gather(*(loop.fire_due() for loop in loops)) == [0, 0]
        clock.advance(timedelta(seconds=1))
        # Two processes look at once: exactly one of them takes it over.
        assert sorted(await asyncio.gather(*(loop.fire_due() for loop in loops))) == [0, 1]
        sent = [fire for outlet in outlets for fire in outlet.fired]
        assert sent == [(reminder.id, due, True)]
        clock.advance(timedelta(hours=1))
        assert await asyncio.gather(*(loop.fire_due() for loop in loops)) == [0, 0]
        assert await outcomes(create_sessionmaker(engines[0]), reminder.id) == [FireOutcome.SENT]
    finally:
        for engine in engines:
            await engine.dispose()


async def test_a_claim_left_by_a_dead_process_is_not_sent_once_cancelled(reminders, sessionmaker):
    reminder = await add(reminders, T0, in_duration="PT1M", rule=None)
    due = T0 + timedelta(minutes=1)
    await reminders.claim_due(due, 100, functools.partial(decide, now=due), due + LEASE)
    await reminders.cancel(ANN.owner_id, reminder.id)
    outlet = ScriptedOutlet()
    assert await DueLoop(reminders, outlet, FakeClock(due + LEASE)).fire_due() == 1
    assert outlet.fired == []
    assert await outcomes(sessionmaker, reminder.id) == [FireOutcome.SKIPPED]


class HeldOutlet(ScriptedOutlet):
    """Keeps every send waiting until released, as a slow Telegram would."""

    def __init__(self):
        super().__init__()
        self.release = asyncio.Event()

    async def fire(self, claim: Claim, late: bool) -> Delivery:
        delivery = await super().fire(claim, late)
        await self.release.wait()
        return delivery


async def lease_of(sessionmaker, reminder_id: int):
    async with sessionmaker() as session:
        return await session.scalar(
            select(ReminderFire.lease_until).where(ReminderFire.reminder_id == reminder_id)
        )


async def test_a_slow_send_keeps_its_lease_so_no_other_process_sends_it_too(database_url):
    engines = [create_engine(database_url) for _ in range(2)]
    lease = timedelta(seconds=0.3)  # renewed every 0.1 s of real time
    try:
        makers = [create_sessionmaker(engine) for engine in engines]
        stores = [ReminderStore(maker) for maker in makers]
        reminder = await add(stores[0], T0, in_duration="PT1M")
        clock = FakeClock(T0 + timedelta(minutes=1))
        slow, other = HeldOutlet(), ScriptedOutlet()
        sending = asyncio.create_task(DueLoop(stores[0], slow, clock, lease=lease).fire_due())
        await asyncio.wait_for(slow.arrived.wait(), 5)
        clock.advance(timedelta(minutes=10))  # far past the lease it was claimed with
        async with asyncio.timeout(10):
            # Polls the database for the renewal, which the loop does in real time.
            while (await lease_of(makers[1], reminder.id)) <= clock.now():  # noqa: ASYNC110
                await asyncio.sleep(0.05)
        assert await DueLoop(stores[1], other, clock, lease=lease).fire_due() == 0
        slow.release.set()
        assert await sending == 1
        assert other.fired == [] and len(slow.fired) == 1
        assert await outcomes(makers[0], reminder.id) == [FireOutcome.SENT]
    finally:
        for engine in engines:
            await engine.dispose()


async def test_a_claim_left_more_than_a_day_is_told_missed_not_sent(reminders, sessionmaker):
    reminder = await add(reminders, T0, in_duration="PT1M")
    due = T0 + timedelta(minutes=1)
    await reminders.claim_due(due, 100, functools.partial(decide, now=due), due + LEASE)
    outlet = ScriptedOutlet()
    later = due + timedelta(days=1, minutes=1)
    assert await DueLoop(reminders, outlet, FakeClock(later)).fire_due() == 1
    assert outlet.fired == [] and outlet.missed == [[reminder.id]]
    assert [r.id for r in await reminders.missed(ANN.owner_id, 5)] == [reminder.id]
    assert await outcomes(sessionmaker, reminder.id) == [FireOutcome.MISSED]
