"""Retry a transaction that lost a race to a concurrent writer on a unique key."""

from collections.abc import Awaitable, Callable
from typing import TypeVar

from sqlalchemy.exc import IntegrityError

T = TypeVar("T")


async def retry_lost_races(
    attempt: Callable[[], Awaitable[T]],
    lost_race: Callable[[], Awaitable[bool]],
    attempts: int,
) -> T:
    """Run attempt; on a unique-key conflict that lost_race confirms, run it again."""
    for number in range(1, attempts + 1):
        try:
            return await attempt()
        except IntegrityError:
            # Any other integrity error is a bug or bad data: never hide it behind a retry.
            if number == attempts or not await lost_race():
                raise
    raise AssertionError("unreachable")
