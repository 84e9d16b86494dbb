"""Albums: Telegram sends each photo of an album as a message of its own; answer them once.

Each item is stored as it comes; the answer waits until no item came for a moment, and
then covers them all (consecutive user turns are one message to the model). In a group
only the item with the caption mentions the bot; the others of its album are taken too.
/delete_my_data drops the chat's albums still waiting (their items are deleted with it), so
none is answered from a conversation that is gone, or stored again. When the bot stops, an
album still waiting for items is answered at once, within the shutdown's grace period (an item
Telegram had not delivered yet comes to the next process, which answers it on its own); what
the grace period cuts off is answered after the restart.
"""

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from bot.conversations.snapshot import ChatThread

logger = logging.getLogger(__name__)

# Telegram delivers an album's items together; a second without one means it is complete.
ALBUM_QUIET_SECONDS = 1.0
# How long an album that addressed the bot in a group takes its other items in.
ADDRESSED_FOR_SECONDS = 60.0


class Albums:
    """The albums being collected: a timer per chat topic, and albums that addressed the bot."""

    def __init__(self) -> None:
        self._timers: dict[ChatThread, asyncio.Task[None]] = {}
        self._addressed: dict[str, float] = {}
        self.quiet = ALBUM_QUIET_SECONDS
        self._stopping = asyncio.Event()  # set at shutdown: no album waits for quiet any more
        # Every album answer not yet done (waiting for quiet or the lane, or answering).
        self._tasks: dict[asyncio.Task[None], ChatThread] = {}

    def mark_addressed(self, album_id: str) -> None:
        """Remember that an album's item addressed the bot, so its other items count too."""
        now = time.monotonic()
        self._addressed = {k: t for k, t in self._addressed.items() if t > now}
        self._addressed[album_id] = now + ADDRESSED_FOR_SECONDS

    def was_addressed(self, album_id: str | None) -> bool:
        """Tell whether an item of this album addressed the bot a moment ago."""
        return album_id is not None and self._addressed.get(album_id, 0.0) > time.monotonic()

    def answer_later(self, place: ChatThread, answer: Callable[[], Awaitable[None]]) -> None:
        """Call answer once no album item came to the topic for a moment."""
        if (waiting := self._timers.pop(place, None)) is not None:
            waiting.cancel()
        task = asyncio.create_task(self._answer_when_quiet(place, answer), name=f"album {place}")
        task.add_done_callback(_log_failure)
        task.add_done_callback(self._forget)
        self._timers[place] = task
        self._tasks[task] = place

    def _forget(self, task: asyncio.Task[None]) -> None:
        """Let a finished album answer go."""
        self._tasks.pop(task, None)

    async def _answer_when_quiet(
        self, place: ChatThread, answer: Callable[[], Awaitable[None]]
    ) -> None:
        """Wait for quiet (or a shutdown), then answer."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), self.quiet)
        # From here on a new item waits for this answer rather than cancel it.
        if self._timers.get(place) is asyncio.current_task():
            del self._timers[place]
        await answer()

    def pending(self, chat_id: int) -> bool:
        """Tell whether an album of the chat waits for its answer."""
        return any(place.chat_id == chat_id for place in self._timers)

    def drop(self, chat_id: int) -> int:
        """Drop the chat's albums not yet answered, their items deleted; return how many.

        Called in the chat's lane, so none of them is answering: each waits for quiet or
        for the lane, and a cancelled wait for the lane never starts its answer.
        """
        dropped = [task for task, place in self._tasks.items() if place.chat_id == chat_id]
        for task in dropped:
            task.cancel()
            self._tasks.pop(task, None)
        self._timers = {p: t for p, t in self._timers.items() if p.chat_id != chat_id}
        return len(dropped)

    def answer_now(self) -> set[asyncio.Task[None]]:
        """At shutdown: answer every album now, and any later one at once; return their tasks."""
        self._stopping.set()
        return set(self._tasks)

    def cancel(self) -> None:
        """Stop what is left at the end of a shutdown; the stored items wait for the restart."""
        for task in list(self._tasks):
            task.cancel()
        self._timers.clear()


def _log_failure(task: asyncio.Task[None]) -> None:
    """Log an album answer that failed: no handler's error path sees it."""
    if not task.cancelled() and task.exception() is not None:
        logger.error("answering an album failed", exc_info=task.exception())
