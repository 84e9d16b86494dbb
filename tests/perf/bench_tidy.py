"""Figure 14: a tidy pass's tokens and time at 100 and 1,000 memories, against the fake model.

The time is our side's: reading the memories, finding duplicates, building the request within
TIDY_TOKEN_CAP, validating the plan and storing it (the fake answers at once, with a plan that
archives nothing). The tokens are the fake's count of the request and answer, the same
estimate its usage reports; the target is the cap.
"""

import time
from datetime import UTC
from pathlib import Path

from anthropic import AsyncAnthropic

from bot.upkeep.tidy import PassResult, TidyService
from bot.upkeep.tidy_request import PLAN_TOOL
from memory.batches.store import BatchStore
from memory.categories import Category
from memory.db import create_engine, create_sessionmaker
from memory.models import utcnow
from memory.store import MemoryStore
from tests.fakes.anthropic_server import FakeAnthropic, tool_use
from tests.perf.botrun import database, postgres_available
from tests.perf.common import Config, Row, command, ms
from tests.perf.seeding import seed_memories

OWNER = 111
TOKEN_CAP = 60_000  # TIDY_TOKEN_CAP's default
PASSES = 3


async def _passes(url: str, model: FakeAnthropic) -> tuple[list[float], list[int], int, int]:
    """Run PASSES passes (a memory changes between them); return times, tokens, and how many
    memories the first pass sent and how many plan lines it had."""
    engine = create_engine(url)
    client = AsyncAnthropic(api_key=model.api_key, base_url=model.base_url, max_retries=0)
    try:
        sessionmaker = create_sessionmaker(engine)
        store = MemoryStore(sessionmaker, 2000, 10**9)
        tidy = TidyService(client, "claude-test", store, BatchStore(sessionmaker), TOKEN_CAP)
        times, tokens, lines = [], [], []
        for n in range(PASSES):
            model.script(tool_use(PLAN_TOOL, {"changes": []}))
            start = time.perf_counter()
            outcome = await tidy.run(OWNER, utcnow(), UTC)
            times.append(time.perf_counter() - start)
            tokens.append(outcome.tokens)
            if outcome.result is PassResult.REJECTED:
                raise AssertionError(f"the pass was rejected: {outcome.problem}")
            lines.append(len(outcome.lines))
            await store.add(OWNER, f"The user noted thing number {n} today", Category.CONTEXT)
        covered = model.requests[0]["messages"][0]["content"].count("\n")
        return times, tokens, covered, lines[0]
    finally:
        await client.close()
        await engine.dispose()


def _row(backend: str, size: int, times: list[float], tokens: list[int], sent: str) -> Row:
    """Return the figure of one backend and size."""
    best = min(times)
    return Row(
        key="tidy",
        figure=f"14. Tidy pass, {size:,} memories: {backend}, tokens / our time",
        value=f"{max(tokens):,} tokens / {ms(best)} ({sent})",
        numbers=(float(max(tokens)), best * 1000),
        target=f"≤ {TOKEN_CAP:,} tokens",
        met=max(tokens) <= TOKEN_CAP,
        command=command("tidy", f"--backends {backend}"),
    )


async def run(config: Config, workdir: Path) -> list[Row]:
    """Seed each size on each backend and time a few passes."""
    rows: list[Row] = []
    sizes = tuple(n for n in config.memories if 0 < n <= 1000)
    for backend in config.backends:
        if backend == "postgres" and not await postgres_available(config.postgres_url):
            continue
        for size in sizes:
            async with database(backend, workdir, config.postgres_url) as url:
                await seed_memories(url, OWNER, size)
                async with FakeAnthropic() as model:
                    times, tokens, covered, lines = await _passes(url, model)
            sent = f"{covered:,} memories sent, {lines} duplicate groups merged by code"
            rows.append(_row(backend, size, times, tokens, sent))
    return rows
