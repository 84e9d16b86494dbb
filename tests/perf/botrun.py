"""Run the real bot for a benchmark: its databases, its Application variants, its pacing."""

import asyncio
import contextlib
import os
import secrets
import sqlite3
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import asyncpg
from sqlalchemy.engine import make_url
from telegram.ext import Application

from bot.app import (
    MAX_CONCURRENT_UPDATES,
    RATE_LIMIT_RETRIES,
    application_builder,
    build_application,
    equip,
)
from bot.migrations import upgrade_database_async
from bot.settings import Settings
from bot.telegram.runtime.processing import PerChatUpdateProcessor
from bot.telegram.runtime.rate_limit import ReplyFirstRateLimiter
from tests.builders import sqlite_url
from tests.harness import BotHarness
from tests.perf.fakes import TimedAnthropic, TimedTelegram


def build_variant(settings: Settings, *, concurrent: bool, rate_limited: bool) -> Application:
    """Build the Application as bot.app.build_application does, with concurrency or limiter off."""
    # Off is one update at a time; still the bot's processor, which holds the chats' leases.
    builder = application_builder(settings).concurrent_updates(
        PerChatUpdateProcessor(MAX_CONCURRENT_UPDATES if concurrent else 1)
    )
    if rate_limited:
        builder = builder.rate_limiter(ReplyFirstRateLimiter(max_retries=RATE_LIMIT_RETRIES))
    return equip(builder.build(), settings)


class PerfBot(BotHarness):
    """BotHarness that can run an Application variant and wait for quiet precisely."""

    # The timed fakes (a remote benchmark passes endpoints and uses only settle()).
    tg: TimedTelegram
    model: TimedAnthropic

    def __init__(
        self,
        *args,
        concurrent: bool = True,
        rate_limited: bool = True,
        factory: Callable[..., Application] | None = None,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.concurrent = concurrent
        self.rate_limited = rate_limited
        self.factory = factory

    def build(self) -> Application:
        """Build the Application as shipped, unless a variant was asked for."""
        if self.factory is not None:
            return self.factory(
                self.settings, concurrent=self.concurrent, rate_limited=self.rate_limited
            )
        if self.concurrent and self.rate_limited:
            return build_application(self.settings)
        return build_variant(
            self.settings, concurrent=self.concurrent, rate_limited=self.rate_limited
        )

    async def settle(self, timeout: float = 30.0) -> None:  # noqa: ASYNC109
        """Wait until no update is queued or being handled."""
        app = self.running_app
        async with asyncio.timeout(timeout):
            # PTB marks each queued update done when its handler returned.
            await app.update_queue.join()
            if isinstance(app.update_processor, PerChatUpdateProcessor):
                await app.update_processor.wait_idle()  # turns no update started, too

    async def exchange(self, chat_id: int, text: str, timeout: float = 30.0) -> int:  # noqa: ASYNC109
        """Send one message, wait for the bot's reply and for quiet; return the update id."""
        before = len(self.tg.sends_to(chat_id))
        update = self.tg.push_message(chat_id, text)
        await self.tg.wait_for_sends([chat_id], before + 1, timeout)
        await self.settle(timeout)
        return update["update_id"]


class Pacer:
    """Space actions at least `interval` seconds apart, start to start."""

    def __init__(self, interval: float):
        self.interval = interval
        self._last = -float("inf")

    async def wait(self) -> None:
        """Sleep until the next action may start."""
        delay = self._last + self.interval - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        self._last = time.perf_counter()


async def postgres_available(url: str) -> bool:
    """Tell whether the Postgres server at url accepts a connection."""
    try:
        connection = await asyncpg.connect(url, timeout=3)
    except (OSError, asyncpg.PostgresError, TimeoutError):
        return False
    await connection.close()
    return True


async def _sqlite_template(workdir: Path) -> Path:
    """Return a SQLite file migrated to head, made once per folder (a migration costs ~0.2 s)."""
    template = workdir / "perf-template.db"
    if not template.exists():
        # Migrated and copied under names of their own, then renamed: two may ask at once.
        scratch = workdir / f"perf-template-{secrets.token_hex(4)}.db"
        await upgrade_database_async(sqlite_url(scratch))
        copied = scratch.with_suffix(".copy")
        await asyncio.to_thread(_copy, scratch, copied)
        os.replace(copied, template)
        scratch.unlink()
    return template


def _copy(source: Path, target: Path) -> None:
    """Copy a SQLite database with the online backup API (consistent, WAL or not)."""
    with contextlib.closing(sqlite3.connect(source)) as original:
        with contextlib.closing(sqlite3.connect(target)) as copy:
            original.backup(copy)


@contextlib.asynccontextmanager
async def database(backend: str, workdir: Path, postgres_url: str) -> AsyncIterator[str]:
    """Yield the URL of a fresh migrated database; a Postgres one is dropped afterwards."""
    if backend == "sqlite":
        path = workdir / f"perf-{secrets.token_hex(4)}.db"
        await asyncio.to_thread(_copy, await _sqlite_template(workdir), path)
        yield sqlite_url(path)
        return
    if backend != "postgres":
        raise ValueError(f"unknown backend {backend!r}")
    name = f"membot_perf_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(postgres_url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    try:
        url = (
            make_url(postgres_url)
            .set(drivername="postgresql+asyncpg", database=name)
            .render_as_string(hide_password=False)
        )
        await upgrade_database_async(url)
        yield url
    finally:
        admin = await asyncpg.connect(postgres_url)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()
