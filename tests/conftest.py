"""Shared fixtures: a migrated database file per test, and the memory store on it."""

import pytest

from bot.migrations import upgrade_engine
from memory.db import create_engine, create_sessionmaker
from memory.store import MemoryStore


@pytest.fixture
def database_url(tmp_path) -> str:
    """Return the URL of a fresh SQLite file for this test."""
    return f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"


@pytest.fixture
async def engine(database_url):
    """Yield an engine on a database migrated to head."""
    engine = create_engine(database_url)
    await upgrade_engine(engine)
    yield engine
    await engine.dispose()


@pytest.fixture
def sessionmaker(engine):
    """Return a session factory on the test database."""
    return create_sessionmaker(engine)


@pytest.fixture
def store(sessionmaker) -> MemoryStore:
    """Return a memory store on the test database."""
    return MemoryStore(sessionmaker)


@pytest.fixture
async def fakes():
    """Start the fake Bot API and Messages API servers on loopback."""
    from tests.fakes.anthropic_server import FakeAnthropic
    from tests.fakes.telegram_server import FakeTelegram

    async with FakeTelegram() as tg, FakeAnthropic() as model:
        yield tg, model


@pytest.fixture
async def harness(fakes, database_url):
    """Yield the running bot, on a migrated SQLite file, wired to the fakes."""
    from bot.migrations import upgrade_database_async
    from tests.harness import BotHarness, make_settings

    tg, model = fakes
    await upgrade_database_async(database_url)
    bot = BotHarness(tg, model, make_settings(tg, model, database_url))
    await bot.start()
    yield bot
    await bot.stop()
