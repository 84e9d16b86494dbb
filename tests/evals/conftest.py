"""Fixtures: the fake Messages API, run options pointing at it, a migrated template database."""

import pytest

from evals.prices import prices_for
from evals.runner import RunOptions
from evals.sandbox import Databases
from tests import pg
from tests.fakes.anthropic_server import FakeAnthropic

MODEL = "claude-sonnet-test"


@pytest.fixture(scope="session")
def eval_databases(tmp_path_factory) -> Databases:
    """Return a template database migrated once, that trials copy."""
    databases = Databases(tmp_path_factory.mktemp("evals"))
    pg.run(databases.prepare)
    return databases


@pytest.fixture
async def fake():
    """Yield the fake Messages API, answering "OK" until a test scripts it."""
    async with FakeAnthropic() as model:
        yield model


@pytest.fixture
def options(fake) -> RunOptions:
    """Return run options against the fake: one trial, no judge, Sonnet's assumed prices."""
    return RunOptions(
        model=MODEL,
        trials=1,
        api_key=fake.api_key,
        prices=prices_for(MODEL),
        base_url=fake.base_url,
        judge=False,
    )


@pytest.fixture
def api_key_of(monkeypatch, fake):
    """Set ANTHROPIC_API_KEY to the fake's key, as a maintainer sets the real one."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake.api_key)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    return fake.api_key
