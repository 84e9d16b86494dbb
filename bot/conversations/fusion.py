"""Fuse the words' ranking with the vectors': reciprocal rank fusion over an owner's window.

A turn's score is the sum over both lists of 1 / (RRF_K + its rank), plus NEIGHBOUR_WEIGHT of
its neighbours' in its conversation. The window (OwnerWindow) holds an owner's vectors as a
float32 matrix in their conversations' order (bot/conversations/vectors.py keeps it).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import Row

Array = NDArray[np.float32]

# Each list contributes this many of its best to the fusion.
POOL = 50
# Reciprocal rank fusion's constant: 60 in Cormack et al. (2009); lower keeps more of the
# top ranks' lead, which two short lists need (LoCoMo: 5 to 10 alike, 60 no better than words).
RRF_K = 10
# A turn's score gains this share of its neighbours' (the turns before and after it in its
# conversation): an answer is often the reply to, or the question before, what matched.
# (LoCoMo: 0.3 to 0.5 alike, each conversation better.)
NEIGHBOUR_WEIGHT = 0.3


@dataclass(frozen=True)
class OwnerWindow:
    """An owner's vectors in their conversations' order: turn ids, conversations, matrix.

    by_id lists the rows by ascending turn id (a turn is found by bisection).
    """

    ids: NDArray[np.int64]
    chats: NDArray[np.int64]
    matrix: Array
    read_at: float
    by_id: NDArray[np.int64]

    @classmethod
    def of_rows(cls, rows: Sequence[Row[*tuple[Any, ...]]], read_at: float) -> "OwnerWindow":
        """Return the window of rows (id, conversation_id, embedding) in any order."""
        rows = sorted(rows, key=lambda row: (int(row[1]), int(row[0])))
        ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
        chats = np.fromiter((row[1] for row in rows), dtype=np.int64, count=len(rows))
        packed = np.frombuffer(b"".join(row[2] for row in rows), dtype=np.float16)
        matrix = packed.reshape(len(rows), -1).astype(np.float32) if rows else _EMPTY
        return cls(ids, chats, matrix, read_at, np.argsort(ids))

    @property
    def newest(self) -> int:
        """Return the newest turn id in the window (0 when it is empty)."""
        return int(self.ids[self.by_id[-1]]) if len(self.ids) else 0

    def extended(self, rows: Sequence[Row[*tuple[Any, ...]]], size: int) -> "OwnerWindow":
        """Return the window with newer rows added, its oldest dropped past size."""
        more = OwnerWindow.of_rows([row for row in rows if row[0] > self.newest], self.read_at)
        if not len(more.ids):
            return self
        if not len(self.ids) or more.matrix.shape[1] != self.matrix.shape[1]:
            return more  # nothing before, or another model's size: only the new rows
        ids = np.concatenate([self.ids, more.ids])
        chats = np.concatenate([self.chats, more.chats])
        kept = np.sort(np.argsort(ids)[-size:])  # the newest size rows, in the order above
        order = kept[np.lexsort((ids[kept], chats[kept]))]
        matrix = np.concatenate([self.matrix, more.matrix])[order]
        return OwnerWindow(ids[order], chats[order], matrix, self.read_at, np.argsort(ids[order]))

    def rows_of(self, turn_ids: Sequence[int]) -> NDArray[np.int64]:
        """Return the rows of those turns the window holds (by ascending turn id)."""
        wanted = np.asarray(turn_ids, dtype=np.int64)
        if not len(self.ids) or not len(wanted):
            return np.zeros(0, dtype=np.int64)
        sorted_ids = self.ids[self.by_id]
        at = np.minimum(np.searchsorted(sorted_ids, wanted), len(sorted_ids) - 1)
        rows: NDArray[np.int64] = self.by_id[at[sorted_ids[at] == wanted]]
        return rows


_EMPTY = np.zeros((0, 0), dtype=np.float32)


def fused_ranks(
    window: OwnerWindow,
    query: Array,
    words: list[int],
    limit: int,
    left_out: NDArray[np.bool_] | None = None,
    older: OwnerWindow | None = None,
) -> list[int]:
    """Return the best ids: each list's POOL best by RRF, a turn's neighbours' scores added.

    window: the owner's turns with a vector to compare; words: the ids the words found, best
    first (a turn without a vector counts by its words alone); left_out: the window's rows
    never to return (the conversation in progress); older: more turns to compare, older than
    the window's (the words' best outside it).
    """
    scores: dict[int, float] = {}
    for rank, turn_id in enumerate(words[:POOL]):
        scores[turn_id] = 1.0 / (RRF_K + rank + 1)
    if len(window.ids) and window.matrix.shape[1] == len(query):
        # einsum, not BLAS: a busy host's threaded BLAS takes 10 times longer on one vector.
        similarity = np.einsum("ij,j->i", window.matrix, query)
        if left_out is not None:
            similarity[left_out] = -np.inf
        ids, chats = window.ids, window.chats
        if older is not None and len(older.ids) and older.matrix.shape[1] == len(query):
            similarity = np.concatenate([older.matrix @ query, similarity])
            ids, chats = np.concatenate([older.ids, ids]), np.concatenate([older.chats, chats])
            window = OwnerWindow(ids, chats, _EMPTY, window.read_at, np.argsort(ids))
        own = np.zeros(len(ids), dtype=np.float64)
        for rank, index in enumerate(_best(similarity, POOL)):
            if similarity[index] > 0:  # a vector at a right angle or more is no match
                own[index] = 1.0 / (RRF_K + rank + 1)
        for index in window.rows_of(list(scores)).tolist():
            own[index] += scores[int(ids[index])]
        total = _with_neighbours(own, chats)
        total[similarity == -np.inf] = 0.0
        for index in np.flatnonzero(total > 0).tolist():
            scores[int(ids[index])] = float(total[index])
    best = sorted(scores, key=lambda turn_id: (-scores[turn_id], -turn_id))
    return [turn_id for turn_id in best if scores[turn_id] > 0][:limit]


def _best(similarity: Array, count: int) -> list[int]:
    """Return the indexes of the count highest similarities, highest first (ties: first).

    The same as the first count of a stable sort of all, without sorting all.
    """
    if len(similarity) > count:
        edge = np.partition(similarity, len(similarity) - count)[len(similarity) - count]
        above = np.flatnonzero(similarity > edge)
        tied = np.flatnonzero(similarity == edge)[: count - len(above)]
        top = np.sort(np.concatenate([above, tied]))
    else:
        top = np.arange(len(similarity))
    ranked: list[int] = top[np.argsort(-similarity[top], kind="stable")].tolist()
    return ranked


def _with_neighbours(own: NDArray[np.float64], chats: NDArray[np.int64]) -> NDArray[np.float64]:
    """Add to each turn's score NEIGHBOUR_WEIGHT of the turns before and after it (same chat)."""
    total = own.copy()
    same = chats[1:] == chats[:-1]
    total[1:] += NEIGHBOUR_WEIGHT * own[:-1] * same
    total[:-1] += NEIGHBOUR_WEIGHT * own[1:] * same
    return total
