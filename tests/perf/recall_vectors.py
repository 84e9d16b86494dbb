"""Recall's hybrid half: the local model's vectors for the LoCoMo turns, and their rows."""

import time
from collections.abc import Sequence

from memory.db import create_engine, create_sessionmaker
from memory.embeddings import Embedder, Vector
from tests.perf.common import Row, percentile


class CachedEmbedder:
    """The local model, each text embedded once per run (the second engine reuses them)."""

    def __init__(self, embedder: Embedder):
        self.name = embedder.name
        self._embedder = embedder
        self._known: dict[str, Vector] = {}

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        """Return each text's vector, computing only those not seen before."""
        new = [t for t in dict.fromkeys(texts) if t not in self._known]
        for start in range(0, len(new), 64):
            batch = new[start : start + 64]
            self._known.update(zip(batch, await self._embedder.embed(batch), strict=True))
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
