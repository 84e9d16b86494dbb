"""Figure 12: reminders: lateness to sendMessage, the due query at 10,000, model calls."""

import functools
import time
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from sqlalchemy import insert

from bot.reminders.due import decide
from bot.reminders.models import Reminder, ReminderState
from bot.reminders.records import Place
from bot.reminders.store import ReminderStore
from bot.reminders.timing import Schedule
from memory.db import create_engine, create_sessionmaker
from memory.models import utcnow
from tests.harness import OWNER, make_settings
from tests.perf.botrun import PerfBot, database
from tests.perf.common import Config, Row, command, ms, percentile
from tests.perf.fakes import TimedAnthropic, TimedTelegram

ZONE = "Europe/Berlin"
LATENESS_TARGET = "p99 <= 2 s"
QUERY_TARGET = "p99 < 10 ms"
WARMUP = 5  # first queries open the pool's connections


async def seed(url: str, count: int) -> None:
    """Insert active reminders of many owners, due over the next year, in bulk."""
    now = utcnow()
    rows = [
        {
            "owner_id": 1000 + n % 500, "chat_id": 1000 + n % 500, "thread_id": None,
            "text": f"reminder {n}", "check_in": False, "zone": ZONE,
            "start_local": (now + timedelta(hours=1 + n)).replace(tzinfo=None),
            "start_at": None, "rule": "FREQ=WEEKLY" if n % 3 == 0 else None,
            "until_local": None, "count": None,
            "next_fire_at": now + timedelta(hours=1 + n), "state": ReminderState.ACTIVE,
            "created_at": now, "updated_at": now,
        }
        for n in range(count)
    ]  # fmt: skip
    engine = create_engine(url)
    try:
        async with engine.begin() as connection:
            await connection.execute(insert(Reminder), rows)
    finally:
        await engine.dispose()


async def due_query(url: str, runs: int) -> list[float]:
    """Time the due loop's two queries (claim what is due, when is the next) when none is due."""
    engine = create_engine(url)
    store = ReminderStore(create_sessionmaker(engine))
    times = []
    try:
        for run in range(runs + WARMUP):
            now = utcnow()
            started = time.perf_counter()
            claims = await store.claim_due(now, 100, functools.partial(decide, now=now))
            await store.next_due_at()
            if run >= WARMUP:
                times.append(time.perf_counter() - started)
            assert claims == []
    finally:
        await engine.dispose()
    return times


async def lateness(config: Config, workdir: Path, backend: str) -> tuple[list[float], int]:
    """Fire reminders due in the same few seconds; return each one's lateness, and model calls."""
    async with (
        database(backend, workdir, config.postgres_url) as url,
        TimedTelegram() as tg,
        TimedAnthropic() as model,
    ):
        bot = PerfBot(tg, model, make_settings(tg, model, url))
        await bot.start()
        try:
            store = bot.services.reminders.store
            chats = [OWNER + n for n in range(config.reminder_fires)]
            calls, sent_before = len(model.requests), len(tg.sends)
            before_in_chats = sum(len(tg.sends_to(chat)) for chat in chats)
            due_at, start = {}, utcnow() + timedelta(seconds=2)
            for n, chat in enumerate(chats):
                await store.set_zone(chat, ZONE)
                due_at[chat] = start + timedelta(seconds=n % 3)
                await store.create(Place(chat, chat), f"reminder {n}", _at(due_at[chat]),
                                   check_in=False, limit=50)  # fmt: skip
            bot.services.reminders.alarm.set()
            wall = time.time() - time.perf_counter()  # perf_counter readings as Unix time
            await tg.wait_for_sends(chats, before_in_chats + len(chats), timeout=30)
            late = [
                arrived + wall - due_at[chat].timestamp()
                for chat, arrived in tg.sends[sent_before:]
            ]
            return late, len(model.requests) - calls
        finally:
            await bot.stop()


def _at(at: datetime) -> Schedule:
    """Return a one-off schedule at an instant."""
    zone = ZoneInfo(ZONE)
    return Schedule(zone, at.astimezone(zone).replace(tzinfo=None), start_at=at)


async def run(config: Config, workdir: Path) -> list[Row]:
    """Measure every backend: the due query at the seeded size, lateness, model calls."""
    rows = []
    for backend in config.backends:
        async with database(backend, workdir, config.postgres_url) as url:
            await seed(url, config.reminder_rows)
            times = await due_query(url, config.reminder_queries)
        p50, p99 = percentile(times, 50), percentile(times, 99)
        rows.append(Row(
            "reminders",
            f"12. Reminders: due query at {config.reminder_rows:,} active ({backend})",
            f"p50 {ms(p50)}, p99 {ms(p99)}", (p50, p99), QUERY_TARGET, p99 < 0.010,
            command("reminders", f"--backends {backend}"),
        ))  # fmt: skip
        late, calls = await lateness(config, workdir, backend)
        p50, p99 = percentile(late, 50), percentile(late, 99)
        rows.append(Row(
            "reminders",
            f"12. Reminders: lateness, due time to sendMessage, {len(late)} due within 3 s "
            f"({backend})",
            f"p50 {p50:.2f} s, p99 {p99:.2f} s", (p50, p99), LATENESS_TARGET, p99 <= 2.0,
            command("reminders", f"--backends {backend}"),
        ))  # fmt: skip
        rows.append(Row(
            "reminders", f"12. Reminders: model calls for {len(late)} plain ones ({backend})",
            str(calls),
            (float(calls),), "0", calls == 0, command("reminders", f"--backends {backend}"),
        ))  # fmt: skip
    return rows
