"""The due loop on both engines: on time, once across processes, and sane after downtime."""

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.reminders.due import Delivery, DueLoop
from bot.reminders.models import FireOutcome, ReminderState
from bot.reminders.records import (
    Claim,
    Place,
    ReminderLimit,
    ReminderNotFound,
    ReminderRecord,
)
from bot.reminders.store import ReminderStore
from bot.reminders.timing import resolve
from memory.db import create_engine, create_sessionmaker
from tests.reminders.clock import FakeClock

BERLIN = ZoneInfo("Europe/Berlin")
T0 = datetime(2026, 11, 24, 8, 0, tzinfo=UTC)
ANN = Place(owner_id=111, chat_id=111)


class RecordingOutlet:
    """Records what it was asked to send; answers as told."""

    def __init__(self, answer: FireOutcome = FireOutcome.SENT):
        self.fired: list[tuple[int, datetime | None, bool]] = []
        self.missed: list[list[int]] = []
        self.unsent: list[int] = []
        self.broken: list[int] = []
        self.answer = answer
        self.arrived = asyncio.Event()

    async def fire(self, claim: Claim, late: bool) -> Delivery:
        self.fired.append((claim.reminder.id, claim.reminder.next_fire_at, late))
        self.arrived.set()
        if self.answer is FireOutcome.FAILED:
            raise ConnectionError("the network is down")
        return Delivery(self.answer, 1000 + len(self.fired))

    async def tell_missed(self, missed: Sequence[ReminderRecord]) -> None:
        self.missed.append([r.id for r in missed])

    async def tell_unsent(self, reminder: ReminderRecord) -> None:
        self.unsent.append(reminder.id)

    async def tell_broken(self, reminder: ReminderRecord) -> None:
        self.broken.append(reminder.id)


@pytest.fixture
def reminders(sessionmaker) -> ReminderStore:
    return ReminderStore(sessionmaker)


async def add(store: ReminderStore, now: datetime, place: Place = ANN, text="call Sarah", **when):
    schedule = resolve(zone=BERLIN, now=now, **({"at_local": None, "in_duration": None} | when))
    return await store.create(place, text, schedule, check_in=False, limit=50)


async def test_a_one_off_fires_once_on_time(reminders):
    reminder = await add(reminders, T0, in_duration="PT20M")
    clock, outlet = FakeClock(T0 + timedelta(minutes=19)), RecordingOutlet()
    loop = DueLoop(reminders, outlet, clock)
    assert await loop.fire_due() == 0
    clock.advance(timedelta(minutes=1))
    assert await loop.fire_due() == 1
    assert await loop.fire_due() == 0
    assert outlet.fired == [(reminder.id, T0 + timedelta(minutes=20), False)]
    done = await reminders.get(ANN.owner_id, reminder.id)
    assert done.state is ReminderState.DONE and done.next_fire_at is None


async def test_the_loop_wakes_at_the_next_due_time_and_when_told(reminders):
    clock, outlet = FakeClock(T0), RecordingOutlet()
    loop = DueLoop(reminders, outlet, clock)
    await add(reminders, T0, in_duration="PT1M")
    task = asyncio.create_task(loop.run())
    try:
        await clock.settled()  # asleep until the reminder is due
        assert outlet.fired == []
        clock.advance(timedelta(minutes=1))
        await asyncio.wait_for(outlet.arrived.wait(), 5)
        outlet.arrived.clear()
        # Set while the loop sleeps (up to five minutes): waking it sends at the new time.
        await add(reminders, clock.now(), in_duration="PT1M", text="bread")
        clock.advance(timedelta(minutes=1))
        loop.wake()
        await asyncio.wait_for(outlet.arrived.wait(), 5)
        assert len(outlet.fired) == 2
    finally:
        task.cancel()
        await asyncio.wait({task}, timeout=5)


async def test_two_processes_on_one_database_never_send_the_same_instant(database_url):
    engines = [create_engine(database_url) for _ in range(2)]
    try:
        stores = [ReminderStore(create_sessionmaker(engine)) for engine in engines]
        for n in range(200):
            await add(stores[0], T0, Place(owner_id=n, chat_id=n), in_duration="PT1M")
        clock = FakeClock(T0 + timedelta(minutes=1, seconds=30))
        outlets = [RecordingOutlet(), RecordingOutlet()]
        loops = [
            DueLoop(store, outlet, clock) for store, outlet in zip(stores, outlets, strict=True)
        ]
        claimed = await asyncio.gather(*(loop.fire_due() for loop in loops))
        sent = [fire[0] for outlet in outlets for fire in outlet.fired]
        assert sum(claimed) == 200
        assert len(sent) == 200 and len(set(sent)) == 200
    finally:
        for engine in engines:
            await engine.dispose()


async def test_after_downtime_a_one_off_fires_once_late_and_an_old_one_is_told_missed(reminders):
    late = await add(reminders, T0, at_local="2026-11-24T12:00")
    old = await add(reminders, T0, at_local="2026-11-25T09:00", text="old")
    clock, outlet = FakeClock(datetime(2026, 11, 26, 10, 0, tzinfo=UTC)), RecordingOutlet()
    assert await DueLoop(reminders, outlet, clock).fire_due() == 2
    # 12:00 on the 24th is two days ago: missed; 09:00 on the 25th is a day and two hours ago.
    assert outlet.fired == []
    assert sorted(outlet.missed[0]) == sorted([late.id, old.id])
    clock2, outlet2 = FakeClock(datetime(2026, 11, 26, 9, 0, tzinfo=UTC)), RecordingOutlet()
    recent = await add(reminders, T0, at_local="2026-11-25T12:00", text="recent")
    assert await DueLoop(reminders, outlet2, clock2).fire_due() == 1
    assert outlet2.fired == [(recent.id, datetime(2026, 11, 25, 11, 0, tzinfo=UTC), True)]
    assert (await reminders.get(ANN.owner_id, old.id)).state is ReminderState.MISSED
    assert [r.id for r in await reminders.missed(ANN.owner_id, 10)] == [old.id, late.id] or [
        r.id for r in await reminders.missed(ANN.owner_id, 10)
    ] == [late.id, old.id]


@pytest.mark.parametrize(
    ("down_until", "sent", "next_fire"),
    [
        # Daily at 09:00 Berlin (08:00 UTC): back within its grace (two hours): one catch-up.
        (datetime(2026, 11, 25, 9, 30, tzinfo=UTC), True, datetime(2026, 11, 26, 8, 0, tzinfo=UTC)),
        # Back three hours late: no catch-up, on to the next day.
        (
            datetime(2026, 11, 25, 11, 0, tzinfo=UTC),
            False,
            datetime(2026, 11, 26, 8, 0, tzinfo=UTC),
        ),
        # Down for five days: never a burst, one skip to the next occurrence.
        (datetime(2026, 11, 30, 12, 0, tzinfo=UTC), False, datetime(2026, 12, 1, 8, 0, tzinfo=UTC)),
    ],
)
async def test_a_repeating_one_catches_up_at_most_once_within_its_grace(
    reminders, down_until, sent, next_fire
):
    daily = await add(reminders, T0, at_local="2026-11-25T09:00", rule="FREQ=DAILY")
    outlet = RecordingOutlet()
    assert await DueLoop(reminders, outlet, FakeClock(down_until)).fire_due() == 1
    assert [fire[0] for fire in outlet.fired] == ([daily.id] if sent else [])
    assert (await reminders.get(ANN.owner_id, daily.id)).next_fire_at == next_fire


async def test_a_chat_that_blocked_the_bot_pauses_its_reminders_without_retries(reminders):
    first = await add(reminders, T0, in_duration="PT1M")
    second = await add(reminders, T0, in_duration="PT2H", text="later")
    other = await add(reminders, T0, Place(owner_id=222, chat_id=222), in_duration="PT2H")
    outlet = RecordingOutlet(FireOutcome.BLOCKED)
    assert await DueLoop(reminders, outlet, FakeClock(T0 + timedelta(minutes=5))).fire_due() == 1
    assert (await reminders.get(ANN.owner_id, second.id)).state is ReminderState.PAUSED
    assert (await reminders.get(222, other.id)).state is ReminderState.ACTIVE
    assert await DueLoop(reminders, outlet, FakeClock(T0 + timedelta(hours=3))).fire_due() == 1
    assert [fire[0] for fire in outlet.fired] == [first.id, other.id]


async def test_a_failed_send_is_recorded_and_the_loop_goes_on(reminders):
    await add(reminders, T0, in_duration="PT1M")
    await add(reminders, T0, in_duration="PT1M", text="another")
    outlet = RecordingOutlet(FireOutcome.FAILED)
    assert await DueLoop(reminders, outlet, FakeClock(T0 + timedelta(minutes=1))).fire_due() == 2
    assert len(outlet.fired) == 2


async def test_every_read_and_write_is_scoped_by_owner(reminders):
    ann = await add(reminders, T0, in_duration="PT1H")
    for action in (
        reminders.get(222, ann.id),
        reminders.cancel(222, ann.id),
        reminders.move_next(222, ann.id, T0),
    ):
        with pytest.raises(ReminderNotFound):
            await action
    assert await reminders.upcoming(222, 10) == []
    assert (await reminders.get(ANN.owner_id, ann.id)).state is ReminderState.ACTIVE


async def test_the_cap_on_active_reminders(reminders):
    schedule = resolve(at_local=None, in_duration="PT1H", zone=BERLIN, now=T0)
    for _ in range(3):
        await reminders.create(ANN, "x", schedule, check_in=False, limit=3)
    with pytest.raises(ReminderLimit):
        await reminders.create(ANN, "x", schedule, check_in=False, limit=3)
    first = (await reminders.upcoming(ANN.owner_id, 1))[0]
    await reminders.cancel(ANN.owner_id, first.id)
    await reminders.create(ANN, "x", schedule, check_in=False, limit=3)


class ConvertingOutlet(RecordingOutlet):
    """Blocks while telling of missed ones; cancelled, raises its own error, as drivers may."""

    async def tell_missed(self, missed: Sequence[ReminderRecord]) -> None:
        self.arrived.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            raise ConnectionError("connection closed") from None


async def test_a_stop_stops_the_loop_even_when_cancellation_comes_back_as_another_error(reminders):
    await add(reminders, T0, in_duration="PT1M")
    outlet = ConvertingOutlet()
    task = asyncio.create_task(DueLoop(reminders, outlet, FakeClock(T0 + timedelta(days=2))).run())
    await asyncio.wait_for(outlet.arrived.wait(), 5)
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=5)
    assert done == {task}, "the loop went on after it was cancelled"
