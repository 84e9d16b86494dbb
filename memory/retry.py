"""Retry a transaction that lost a race to a concurrent writer on a unique key."""

from collections.abc import Awaitable, Callable
from typing import TypeVar

from sqlalchemy import Select
from sqlalchemy.exc import IntegrityError

T = TypeVar("T")


class KeyTaken(IntegrityError):
    """A write's insert conflicted; `holder` selects the unique key it took, to see who has it."""

    def __init__(self, error: IntegrityError, holder: Select[str] | Select[int]):
        super().__init__(
            error.statement,
            error.params,
            error.orig or error,
            error.hide_parameters,
            error.connection_invalidated,
            error.code,
            error.ismulti,
        )
        self.holder = holder


async def retry_lost_races(
    attempt: Callable[[], Awaitable[T]],
    lost_race: Callable[[IntegrityError], Awaitable[bool]],
    attempts: int,
) -> T:
    """Run attempt; on a unique-key conflict that lost_race confirms, run it again."""
    for number in range(1, attempts + 1):
        try:
            return await attempt()
        except IntegrityError as error:
            # Any other integrity error is a bug or bad data: never hide it behind a retry.
            if number == attempts or not await lost_race(error):
                raise
    raise AssertionError("unreachable")
