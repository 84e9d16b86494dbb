"""Background jobs claimed once across processes: never twice, never skipped when one dies."""

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import select

from bot.conversations.job_claims import KEPT, JobClaims, JobName
from bot.conversations.models import JobClaim
from tests.conversations.test_store import Clock

TTL = timedelta(seconds=30)
DAY = "2026-11-27"


async def done() -> str:
    """Do a job's work: nothing here."""
    return "done"


def processes(sessionmaker, clock: Clock, count: int = 2) -> list[JobClaims]:
    """Return the job claims of count processes on one database and one clock."""
    return [JobClaims(sessionmaker, f"host:{n}:abcd", TTL, clock) for n in range(count)]


async def test_a_run_is_claimed_by_one_process_and_done_once(sessionmaker):
    clock = Clock()
    first, second = processes(sessionmaker, clock)
    runs: list[str] = []

    async def work() -> int:
        runs.append("ran")
        return 7

    assert await first.run_once(JobName.RETENTION, DAY, work) == 7
    assert await second.run_once(JobName.RETENTION, DAY, work) is None
    clock.now += TTL * 10  # long after its lease: done is done
    assert await second.run_once(JobName.RETENTION, DAY, work) is None
    assert await first.run_once(JobName.RETENTION, DAY, work) is None
    # Another period, and another job for the same period, are runs of their own.
    assert await second.run_once(JobName.RETENTION, "2026-11-28", work) == 7
    assert await second.run_once(JobName.NIGHTLY_TIDY, DAY, work) == 7
    assert runs == ["ran"] * 3


async def test_racing_processes_claim_a_run_once(sessionmaker):
    clock = Clock()
    claims = processes(sessionmaker, clock, count=6)
    won = await asyncio.gather(*(c.claim(JobName.RETENTION, DAY) for c in claims))
    assert sorted(won) == [False] * 5 + [True]


async def test_a_claim_left_by_a_process_that_died_is_taken_over_once_its_lease_ran_out(
    sessionmaker,
):
    clock = Clock()
    dead, alive, late = processes(sessionmaker, clock, count=3)
    assert await dead.claim(JobName.NIGHTLY_TIDY, DAY)  # then it is killed: never done
    clock.now += TTL / 2
    assert not await alive.claim(JobName.NIGHTLY_TIDY, DAY)  # its lease still runs
    clock.now += TTL
    assert await alive.claim(JobName.NIGHTLY_TIDY, DAY)
    assert not await late.claim(JobName.NIGHTLY_TIDY, DAY)
    assert not await dead.renew(JobName.NIGHTLY_TIDY, DAY)  # no longer its own
    await alive.finish(JobName.NIGHTLY_TIDY, DAY)
    clock.now += TTL * 2
    assert not await late.claim(JobName.NIGHTLY_TIDY, DAY)


async def test_a_renewed_claim_is_not_taken_over_and_a_failed_run_is_tried_again(sessionmaker):
    clock = Clock()
    first, second = processes(sessionmaker, clock)

    async def fail() -> None:
        raise RuntimeError("the database went away")

    assert await first.claim(JobName.RETENTION, DAY)
    for _ in range(4):  # two lease times, renewed every half of one
        clock.now += TTL / 2
        assert await first.renew(JobName.RETENTION, DAY)
        assert not await second.claim(JobName.RETENTION, DAY)
    await first.finish(JobName.RETENTION, DAY)

    with pytest.raises(RuntimeError):
        await first.run_once(JobName.NIGHTLY_TIDY, DAY, fail)
    assert await second.run_once(JobName.NIGHTLY_TIDY, DAY, done) is None  # its lease runs
    clock.now += TTL
    assert await second.run_once(JobName.NIGHTLY_TIDY, DAY, done) == "done"


async def test_done_claims_older_than_kept_are_pruned_as_new_ones_are_claimed(sessionmaker):
    clock = Clock()
    [claims] = processes(sessionmaker, clock, count=1)
    assert await claims.run_once(JobName.RETENTION, "old", done) == "done"
    clock.now += KEPT + timedelta(days=1)
    assert await claims.claim(JobName.RETENTION, "new")
    async with sessionmaker() as session:
        periods = (await session.scalars(select(JobClaim.period))).all()
    assert periods == ["new"]
