"""A database outage is logged by the due loop once as it starts and once as it ends.

The outage is the test's own Postgres database refusing connections, with its sessions ended
(as tests/test_db_outage.py does); the loop runs on the injected clock.
"""

import asyncio
import logging
from datetime import timedelta

import pytest

from bot.reminders.due import MAX_SLEEP, DueLoop
from bot.reminders.store import ReminderStore
from memory.db import create_engine, create_sessionmaker
from tests import pg
from tests.reminders.clock import FakeClock
from tests.reminders.test_due import T0, RecordingOutlet, add
from tests.test_db_outage import own_database, set_reachable  # noqa: F401


@pytest.mark.postgres
async def test_an_outage_is_one_warning_as_it_starts_and_one_info_as_it_ends(
    own_database,  # noqa: F811
    caplog,
):
    caplog.set_level(logging.INFO, logger="bot.reminders.due")
    engine = create_engine(pg.url_for(own_database))
    store = ReminderStore(create_sessionmaker(engine))
    reminder = await add(store, T0, in_duration="PT12M")
    clock, outlet = FakeClock(T0), RecordingOutlet()
    task = asyncio.create_task(DueLoop(store, outlet, clock).run())
    try:
        await clock.settled()
        await set_reachable(own_database, False)
        for _ in range(4):  # 20 minutes down: the reminder comes due meanwhile
            clock.advance(MAX_SLEEP)
            await clock.settled()
        await set_reachable(own_database, True)
        clock.advance(timedelta(minutes=1))
        await clock.settled()
        clock.advance(MAX_SLEEP)
        await clock.settled()
    finally:
        task.cancel()
        await asyncio.wait({task}, timeout=5)
        await engine.dispose()
    logged = [r for r in caplog.records if r.name == "bot.reminders.due"]
    assert [r.levelname for r in logged] == ["WARNING", "INFO"], caplog.text
    assert all(r.exc_info is None for r in logged)
    assert "database" in logged[0].getMessage() and "again" in logged[1].getMessage()
    # Due while the database was out, it fired once it was back.
    assert [fire[0] for fire in outlet.fired] == [reminder.id]
