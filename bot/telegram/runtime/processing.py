"""Process different chats concurrently and each chat's updates in arrival order."""

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, TypeVar

from telegram import Update
from telegram.ext import Application, BaseUpdateProcessor

T = TypeVar("T")
logger = logging.getLogger(__name__)


def chat_key(update: object) -> int | None:
    """Return the chat an update belongs to, or None for updates without one."""
    if isinstance(update, Update) and update.effective_chat is not None:
        return update.effective_chat.id
    return None


class ChatGate(Protocol):
    """What a chat's turn holds besides this process's lock: its lease in the database."""

    def hold(self, chat_id: int) -> AbstractAsyncContextManager[None]:
        """Hold the chat's turn for the length of the block."""
        ...


class PerChatUpdateProcessor(BaseUpdateProcessor):
    """Run updates concurrently, but one at a time per chat, in the order they came.

    An update waits for its chat's turn first and only then for one of the
    max_concurrent_updates slots, so a chat holds at most one slot however many of its
    updates are queued: no chat's backlog can hold back another chat. Updates outside_lane
    picks run at once, in a slot, without waiting for their chat.
    """

    def __init__(
        self,
        max_concurrent_updates: int,
        outside_lane: Callable[[object], bool] = lambda update: False,
    ):
        super().__init__(max_concurrent_updates)
        self._outside_lane = outside_lane
        self._locks: dict[int, asyncio.Lock] = {}
        self._holders: dict[int, int] = {}
        self._running: set[asyncio.Task[Any]] = set()
        self._idle = asyncio.Event()  # set while nothing is queued or running
        self._idle.set()
        # Set at start-up: other processes' turns of a chat come before this one's.
        self.gate: ChatGate | None = None
        # Set at start-up: updates that wait for this process's turns of their chat but make
        # no turn themselves (commands that need no model), so they never wait at the gate.
        self.ungated: Callable[[object], bool] = lambda update: False
        # Set at start-up: told when an update's handling ended (a webhook's answer waits).
        self.handled: Callable[[object], None] = lambda update: None
        self.failed: Callable[[object], None] = lambda update: None

    async def process_update(  # type: ignore[misc]  # final in PTB: see the comment below
        self, update: object, coroutine: Awaitable[Any]
    ) -> None:
        """Wait for the chat's turn, then for a slot, then process the update."""
        # PTB marks this final: its version takes a slot first and then calls
        # do_process_update, where a queued update would hold its slot while it waits for its
        # chat, and one chat's backlog could take every slot. Only the order differs here.
        key = None if self._outside_lane(update) else chat_key(update)
        try:
            await self._tracked(self._in_turn(key, coroutine, gated=not self.ungated(update)))
        except BaseException:
            # Its chat's turn could not be had (the database failed): sent again, not lost.
            self.failed(update)
            raise
        self.handled(update)

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        """Await the update's coroutine; unused, as process_update above does the work."""
        await coroutine

    async def run_exclusive(self, key: int | None, coroutine: Awaitable[T]) -> T:
        """Run coroutine after everything queued before it for the same chat, in a slot."""
        return await self._tracked(self._in_turn(key, coroutine))

    @property
    def unfinished(self) -> int:
        """Return how many updates and turns are queued or running."""
        return len(self._running)

    async def wait_idle(self) -> None:
        """Wait until no update or turn is queued or running."""
        await self._idle.wait()

    @property
    def running(self) -> set[asyncio.Task[Any]]:
        """Return the tasks of the updates and turns queued or running."""
        return set(self._running)

    def queued(self, key: int) -> bool:
        """Tell whether more of the chat's updates wait behind the one in its turn."""
        return self._holders.get(key, 0) > 1

    @property
    def active_chats(self) -> int:
        """Return how many chats have updates queued or running."""
        return len(self._locks)

    async def _in_turn(self, key: int | None, coroutine: Awaitable[T], gated: bool = True) -> T:
        """Await coroutine in the chat's turn and a slot, or close it if it never ran."""
        try:
            async with self._chat_turn(key), self._gated(key if gated else None), self._semaphore:
                return await coroutine
        finally:
            # Cancelled while waiting (a shutdown past its grace period): never started.
            if asyncio.iscoroutine(coroutine):
                coroutine.close()

    def _gated(self, key: int | None) -> AbstractAsyncContextManager[None]:
        """Hold the chat's turn through the gate, if there is one."""
        if key is None or self.gate is None:
            return contextlib.nullcontext()
        return self.gate.hold(key)

    @contextlib.asynccontextmanager
    async def _chat_turn(self, key: int | None) -> AsyncIterator[None]:
        """Hold the chat's lock; forget the lock when no update of the chat is left."""
        if key is None:
            yield
            return
        lock = self._locks.setdefault(key, asyncio.Lock())
        self._holders[key] = self._holders.get(key, 0) + 1
        try:
            # asyncio.Lock wakes waiters first-in, first-out, which keeps arrival order.
            async with lock:
                yield
        finally:
            self._holders[key] -= 1
            if not self._holders[key]:
                del self._holders[key]
                del self._locks[key]

    async def _tracked(self, coroutine: Awaitable[T]) -> T:
        """Await coroutine, remembering its task so a shutdown can wait for it."""
        task = asyncio.current_task()
        if task is not None:
            self._running.add(task)
            self._idle.clear()
        try:
            return await coroutine
        finally:
            self._running.discard(task)
            if not self._running:
                self._idle.set()

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


# Any application: the lanes are the same whatever its bot, context and data types.
AnyApplication = Application[Any, Any, Any, Any, Any, Any]


def lanes(application: AnyApplication) -> PerChatUpdateProcessor:
    """Return the application's per-chat update processor (build_application installs it)."""
    processor = application.update_processor
    if not isinstance(processor, PerChatUpdateProcessor):
        raise TypeError("the application was built without PerChatUpdateProcessor")
    return processor
