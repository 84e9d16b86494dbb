"""Run the real bot Application against the fake servers, and talk to it like a user."""

import asyncio
import json
import secrets
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from telegram.ext import Application

from bot.app import build_application
from bot.settings import Settings
from bot.telegram.native import ALLOWED_UPDATES
from bot.telegram.runtime.processing import lanes
from tests.builders import OWNER
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.telegram_server import FakeTelegram

FRIEND = 222
STRANGER = 999
# Allowed chats for load and concurrency tests.
CROWD = tuple(range(10_000, 10_100))
POLL_TIMEOUT = 1
# Longer than any test waits: a group answer in tests shows no Stop unless a test sets less.
GROUP_STOP_SECONDS = 3600.0


class BotApiEndpoint(Protocol):
    """Where a Bot API server listens and the token it expects (a fake, or a remote one)."""

    @property
    def token(self) -> str: ...
    @property
    def base_url(self) -> str: ...


class MessagesApiEndpoint(Protocol):
    """Where a Messages API server listens and the key it expects."""

    @property
    def api_key(self) -> str: ...
    @property
    def base_url(self) -> str: ...


def make_settings(
    tg: BotApiEndpoint, model: MessagesApiEndpoint, database_url: str, **overrides: Any
) -> Settings:
    """Return settings pointing at the fakes, ignoring any .env or environment."""
    values: dict[str, Any] = {
        "telegram_bot_token": tg.token,
        "anthropic_api_key": model.api_key,
        "allowed_user_ids": frozenset({OWNER, FRIEND, *CROWD}),
        "database_url": database_url,
        "anthropic_base_url": model.base_url,
        "telegram_api_base_url": tg.base_url,
        # Never ./data of the checkout; created only when a file is cached.
        "file_cache_dir": Path(tempfile.gettempdir()) / f"membot-files-{secrets.token_hex(4)}",
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)


class BotHarness:
    """The bot as a running Application, plus ways to chat with it and wait for answers."""

    def __init__(
        self,
        tg: FakeTelegram,
        model: FakeAnthropic,
        settings: Settings,
        app_options: dict[str, Any] | None = None,
    ):
        self.tg = tg
        self.model = model
        self.settings = settings
        self.app_options = app_options or {}  # keyword arguments of build_application
        self.app: Application | None = None

    def build(self) -> Application:
        """Build the Application to run; subclasses may build a variant."""
        return build_application(self.settings, **self.app_options)

    async def start(self) -> "BotHarness":
        """Build and start the Application, long-polling the fake Bot API."""
        self.app = app = self.build()
        assert app.updater is not None  # build_application keeps PTB's Updater
        # A group's Stop shows only where a test asks for it (test_group_stop.py): a slow answer
        # on a loaded machine must not add a "Working on it…" to another test's group.
        if services := getattr(app.bot_data, "services", None):  # not a reference's bare PTB
            services.drafts.groups.delay = GROUP_STOP_SECONDS
        await app.initialize()
        if app.post_init:
            await app.post_init(app)
        await app.start()
        await app.updater.start_polling(
            poll_interval=0, timeout=POLL_TIMEOUT, allowed_updates=ALLOWED_UPDATES
        )
        return self

    async def stop(self) -> None:
        """Stop polling and shut down like run_polling does on a signal."""
        if self.app is None:
            return
        app, self.app = self.app, None
        if app.updater is not None and app.updater.running:
            await app.updater.stop()
        if app.running:
            await app.stop()
        await app.shutdown()
        if app.post_shutdown:
            await app.post_shutdown(app)

    async def restart(self) -> None:
        """Stop the Application and start a fresh one on the same database."""
        await self.stop()
        await self.start()

    @property
    def running_app(self) -> Application:
        """Return the running Application."""
        assert self.app is not None, "start() first"
        return self.app

    @property
    def services(self):
        """Return the running Application's services."""
        return self.app.bot_data.services

    @property
    def store(self):
        """Return the running bot's memory store, to arrange and inspect memories directly."""
        return self.services.memories

    async def idle(self, timeout: float = 15.0) -> None:  # noqa: ASYNC109
        """Wait until every queued update has been fetched and fully handled."""
        app = self.running_app
        async with asyncio.timeout(timeout):
            # PTB puts fetched updates in its queue before it confirms them with the next poll.
            await self.tg.wait_for_fetch(timeout)
            # It marks each one done when its handler returned (after waiting for its chat).
            await app.update_queue.join()
            # And turns that no update started (an album's, a reminder's) end too.
            await lanes(app).wait_idle()

    async def say(self, chat_id: int, text: str, **kwargs: Any) -> list[str]:
        """Send a message as a user; return the texts the bot answered with (and did not delete)."""
        before = len(self.tg.sent)
        self.tg.push_message(chat_id, text, **kwargs)
        await self.idle()
        deleted = set(self.tg.deleted)
        return [
            m["result"]["text"]
            for m in self.tg.sent[before:]
            if m["chat_id"] == chat_id and (chat_id, m["result"]["message_id"]) not in deleted
        ]

    def system_block(self, request_index: int = -1) -> str:
        """Return the memory block the model was sent in a request."""
        return self.model.requests[request_index]["system"][1]["text"]


_DECODER = json.JSONDecoder()


def block_entries(block: str) -> list[tuple[str, str, str]]:
    """Return (id, subject or "", content) for every memory line of a memory block."""
    entries = []
    for line in block.splitlines():
        if not line.startswith("- [id:"):
            continue
        memory_id, rest = line[6:14], line[16:]
        first, end = _DECODER.raw_decode(rest)
        if rest[end:].startswith(": "):
            second, _ = _DECODER.raw_decode(rest, end + 2)
            entries.append((memory_id, first, second))
        else:
            entries.append((memory_id, "", first))
    return entries


def texts_of(messages: Iterable[dict[str, Any]]) -> list[str]:
    """Return the texts of sendMessage records."""
    return [m["result"]["text"] for m in messages]
