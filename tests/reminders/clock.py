"""A clock the tests move, for the due loop: no test waits on real time."""

import asyncio
from datetime import datetime, timedelta


class FakeClock:
    """A clock the test moves; waits end when it passes their moment or they are woken."""

    def __init__(self, now: datetime):
        self._now = now
        self._moved = asyncio.Event()
        # Set while someone waits on this clock: the due loop is done with its pass.
        self._waiting = asyncio.Event()

    def now(self) -> datetime:
        return self._now

    def advance(self, delta: timedelta) -> None:
        self._now += delta
        self._waiting.clear()
        self._moved.set()
        self._moved = asyncio.Event()

    async def wait(self, until: datetime, wake: asyncio.Event) -> None:
        while self._now < until and not wake.is_set():
            self._waiting.set()
            moved, woken = (
                asyncio.ensure_future(self._moved.wait()),
                asyncio.ensure_future(wake.wait()),
            )
            await asyncio.wait({moved, woken}, return_when=asyncio.FIRST_COMPLETED)
            moved.cancel(), woken.cancel()

    async def settled(self) -> None:
        """Wait until the due loop has finished its pass and sleeps again."""
        async with asyncio.timeout(5):
            await self._waiting.wait()
