"""The Mini App under test: its real server over HTTP on the test database, and signed initData.

initData is signed here as Telegram documents it, written out again rather than imported from
bot.webapp.initdata, so a mistake there cannot agree with itself.
"""

import hashlib
import hmac
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

import aiohttp
from aiohttp import web
from aiohttp.test_utils import TestServer

from bot.conversations.blocks import Content, text_block
from bot.conversations.snapshot import ChatThread
from bot.conversations.sources import ReplySources
from bot.conversations.store import ConversationStore
from bot.reminders.records import Place
from bot.reminders.store import ReminderStore
from bot.reminders.timing import Schedule
from bot.reminders.tools import ReminderTools
from bot.webapp.access import Access, RateLimit
from bot.webapp.events import Event
from bot.webapp.initdata import secret_key
from bot.webapp.server import mini_app, mount
from bot.webapp.services import AppServices
from memory.batches.store import BatchStore
from memory.batches.values import BatchKind, BatchState
from memory.categories import Category
from memory.control import MemoryControl
from memory.models import utcnow
from memory.plan_lines import ImportLine
from memory.store import MemoryStore
from memory.switch import MemorySwitch
from memory.undo import UndoLog

TOKEN = "123456:TEST-token-for-the-mini-app"
OWNER = 111
OTHER = 222  # allowed too: another owner whose data OWNER must never reach
STRANGER = 333  # signed by Telegram, not in ALLOWED_USER_IDS
PATH = "/app"
ALLOWED = frozenset({OWNER, OTHER})


def init_data(user_id: int, token: str = TOKEN, auth_date: int | None = None, **extra: str) -> str:
    """Return initData as Telegram signs it for a user of the bot with this token."""
    fields = {
        "query_id": "AAHdF6IQAAAAAN0XohDhrOrc",
        "user": json.dumps({"id": user_id, "first_name": "Alice"}, separators=(",", ":")),
        "auth_date": str(int(time.time()) if auth_date is None else auth_date),
        **extra,
    }
    check = "\n".join(f"{key}={fields[key]}" for key in sorted(fields))
    key = hmac.new(b"WebAppData", token.encode(), hashlib.sha256).digest()
    fields["hash"] = hmac.new(key, check.encode(), hashlib.sha256).hexdigest()
    return urlencode(fields)


def auth(user_id: int = OWNER, **kwargs) -> dict[str, str]:
    """Return the header that signs a request in as the user."""
    return {"Authorization": "tma " + init_data(user_id, **kwargs)}


@dataclass
class Recorder:
    """Records what the app asked the chat to announce."""

    told: list[tuple[int, Event]] = field(default_factory=list)

    async def tell(self, owner_id: int, event: Event) -> None:
        self.told.append((owner_id, event))


@dataclass
class Clock:
    """A monotonic clock the test moves."""

    now: float = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass
class App:
    """A running app: its URL, the stores behind it, what it announced, its rate clock."""

    url: str
    store: MemoryStore
    batches: BatchStore
    reminders: ReminderStore
    told: Recorder
    clock: Clock
    session: aiohttp.ClientSession

    async def call(self, method: str, path: str, user: int | None = OWNER, **kwargs):
        """Call the API as a user (None: unsigned); return (status, JSON or text)."""
        unsigned = {} if user is None else auth(user)
        headers = kwargs.pop("headers") if "headers" in kwargs else unsigned
        async with self.session.request(
            method, f"{self.url}/api/{path}", headers=headers, **kwargs
        ) as response:
            kind = response.content_type
            body = await (response.json() if kind == "application/json" else response.text())
            return response.status, body


@asynccontextmanager
async def running_app(
    sessionmaker, per_user: int = 300, refused: int = 20, allowed: frozenset[int] = ALLOWED
) -> AsyncIterator[App]:
    """Serve the app on the test database at a loopback port; yield it."""
    store, told, clock = MemoryStore(sessionmaker), Recorder(), Clock()

    async def nothing(owner_id: int) -> None:
        return None

    control = MemoryControl(store, MemorySwitch(sessionmaker), UndoLog(sessionmaker), nothing)
    batches, reminders = BatchStore(sessionmaker), ReminderStore(sessionmaker)
    services = AppServices(
        control, batches, ReminderTools(reminders, 50), "UTC", told, ReplySources(sessionmaker)
    )
    access = Access(
        secret_key(TOKEN),
        allowed,
        utcnow,
        RateLimit(per_user, 60, clock),
        RateLimit(refused, 60, clock),
    )
    root = web.Application()
    mount(root, PATH, mini_app(services, access))
    server = TestServer(root, host="127.0.0.1")
    await server.start_server()
    try:
        async with aiohttp.ClientSession() as session:
            url = str(server.make_url(PATH))
            yield App(url, store, batches, reminders, told, clock, session)
    finally:
        await server.close()


async def add_reminder(reminders: ReminderStore, owner: int, text: str, rule: str | None = None):
    """Store a reminder of owner's, first due tomorrow at nine."""
    start = datetime.now().replace(hour=9, minute=0, second=0, microsecond=0)
    schedule = Schedule(ZoneInfo("UTC"), start + timedelta(days=1), rule=rule)
    return await reminders.create(Place(owner, owner), text, schedule, check_in=False, limit=50)


async def applied_import(batches: BatchStore, owner: int, *contents: str) -> int:
    """Apply an import of the contents for owner; return its batch's id."""
    lines = [
        ImportLine(action="add", category=Category.CONTEXT, content=c, reason="from a file")
        for c in contents
    ]
    batch_id = await batches.record(owner, BatchKind.IMPORT, BatchState.PROPOSED, lines)
    await batches.apply(owner, batch_id)
    return batch_id


async def cited_reply(store: MemoryStore, owner: int, reply: str, *memory_ids: str) -> int:
    """Hold an exchange in owner's chat whose reply drew on the memories, as the bot records it."""
    conversations = ConversationStore(store.sessionmaker, timedelta(hours=1))
    asked: Content = [text_block("[Monday, 06 January 2025, 09:00 UTC]\nWhat do you know?")]
    snapshot = await conversations.store_user_message(ChatThread(owner), owner, asked)
    turn = await conversations.append(snapshot.conversation, "assistant", [text_block(reply)])
    await ReplySources(store.sessionmaker).record(turn.id, owner, memory_ids)
    return turn.id
