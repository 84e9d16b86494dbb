"""The reminders' end-to-end fixture: the real bot with its due loop on an injected clock."""

from datetime import UTC, datetime

import pytest

from tests.reminders.clock import FakeClock

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)  # a Tuesday, 13:00 in Berlin


@pytest.fixture
async def bot(start_bot):
    clock = FakeClock(NOW)
    harness = await start_bot(app_options={"reminder_clock": clock})
    harness.clock = clock
    return harness
