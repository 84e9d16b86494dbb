"""Process different chats concurrently and each chat's updates in arrival order."""

import asyncio
import logging
from collections.abc import Awaitable
from typing import Any

from telegram import Update
from telegram.ext import BaseUpdateProcessor

logger = logging.getLogger(__name__)


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
        self._running: set[asyncio.Task] = set()

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        """Wait for the chat's earlier updates, then process this one."""
        key = chat_key(update)
        if key is None:
            await self._tracked(coroutine)
        else:
            await self.run_exclusive(key, coroutine)

    async def run_exclusive(self, key: int, coroutine: Awaitable[Any]) -> Any:
        """Run coroutine after everything queued before it for the same chat."""
        return await self._tracked(self._in_chat_order(key, coroutine))

    async def _in_chat_order(self, key: int, coroutine: Awaitable[Any]) -> Any:
        """Hold the chat's lock while coroutine runs."""
        lock = self._locks.setdefault(key, asyncio.Lock())
        self._holders[key] = self._holders.get(key, 0) + 1
        try:
            # asyncio.Lock wakes waiters first-in, first-out, which keeps arrival order.
            async with lock:
                return await coroutine
        finally:
            self._holders[key] -= 1
            if not self._holders[key]:
                del self._holders[key]
                del self._locks[key]

    async def _tracked(self, coroutine: Awaitable[Any]) -> Any:
        """Await coroutine, remembering its task so a shutdown can wait for it."""
        task = asyncio.current_task()
        if task is not None:
            self._running.add(task)
        try:
            return await coroutine
        finally:
            self._running.discard(task)

    async def drain(self, grace_seconds: float) -> None:
        """Wait up to grace_seconds for running and queued turns; cancel the rest."""
        if self._running:
            await asyncio.wait(set(self._running), timeout=grace_seconds)
        late = set(self._running)
        for task in late:
            task.cancel()
        if late:
            logger.warning("cancelled %d turn(s) still running after the grace period", len(late))
            await asyncio.wait(late, timeout=5)

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to release."""
