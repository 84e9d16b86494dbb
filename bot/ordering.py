"""Process different chats concurrently and each chat's updates in arrival order."""

import asyncio
from collections.abc import Awaitable
from typing import Any

from telegram import Update
from telegram.ext import BaseUpdateProcessor


def chat_key(update: object) -> int | None:
    """Return the chat an update belongs to, or None for updates without one."""
    if isinstance(update, Update) and update.effective_chat is not None:
        return update.effective_chat.id
    return None


class PerChatUpdateProcessor(BaseUpdateProcessor):
    """Run updates concurrently, but one at a time per chat, in the order they came."""

    def __init__(self, max_concurrent_updates: int):
        super().__init__(max_concurrent_updates)
        self._locks: dict[int, asyncio.Lock] = {}
        self._holders: dict[int, int] = {}

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        """Wait for the chat's earlier updates, then process this one."""
        key = chat_key(update)
        if key is None:
            await coroutine
            return
        lock = self._locks.setdefault(key, asyncio.Lock())
        self._holders[key] = self._holders.get(key, 0) + 1
        try:
            # asyncio.Lock wakes waiters first-in, first-out, which keeps arrival order.
            async with lock:
                await coroutine
        finally:
            self._holders[key] -= 1
            if not self._holders[key]:
                del self._holders[key]
                del self._locks[key]

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to release."""
