"""Telegram's webhook delivery: a chat's updates one at a time, again until one is acknowledged.

Like the Bot API server, it sends an update of a chat only after the chat's previous one was
answered with a 2xx (updates of different chats go out concurrently), and sends an update
again when its request fails (a refused or dropped connection, a 5xx) after a short pause.
`redeliver` picks updates whose answer Telegram is taken to have given up waiting for: each is
posted a second time while its first request is still open, so behind a router that spreads
requests (tests/scale.py) the copy reaches another process. Every request is recorded.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp

# Pause before posting an update again after a failed request (Telegram waits longer).
RETRY_PAUSE = 0.05


@dataclass
class Posted:
    """One POST of an update: its id, chat, status (None: the connection failed) and when."""

    update_id: int
    chat_id: int
    status: int | None
    at: float
    copy: bool = False  # a redelivery sent while the first request was still open


@dataclass
class WebhookDelivery:
    """Post users' messages to one webhook URL as Telegram does; record every request."""

    url: str
    secret_token: str
    redeliver: float = 0.0  # the share of updates posted a second time (given up on)
    patience: float = 0.02  # how long Telegram waits before giving up on such an update
    posted: list[Posted] = field(default_factory=list)
    # When each message was first posted, by (chat, text): latency starts there.
    sent_at: dict[tuple[int, str], float] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _message_ids: dict[int, itertools.count[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None
        self._copies: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> WebhookDelivery:
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None))
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._copies:
            await asyncio.wait(self._copies, timeout=30)
        assert self._session is not None
        await self._session.close()

    def update(self, chat_id: int, text: str) -> dict[str, Any]:
        """Return an update with a private text message from the chat's user."""
        ids = self._message_ids.setdefault(chat_id, itertools.count(1))
        user = {"id": chat_id, "is_bot": False, "first_name": f"User {chat_id}"}
        message = {
            "message_id": next(ids),
            "from": user,
            "chat": {"id": chat_id, "type": "private", "first_name": user["first_name"]},
            "date": int(time.time()),
            "text": text,
        }
        return {"update_id": next(self._ids), "message": message}

    async def send_chat(self, chat_id: int, texts: list[str]) -> None:
        """Deliver a chat's messages in order, each once it is acknowledged, as Telegram does."""
        for text in texts:
            update = self.update(chat_id, text)
            self.sent_at[(chat_id, text)] = time.perf_counter()
            if self._given_up(update):
                first = asyncio.create_task(self._until_acknowledged(update, copy=False))
                # Telegram gave up waiting for the first answer: the copy is what it awaits.
                self._copies.add(first)
                first.add_done_callback(self._copies.discard)
                await asyncio.sleep(self.patience)
                await self._until_acknowledged(update, copy=True)
            else:
                await self._until_acknowledged(update, copy=False)

    def _given_up(self, update: dict[str, Any]) -> bool:
        """Tell whether Telegram gives up waiting for this update: the same for the same text."""
        digest = hashlib.sha256(update["message"]["text"].encode()).digest()
        return int.from_bytes(digest[:4]) / 2**32 < self.redeliver

    async def _until_acknowledged(self, update: dict[str, Any], *, copy: bool) -> None:
        """Post the update until a request is answered with a 2xx."""
        while True:
            status = await self._post(update, copy)
            if status is not None and 200 <= status < 300:
                return
            assert status is None or status >= 500, f"webhook refused {update}: {status}"
            await asyncio.sleep(RETRY_PAUSE)

    async def _post(self, update: dict[str, Any], copy: bool) -> int | None:
        """Post once; return the status, or None when the connection failed."""
        assert self._session is not None, "use as an async context manager"
        headers = {"X-Telegram-Bot-Api-Secret-Token": self.secret_token}
        try:
            async with self._session.post(self.url, json=update, headers=headers) as response:
                status: int | None = response.status
        except aiohttp.ClientError:
            status = None
        chat_id = update["message"]["chat"]["id"]
        self.posted.append(Posted(update["update_id"], chat_id, status, time.perf_counter(), copy))
        return status
