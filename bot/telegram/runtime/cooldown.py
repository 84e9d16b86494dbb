"""Do something at most once per key in a window of time, remembering a bounded number of keys."""

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable

Clock = Callable[[], float]


class Cooldown:
    """Let each key through once per window; past max_keys cooling down, let none through."""

    def __init__(self, window_seconds: float, max_keys: int, clock: Clock = time.monotonic) -> None:
        self._window = window_seconds
        self._max_keys = max_keys
        self._clock = clock
        # Key -> when it last went through, oldest first: a clock that never goes back
        # appends in time order, so expired keys are always at the front.
        self._since: OrderedDict[Hashable, float] = OrderedDict()

    def __len__(self) -> int:
        return len(self._since)

    def take(self, key: Hashable) -> bool:
        """Return True, and start key's cooldown, unless key is cooling down or too many are."""
        now = self._clock()
        self._expire(now)
        if key in self._since or len(self._since) >= self._max_keys:
            # Full means a flood from thousands of chats: staying silent keeps "at most once".
            return False
        self._since[key] = now
        return True

    def _expire(self, now: float) -> None:
        """Forget the keys whose window has passed."""
        while self._since:
            key, since = next(iter(self._since.items()))
            if now - since < self._window:
                return
            del self._since[key]
