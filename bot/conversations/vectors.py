"""Search by meaning: each turn's vector, computed in the background, fused with the words.

A turn's vector is made from `<who> said, "<words>"` (the form the LoCoMo paper's dense
retriever read) after the turn is stored, never on the reply's path: poke() starts a
background drain that embeds BATCH turns at a time, oldest first, until every turn has a
vector of the current model (the first drain after a start is the backfill of the turns
stored before). A search embeds the question, scans the owner's vectors (a plain column:
no vector extension is assumed) and fuses that order with the words' by reciprocal rank
fusion: a turn's score is the sum over both lists of 1 / (RRF_K + its rank). Without an
embedder, or when it fails, the words' order stands.
"""

import asyncio
import logging
from collections.abc import Sequence

import numpy as np
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.conversations.content import turn_words
from bot.conversations.said_by import said_by_of
from memory.embeddings import Embedder, EmbeddingFailed, Vector

logger = logging.getLogger(__name__)

# Turns embedded per batch: a batch is one model call and one transaction.
BATCH = 32
# Each list contributes this many of its best to the fusion.
POOL = 50
# Reciprocal rank fusion's constant (Cormack et al., 2009): flattens the top ranks' lead.
RRF_K = 60
# Characters of a turn the model reads (it reads 256 tokens at most).
VECTOR_CHARACTERS = 1200

_PENDING = (
    "SELECT id, role, content, said_by FROM conversation_turns "
    "WHERE id > :after AND owner_id IS NOT NULL "
    "AND (embedding_model IS NULL OR embedding_model <> :model) ORDER BY id LIMIT :batch"
)
_STORE = (
    "UPDATE conversation_turns SET embedding = :vector, embedding_model = :model WHERE id = :id"
)
_OWNERS_VECTORS = (
    "SELECT id, embedding FROM conversation_turns AS turns WHERE owner_id = :owner "
    "AND embedding_model = :model AND length(embedding) > 0 "
)


def vector_text(role: str, content: list, said_by: dict | None) -> str:
    """Return what a turn's vector is made from: who said it and its words ("" if none)."""
    words = " ".join(turn_words(role, content).split())  # type: ignore[arg-type]
    if not words:
        return ""
    if role != "user":
        who = "The assistant"
    else:
        who = said_by_of(said_by, content).speaker or "The user"
    return f'{who} said, "{words[:VECTOR_CHARACTERS]}"'


def pack(vector: Vector) -> bytes:
    """Return a vector as stored: float16 values."""
    return np.asarray(vector, dtype=np.float16).tobytes()


def fuse(ranked: Sequence[Sequence[int]], limit: int) -> list[int]:
    """Return the ids best by reciprocal rank fusion of the lists, ties to the newer turn."""
    scores: dict[int, float] = {}
    for ids in ranked:
        for rank, turn_id in enumerate(ids):
            scores[turn_id] = scores.get(turn_id, 0.0) + 1.0 / (RRF_K + rank + 1)
    return sorted(scores, key=lambda turn_id: (-scores[turn_id], -turn_id))[:limit]


class TurnVectors:
    """Keeps every turn's vector up to date in the background, and ranks turns by meaning."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], embedder: Embedder):
        self._sessionmaker = sessionmaker
        self._embedder = embedder
        self._after = 0  # every turn up to this id has a vector of the model
        self._task: asyncio.Task[None] | None = None
        self._again = False
        self.drained = asyncio.Event()

    def poke(self) -> None:
        """Embed the turns stored since, in the background (no wait, no error raised here)."""
        self._again = True
        if self._task is None or self._task.done():
            self.drained.clear()
            self._task = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        """Embed batch after batch until none is left; a failure waits for the next poke."""
        try:
            while self._again:
                self._again = False
                while await self.fill_batch():
                    pass
        except EmbeddingFailed as error:
            logger.warning("turn vectors wait for the next turn: %s", error)
        finally:
            self.drained.set()

    async def fill_batch(self) -> int:
        """Embed the next BATCH turns without a vector of the model; return how many were read."""
        model = self._embedder.name
        async with self._sessionmaker() as session:
            parameters = {"after": self._after, "model": model, "batch": BATCH}
            rows = (await session.execute(text(_PENDING), parameters)).all()
        if not rows:
            return 0
        texts = [vector_text(row.role, _json(row.content), _json(row.said_by)) for row in rows]
        worded = [index for index, words in enumerate(texts) if words]
        vectors = await self._embedder.embed([texts[index] for index in worded])
        stored = [b""] * len(rows)
        for index, vector in zip(worded, vectors, strict=True):
            stored[index] = pack(vector)
        values = [
            {"id": row.id, "vector": vector, "model": model}
            for row, vector in zip(rows, stored, strict=True)
        ]
        async with self._sessionmaker() as session, session.begin():
            await session.execute(text(_STORE), values)
        self._after = rows[-1].id
        return len(rows)

    async def nearest(
        self, session: AsyncSession, owner_id: int, query: str, condition: str, skip: int
    ) -> list[int]:
        """Return the ids of the owner's POOL turns nearest the query, nearest first.

        condition: more SQL on the turns (as "turns"), with :skip for a conversation left out.
        """
        if not query.strip():
            return []
        try:
            (vector,) = await self._embedder.embed([query])
        except EmbeddingFailed as error:
            logger.warning("searching by words only: %s", error)
            return []
        parameters = {"owner": owner_id, "model": self._embedder.name, "skip": skip}
        rows = (await session.execute(text(_OWNERS_VECTORS + condition), parameters)).all()
        if not rows:
            return []
        ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
        matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float16)
        matrix = matrix.reshape(len(rows), -1).astype(np.float32)
        scores = matrix @ np.asarray(vector, dtype=np.float32)
        best = np.argsort(-scores, kind="stable")[:POOL]
        return [int(ids[index]) for index in best]

    @staticmethod
    def fuse(ranked: Sequence[Sequence[int]], limit: int) -> list[int]:
        """Return the ids best by reciprocal rank fusion of the lists."""
        return fuse(ranked, limit)

    async def close(self) -> None:
        """Stop the background work."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)


def _json(value: object) -> object:
    """Return a JSON column's value as Python (a text statement hands SQLite's over as text)."""
    import json

    return json.loads(value) if isinstance(value, str) else value
