"""Recall's hybrid half: the local model's vectors for the LoCoMo turns, and their rows."""

import json
import os
import time
from collections.abc import Sequence
from pathlib import Path

from memory.db import create_engine, create_sessionmaker
from memory.embeddings import Embedder, Vector
from tests.perf.common import Row, percentile

# A file that keeps the vectors between runs (they depend on the texts and the model only).
CACHE_VARIABLE = "RECALL_VECTORS_CACHE"


class CachedEmbedder:
    """The local model, each text embedded once per run (the second engine reuses them).

    With RECALL_VECTORS_CACHE naming a file, also once across runs (their timing is the
    same model's, measured on the first run: the vectors' fill time is then the cache's).
    """

    def __init__(self, embedder: Embedder):
        self.name = embedder.name
        self._embedder = embedder
        self._known: dict[str, Vector] = {}
        self._unsaved = 0
        self._file = Path(os.environ[CACHE_VARIABLE]) if os.environ.get(CACHE_VARIABLE) else None
        if self._file is not None and self._file.is_file():
            self._known = json.loads(self._file.read_text())

    def save(self) -> None:
        """Write the vectors to RECALL_VECTORS_CACHE's file, if set and any are new."""
        if self._file is not None and self._unsaved:
            self._file.write_text(json.dumps(self._known))
            self._unsaved = 0

    async def close(self) -> None:
        """Stop the model underneath."""
        await self._embedder.close()

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        """Return each text's vector, computing only those not seen before."""
        new = [t for t in dict.fromkeys(texts) if t not in self._known]
        for start in range(0, len(new), 64):
            batch = new[start : start + 64]
            self._known.update(zip(batch, await self._embedder.embed(batch), strict=True))
        self._unsaved += len(new)
        return [self._known[t] for t in texts]


async def fill(url: str, embedder: Embedder) -> float:
    """Compute every stored turn's vector as the bot does in the background; return seconds."""
    from bot.conversations.vectors import TurnVectors

    engine = create_engine(url)
    start = time.perf_counter()
    try:
        vectors = TurnVectors(create_sessionmaker(engine), embedder)
        while await vectors.fill_batch():
            pass
    finally:
        await engine.dispose()
    return time.perf_counter() - start


def hybrid_rows(name: str, r10: float, times: list[float], again: str) -> list[Row]:
    """Return the rows of the hybrid search (words and vectors fused) on one backend."""
    p99 = 1000 * percentile(times, 99)
    return [
        Row(
            key="recall",
            figure=f"17. LoCoMo R@10, all categories, question as asked, hybrid: {name}",
            value=f"{r10:.1f}%",
            numbers=(r10,),
            target=">= 70% (the paper's dense retriever: 66.2%)",
            met=r10 >= 70,
            command=again,
        ),
        Row(
            key="recall",
            figure=f"17. LoCoMo search p50 / p99, hybrid (question's vector cached): {name}",
            value=f"{1000 * percentile(times, 50):.2f} ms / {p99:.2f} ms",
            numbers=(1000 * percentile(times, 50), p99),
            command=again,
        ),
    ]
