"""Search by meaning: each turn's vector, computed in the background, fused with the words.

A turn's vector is made from `<who> said, "<words>"` (the form the LoCoMo paper's dense
retriever read) after the turn is stored, never on the reply's path: poke() starts a
background drain that embeds BATCH turns at a time, oldest first, until every turn has a
vector of the current model (the first drain after a start is the backfill of the turns
stored before). A search embeds the question (before it takes a database connection;
the last QUESTIONS asked are kept), compares it with the owner's newest WINDOW vectors and
the vectors of the words' best wherever they are, and fuses that order with the words' by
reciprocal rank fusion: a turn's score is the sum over both lists of 1 / (RRF_K + its
rank), plus a share of its neighbours' in its conversation. Without an embedder, or when
it fails, the words' order stands.

The vectors are a plain column (no vector extension is assumed). An owner's window is kept
in memory as a float32 matrix (OwnerWindow): each search reads only the vectors stored
since (the background fills them in id order, so they are the ones after the window's
newest), the whole window again after WINDOW_SECONDS or when a turn inside it changes.
The windows together hold at most CACHED_ROWS rows, the least recently searched dropped.
"""

import asyncio
import json
import logging
import time
from collections import OrderedDict
from typing import Any

import numpy as np
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.conversations.content import turn_words
from bot.conversations.fusion import POOL, Array, OwnerWindow, fused_ranks
from bot.conversations.said_by import said_by_of
from memory.embeddings import Embedder, EmbeddingFailed, Vector

logger = logging.getLogger(__name__)

# Turns embedded per batch: a batch is one model call and one transaction.
BATCH = 32
# Characters of a turn the model reads (it reads 256 tokens at most).
VECTOR_CHARACTERS = 1200
# An owner's newest this many vectors are compared with every question (about 1 ms for
# 10,000 of 384 values); older turns are compared when the words find them.
WINDOW = 10_000
# Rows of all owners' windows kept in memory (float32: 46 MB at 384 values).
CACHED_ROWS = 30_000
# A window is read whole again after this long: turns deleted since leave it.
WINDOW_SECONDS = 300.0
# Questions whose vectors are kept (a question asked again costs no model call).
QUESTIONS = 256

_PENDING = (
    "SELECT id, owner_id, role, content, said_by FROM conversation_turns "
    "WHERE id > :after AND owner_id IS NOT NULL "
    "AND (embedding_model IS NULL OR embedding_model <> :model) ORDER BY id LIMIT :batch"
)
_STORE = (
    "UPDATE conversation_turns SET embedding = :vector, embedding_model = :model WHERE id = :id"
)
# The owner's newest vectors after :after, through the owner's index (owner_id, id) from
# its newest: Postgres takes the row comparison as the index's range (with "owner_id =
# :owner AND id > :after" it walks the primary key back through other owners' newer turns),
# SQLite the equality and the range (it cannot seek by a row comparison).
_WINDOW_COLUMNS = (
    "SELECT id, conversation_id, embedding FROM conversation_turns "
    "WHERE embedding_model = :model AND length(embedding) > 0 AND "
)
_WINDOW = {
    "postgresql": _WINDOW_COLUMNS + "(owner_id, id) > (:owner, :after) AND owner_id <= :owner "
    "ORDER BY owner_id DESC, id DESC LIMIT :window",
    "sqlite": _WINDOW_COLUMNS + "owner_id = :owner AND id > :after ORDER BY id DESC LIMIT :window",
}
# The vectors of the words' best outside the window, by their keys.
_BY_ID = (
    "SELECT id, conversation_id, embedding FROM conversation_turns "
    "WHERE id IN ({ids}) AND owner_id = :owner "
    "AND embedding_model = :model AND length(embedding) > 0"
)
# Which turns of the conversation in progress are searched: those folded into its summary.
_FOLDED = "SELECT summary_through_turn_id FROM conversations WHERE id = :skip"


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
    return np.asarray(vector, dtype=np.float16).tobytes()


class TurnVectors:
    """Keeps every turn's vector up to date in the background, and ranks turns by meaning."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        embedder: Embedder,
        window: int = WINDOW,
    ):
        self._sessionmaker = sessionmaker
        self._embedder = embedder
        self._window_size = window  # an owner's newest vectors compared at each search
        self._after = 0  # every turn up to this id has a vector of the model
        self._task: asyncio.Task[None] | None = None
        self._again = False
        self._closed = False
        self.drained = asyncio.Event()
        # Owners' windows, the most recently searched last; questions' vectors likewise.
        self._windows: OrderedDict[int, OwnerWindow] = OrderedDict()
        self._questions: OrderedDict[str, Array] = OrderedDict()

    def poke(self) -> None:
        """Embed the turns stored since, in the background (no wait, no error raised here)."""
        if self._closed:
            return
        self._again = True
        if self._task is None or self._task.done():
            self.drained.clear()
            self._task = asyncio.get_running_loop().create_task(self._drain())

    def changed(self, turn_id: int) -> None:
        """Embed a turn again whose words changed (its vector was removed with them)."""
        self._after = min(self._after, turn_id - 1)
        self._drop_windows_holding(turn_id)
        self.poke()

    def _drop_windows_holding(self, turn_id: int) -> None:
        """Forget the windows that reach past turn_id: the turn may be in them."""
        for owner_id in [o for o, w in self._windows.items() if w.newest >= turn_id]:
            del self._windows[owner_id]

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
        for row in rows:  # embedded again out of order (changed): inside a window
            window = self._windows.get(row.owner_id)
            if window is not None and row.id <= window.newest:
                del self._windows[row.owner_id]
        return len(rows)

    async def question(self, query: str) -> Array | None:
        """Return the question's vector (kept for the next time), or None: search by words."""
        if not query.strip():
            return None
        known = self._questions.get(query)
        if known is not None:
            self._questions.move_to_end(query)
            return known
        try:
            (vector,) = await self._embedder.embed([query])
        except EmbeddingFailed as error:
            logger.warning("searching by words only: %s", error)
            return None
        found = np.asarray(vector, dtype=np.float32)
        self._questions[query] = found
        while len(self._questions) > QUESTIONS:
            self._questions.popitem(last=False)
        return found

    async def _window(self, session: AsyncSession, owner_id: int) -> OwnerWindow:
        """Return the owner's newest vectors: those stored since added, or all read again."""
        window, now = self._windows.get(owner_id), time.monotonic()
        if window is not None and now - window.read_at > WINDOW_SECONDS:
            window = None
        after = 0 if window is None else window.newest
        parameters = {"owner": owner_id, "after": after, "model": self._embedder.name}
        size, dialect = self._window_size, (await session.connection()).dialect.name
        statement = text(_WINDOW[dialect])
        rows = (await session.execute(statement, {**parameters, "window": size})).all()
        if window is None:
            window = OwnerWindow.of_rows(rows, now)
        elif rows:
            # Another search of the owner may have added some meanwhile: only newer ones.
            window = self._windows.get(owner_id, window).extended(rows, size)
        self._windows[owner_id] = window
        self._windows.move_to_end(owner_id)
        held = sum(len(w.ids) for w in self._windows.values())
        while held > CACHED_ROWS and len(self._windows) > 1:
            held -= len(self._windows.popitem(last=False)[1].ids)
        return window

    async def fused(
        self,
        session: AsyncSession,
        owner_id: int,
        question: Array,
        words: list[int],
        limit: int,
        skip: int,
    ) -> list[int]:
        """Return the ids best by the words' ranks (best first) fused with the vectors'.

        skip: a conversation whose turns after its summary are left out (0: none).
        """
        window, older = await self._window(session, owner_id), None
        held = set(window.ids[window.rows_of(words[:POOL])].tolist())
        outside = [turn_id for turn_id in words[:POOL] if turn_id not in held]
        if outside and len(window.ids) >= self._window_size:
            ids = ", ".join(str(int(turn_id)) for turn_id in outside)
            parameters = {"owner": owner_id, "model": self._embedder.name}
            rows = (await session.execute(text(_BY_ID.format(ids=ids)), parameters)).all()
            older = OwnerWindow.of_rows(rows, window.read_at)
        left_out = None
        if skip and bool(np.any(window.chats == skip)):
            folded = (await session.execute(text(_FOLDED), {"skip": skip})).scalar()
            left_out = (window.chats == skip) & (window.ids > (folded or 0))
        return fused_ranks(window, question, words, limit, left_out, older)

    async def close(self) -> None:
        """Stop the background work now: a batch in progress is dropped, done again later."""
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        await self._embedder.close()


def _json(value: Any) -> Any:
    """Return a JSON column's value as Python (a text statement hands SQLite's over as text)."""
    return json.loads(value) if isinstance(value, str) else value
