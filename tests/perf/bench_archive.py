"""Figure 9: memory without a ceiling: searches at scale, the block's size, a save's cost.

The conversation search is timed by words, and by words and meaning (hybrid) over the
turns' seeded vectors; the hybrid's question vectors are kept after the warm-up, as the
search keeps them, so the model's time is not in it: that is timed apart, with the local
model when it is installed (each of the queries embedded anew).
"""

import hashlib
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from sqlalchemy import text

from bot.conversations.search import ConversationSearch
from bot.conversations.vectors import TurnVectors
from memory.db import create_engine, create_sessionmaker
from memory.embeddings import Vector, local_embedder
from memory.store import MemoryStore
from memory.switch import MemorySwitch
from memory.tokens import count_tokens
from memory.tools import MEMORY_TOOLS, ToolContext, run_tool
from tests.perf.botrun import database, postgres_available
from tests.perf.common import Config, Row, command, ms, percentile
from tests.perf.seeding import DIMENSIONS, SEEDED_MODEL, seed_memories, seed_turns

OWNER, OTHERS = 111, tuple(range(200, 209))
SEARCH_TARGET = 0.020
SAVE_TARGET = 0.020
BUDGET = 2000
MEMORY_QUERIES = (
    "boss", "Lisbon", "Atlas", "Priya Novak", "due dates", "marathon", "dentist", "Kestrel 12",
    "vegetarian recipes", "accountant", "Japanese tutor", "billing", "Okafor", "window seats",
)  # fmt: skip
TURN_QUERIES = (
    "dentist", "heating", "landlord", "half marathon", "leftover rice", "Atlas deadline",
    "release Thursday", "calendar invites", "intervals", "three meetings",
)  # fmt: skip


async def _seed(url: str, size: int) -> None:
    """Give the owner size memories and turns, and nine others as many between them."""
    await seed_memories(url, OWNER, size)
    await seed_turns(url, OWNER, size, vectors=True)
    for n, other in enumerate(OTHERS):
        await seed_memories(url, other, size // len(OTHERS), seed=100 + n)
        await seed_turns(url, other, size // len(OTHERS), seed=100 + n, vectors=True)
    await _analyze(url)


class SeededQuestions:
    """An embedder of the seeded vectors' model: a fixed random unit vector per text."""

    name = SEEDED_MODEL

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        """Return each text's vector (the same text, the same vector)."""
        vectors = []
        for words in texts:
            seed = int.from_bytes(hashlib.sha256(words.encode()).digest()[:8], "big")
            vector = np.random.default_rng(seed).standard_normal(DIMENSIONS)
            vectors.append((vector / np.linalg.norm(vector)).tolist())
        return vectors

    async def close(self) -> None:
        """Nothing to stop."""


async def _analyze(url: str) -> None:
    """Leave Postgres as its autovacuum would a live database: vacuumed, with statistics.

    (A bulk insert's visibility map and the GIN indexes' pending lists wait for a VACUUM.)
    """
    engine = create_engine(url).execution_options(isolation_level="AUTOCOMMIT")
    try:
        if engine.dialect.name == "postgresql":
            async with engine.connect() as connection:
                await connection.execute(text("VACUUM ANALYZE"))
    finally:
        await engine.dispose()


async def _timed(calls: int, queries: tuple[str, ...], search) -> list[float]:
    """Return how long each of calls searches took, cycling through the queries."""
    times = []
    for n in range(calls):
        start = time.perf_counter()
        await search(queries[n % len(queries)])
        times.append(time.perf_counter() - start)
    return times


async def searches(config: Config, url: str) -> tuple[list[float], list[float], list[float]]:
    """Time search_memory's and search_conversations' queries (words, hybrid), after warm-up."""
    engine = create_engine(url)
    try:
        sessionmaker = create_sessionmaker(engine)
        store, past = MemoryStore(sessionmaker, BUDGET), ConversationSearch(sessionmaker)
        hybrid = ConversationSearch(sessionmaker, TurnVectors(sessionmaker, SeededQuestions()))

        async def memories(query: str):
            return await store.search(OWNER, query, 10)

        async def turns(query: str):
            return await past.search(OWNER, query, 10)

        async def fused(query: str):
            return await hybrid.search(OWNER, query, 10)

        await _timed(len(MEMORY_QUERIES), MEMORY_QUERIES, memories)
        await _timed(len(TURN_QUERIES), TURN_QUERIES, turns)
        await _timed(len(TURN_QUERIES), TURN_QUERIES, fused)
        calls = config.archive_searches
        return (
            await _timed(calls, MEMORY_QUERIES, memories),
            await _timed(calls, TURN_QUERIES, turns),
            await _timed(calls, TURN_QUERIES, fused),
        )
    finally:
        await engine.dispose()


async def question_vectors(rounds: int) -> list[float] | None:
    """Time the local model embedding each query anew, rounds times; None if not installed."""
    embedder = local_embedder()
    if embedder is None:
        return None
    await embedder.embed(["a first question loads the model"])
    times = []
    for _ in range(rounds):
        for query in TURN_QUERIES:
            start = time.perf_counter()
            await embedder.embed([query])
            times.append(time.perf_counter() - start)
    return times


async def saves(config: Config, url: str) -> tuple[list[float], list[int]]:
    """Time add_to_memory at the seeded size; return the times and the block's tokens after."""
    engine = create_engine(url)
    try:
        sessionmaker = create_sessionmaker(engine)
        store = MemoryStore(sessionmaker, BUDGET)
        ctx = ToolContext(store, MemorySwitch(sessionmaker), OWNER, memory_limit=10**9)
        times, tokens = [], []
        for n in range(config.archive_saves):
            arguments = {
                "content": f"The user noted thing number {n} today",
                "category": "context",
                "subject": f"thing {n}",
            }
            start = time.perf_counter()
            outcome = await run_tool(ctx, "add_to_memory", arguments, MEMORY_TOOLS)
            times.append(time.perf_counter() - start)
            assert not outcome.is_error, outcome.content
            tokens.append(count_tokens((await store.block(OWNER)).text))
        return times, tokens
    finally:
        await engine.dispose()


def _p50_p99(times: list[float]) -> str:
    """Describe times as p50 / p99."""
    return f"{ms(percentile(times, 50))} / {ms(percentile(times, 99))}"


def _search_rows(
    backend: str, size: int, memory: list[float], turns: list[float], fused: list[float]
) -> list[Row]:
    """Return the search rows of one backend and size."""
    rows = []
    largest = size >= 100_000
    for what, times in (
        ("search_memory", memory),
        ("search_conversations", turns),
        ("search_conversations by words and meaning (question's vector kept)", fused),
    ):
        p99 = percentile(times, 99)
        rows.append(
            Row(
                key="archive",
                figure=(
                    f"9. {what} p50 / p99, {size:,} {'memories' if 'memory' in what else 'turns'}"
                    f" of one owner among 10 owners: {backend}"
                ),
                value=_p50_p99(times),
                numbers=(percentile(times, 50) * 1000, p99 * 1000),
                target="p99 < 20 ms" if largest else "",
                met=p99 < SEARCH_TARGET if largest else None,
                command=command("archive", f"--backends {backend.lower()}"),
            )
        )
    return rows


async def run(config: Config, workdir: Path) -> list[Row]:
    """Seed each size on each backend; time searches, saves, and the block's tokens."""
    rows: list[Row] = []
    for backend in config.backends:
        if backend == "postgres" and not await postgres_available(config.postgres_url):
            continue
        name = "SQLite" if backend == "sqlite" else "Postgres"
        for size in config.archive_sizes:
            async with database(backend, workdir, config.postgres_url) as url:
                await _seed(url, size)
                rows += _search_rows(name, size, *await searches(config, url))
                if size == config.archive_save_size:
                    rows += _save_rows(name, size, *await saves(config, url))
    embedding = await question_vectors(3 if config.archive_searches >= 100 else 1)
    if embedding is not None:
        rows.append(
            Row(
                key="archive",
                figure="9. A question's vector, the local model (all-MiniLM-L6-v2), p50 / p99",
                value=_p50_p99(embedding),
                numbers=(percentile(embedding, 50) * 1000, percentile(embedding, 99) * 1000),
                command=command("archive"),
            )
        )
    return rows


def _save_rows(backend: str, size: int, times: list[float], tokens: list[int]) -> list[Row]:
    """Return the rows of the saves at one size: their cost, and the block's tokens."""
    p99 = percentile(times, 99)
    return [
        Row(
            key="archive",
            figure=f"9. add_to_memory p50 / p99 at {size:,} memories (index included): {backend}",
            value=_p50_p99(times),
            numbers=(percentile(times, 50) * 1000, p99 * 1000),
            target="p99 < 20 ms",
            met=p99 < SAVE_TARGET,
            command=command("archive", f"--backends {backend.lower()}"),
        ),
        Row(
            key="archive",
            figure=(
                f"9. Memory block tokens at {size:,} memories, after each of {len(tokens)} saves "
                f"(budget {BUDGET:,}): largest: {backend}"
            ),
            value=f"{max(tokens):,}",
            numbers=(float(max(tokens)),),
            target=f"<= {BUDGET:,} every time",
            met=max(tokens) <= BUDGET,
            command=command("archive", f"--backends {backend.lower()}"),
        ),
    ]
