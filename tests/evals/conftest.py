"""Fixtures: the fake Messages API, and run options and an API key pointing at it."""

import pytest

from evals.prices import prices_for
from evals.runner import RunOptions
from tests.fakes.anthropic_server import FakeAnthropic

MODEL = "claude-sonnet-test"


@pytest.fixture
async def fake():
    """Yield the fake Messages API, answering "OK" until a test scripts it."""
    async with FakeAnthropic() as model:
        yield model


@pytest.fixture
def options(fake, sqlite_template) -> RunOptions:
    """Return run options against the fake: one trial, no judge, Sonnet's assumed prices.

    Every run copies the session's migrated database rather than migrating one of its own.
    """
    return RunOptions(
        model=MODEL,
        trials=1,
        api_key=fake.api_key,
        prices=prices_for(MODEL),
        base_url=fake.base_url,
        judge=False,
        template=sqlite_template,
    )


@pytest.fixture
def api_key_of(monkeypatch, fake):
    """Set ANTHROPIC_API_KEY to the fake's key, as a maintainer sets the real one."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake.api_key)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    return fake.api_key
