"""Search by meaning: each turn's vector, computed in the background, fused with the words.

A turn's vector is made from `<who> said, "<words>"` (the form the LoCoMo paper's dense
retriever read) after the turn is stored, never on the reply's path: poke() starts a
background drain that embeds BATCH turns at a time, oldest first, until every turn has a
vector of the current model (the first drain after a start is the backfill of the turns
stored before). A search embeds the question, scans the owner's vectors (a plain column:
no vector extension is assumed) and fuses that order with the words' by reciprocal rank
fusion: a turn's score is the sum over both lists of 1 / (RRF_K + its rank), plus a share
of its neighbours' in its conversation. Without an embedder, or when it fails, the words'
order stands.
"""

import asyncio
import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import Row, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.conversations.content import turn_words
from bot.conversations.said_by import said_by_of
from memory.embeddings import Embedder, EmbeddingFailed, Vector

if TYPE_CHECKING:
    # NumPy (11 MiB) loads with the first vector, not at start-up (docs/performance.md, fig. 6).
    import numpy as np
    from numpy.typing import NDArray

    Array = NDArray[np.float32]

logger = logging.getLogger(__name__)

# Turns embedded per batch: a batch is one model call and one transaction.
BATCH = 32
# Each list contributes this many of its best to the fusion.
POOL = 50
# Reciprocal rank fusion's constant: 60 in Cormack et al. (2009); lower keeps more of the
# top ranks' lead, which two short lists need (LoCoMo: 5 to 10 alike, 60 no better than words).
RRF_K = 10
# A turn's score gains this share of its neighbours' (the turns before and after it in its
# conversation): an answer is often the reply to, or the question before, what matched.
# (LoCoMo: 0.3 to 0.5 alike, each conversation better.)
NEIGHBOUR_WEIGHT = 0.3
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
    "SELECT id, conversation_id, embedding FROM conversation_turns AS turns "
    "WHERE owner_id = :owner AND embedding_model = :model AND length(embedding) > 0 "
)


def vector_text(role: str, content: list[Any], said_by: dict[str, Any] | None) -> str:
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
    import numpy as np

    return np.asarray(vector, dtype=np.float16).tobytes()


def fused_ranks(
    rows: Sequence[Row[*tuple[Any, ...]]], query: "Array", words: list[int], limit: int
) -> list[int]:
    """Return the best ids: each list's POOL best by RRF, a turn's neighbours' scores added.

    rows: the owner's turns with a vector (id, conversation_id, embedding); words: the ids
    the words found, best first (a turn without a vector yet counts by its words alone).
    """
    import numpy as np

    scores: dict[int, float] = {}
    for rank, turn_id in enumerate(words[:POOL]):
        scores[turn_id] = 1.0 / (RRF_K + rank + 1)
    if rows:
        ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
        chats = np.fromiter((row[1] for row in rows), dtype=np.int64, count=len(rows))
        order = np.lexsort((ids, chats))  # in each conversation's order
        ids, chats = ids[order], chats[order]
        matrix = np.frombuffer(b"".join(rows[i][2] for i in order), dtype=np.float16)
        similarity = matrix.reshape(len(rows), -1).astype(np.float32) @ query
        own = np.zeros(len(rows), dtype=np.float64)
        for rank, index in enumerate(np.argsort(-similarity, kind="stable")[:POOL]):
            if similarity[index] > 0:  # a vector at a right angle or more is no match
                own[index] = 1.0 / (RRF_K + rank + 1)
        position = {int(turn_id): index for index, turn_id in enumerate(ids)}
        for turn_id, score in scores.items():
            if turn_id in position:
                own[position[turn_id]] += score
        scores.update(zip(map(int, ids), _with_neighbours(own, chats), strict=True))
    best = sorted(scores, key=lambda turn_id: (-scores[turn_id], -turn_id))
    return [turn_id for turn_id in best if scores[turn_id] > 0][:limit]


def _with_neighbours(own: "NDArray[np.float64]", chats: "NDArray[np.int64]") -> list[float]:
    """Add to each turn's score NEIGHBOUR_WEIGHT of the turns before and after it (same chat)."""
    total = own.copy()
    same = chats[1:] == chats[:-1]
    total[1:] += NEIGHBOUR_WEIGHT * own[:-1] * same
    total[:-1] += NEIGHBOUR_WEIGHT * own[1:] * same
    scores: list[float] = total.tolist()
    return scores


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
        except (SQLAlchemyError, OSError) as error:  # a database gone away: the next poke
            logger.warning("turn vectors wait for the next turn: %s", type(error).__name__)
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

    async def fused(
        self,
        session: AsyncSession,
        owner_id: int,
        query: str,
        words: list[int],
        limit: int,
        condition: str,
        skip: int,
    ) -> list[int]:
        """Return the ids best by the words' ranks (best first) fused with the vectors'.

        condition: more SQL on the turns (as "turns"), with :skip for a conversation left out.
        """
        try:
            (vector,) = await self._embedder.embed([query]) if query.strip() else [[]]
        except EmbeddingFailed as error:
            logger.warning("searching by words only: %s", error)
            return words[:limit]
        if not vector:
            return words[:limit]
        import numpy as np

        parameters = {"owner": owner_id, "model": self._embedder.name, "skip": skip}
        rows = (await session.execute(text(_OWNERS_VECTORS + condition), parameters)).all()
        return fused_ranks(rows, np.asarray(vector, dtype=np.float32), words, limit)

    async def close(self) -> None:
        """Stop the background work."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)


def _json(value: Any) -> Any:
    """Return a JSON column's value as Python (a text statement hands SQLite's over as text)."""
    return json.loads(value) if isinstance(value, str) else value
