"""Webhook answers that wait until their update is safe: stored, or handled.

Telegram sends a chat's next update only once the last one is acknowledged (HTTP 200), and
sends an update again, perhaps to another process behind the same address, when it is not.
PTB acknowledges as soon as an update is queued in memory, so a process killed with a backlog
would lose it, and a chat's next message could reach another process before this one took
the chat's turn. Here the web server's put into the update queue returns only once the
update's handler stored its message (the chat path says so) or finished: a chat's messages
reach the processes one after another in order, and nothing acknowledged is only in memory.
"""

import asyncio

from telegram import Update


class NotHandled(Exception):
    """An update's handling failed before it was stored: Telegram is to send it again."""


class AckQueue(asyncio.Queue[object]):
    """The update queue; with waiting on, a put returns once its update is stored or handled."""

    def __init__(self) -> None:
        super().__init__()
        # On in webhook mode only: a polling loop's puts must not wait (it fetches in batches).
        self.waiting = False
        self._pending: dict[int, asyncio.Future[None]] = {}

    async def put(self, item: object) -> None:
        """Queue an update; with waiting on, return once acknowledge(update) was called."""
        # Not PTB's own items, such as the signal that stops its fetcher.
        if not self.waiting or not isinstance(item, Update):
            await super().put(item)
            return
        done = asyncio.get_running_loop().create_future()
        self._pending[id(item)] = done
        try:
            await super().put(item)
            await done
        finally:
            # Also when Telegram hung up first: it sends the update again, and that is kept.
            self._pending.pop(id(item), None)

    def acknowledge(self, update: object) -> None:
        """Let Telegram have its answer for this update: it is stored, or handled."""
        done = self._pending.pop(id(update), None)
        if done is not None and not done.done():
            done.set_result(None)

    def refuse(self, update: object) -> None:
        """Answer Telegram with an error for this update, so it sends the update again."""
        done = self._pending.pop(id(update), None)
        if done is not None and not done.done():
            done.set_exception(NotHandled(f"update {getattr(update, 'update_id', '?')}"))

    @property
    def unacknowledged(self) -> int:
        """Return how many webhook requests wait for their update."""
        return len(self._pending)


def acknowledge(queue: object, update: object) -> None:
    """Acknowledge update if queue is an AckQueue (the Application's update queue)."""
    if isinstance(queue, AckQueue):
        queue.acknowledge(update)
