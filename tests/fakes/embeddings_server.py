"""A fake OpenAI-compatible embeddings server: POST /v1/embeddings.

It speaks the API as OpenAI does: JSON `{"model", "input", "encoding_format"}` with a
Bearer key, `input` a string or a list of them, vectors answered as float lists or, as the
official SDK asks by default, base64 float32; errors in OpenAI's shape. Its vectors stand
for meaning with a small thesaurus: each word counts in one of DIMENSIONS places (by its
hash), and a word of SYNONYMS in its head word's, so "automobile" lands near "car" with no
word in common. It records every request; fail_next(...) scripts errors; hold() keeps
answers back (a slow server) until release().
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import math
import re
import secrets
import struct
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.fakes.local_server import LocalServer

DIMENSIONS = 64
SYNONYMS = {"automobile": "car", "vehicle": "car", "sedan": "car", "puppy": "dog", "hound": "dog"}
_WORD = re.compile(r"[a-z]+")


def fake_vector(text: str) -> list[float]:
    """Return the server's unit vector for a text (all zeros but one place if it has no word)."""
    vector = [0.0] * DIMENSIONS
    for word in _WORD.findall(text.lower()):
        head = SYNONYMS.get(word, word)
        place = int.from_bytes(hashlib.sha256(head.encode()).digest()[:4], "big") % DIMENSIONS
        vector[place] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector] if any(vector) else [1.0] + [0.0] * (DIMENSIONS - 1)


@dataclass
class EmbeddingRequest:
    """One request the server was asked."""

    model: str
    inputs: list[str]
    authorization: str | None


class FakeEmbeddings(LocalServer):
    """The embeddings server on 127.0.0.1."""

    def __init__(self, api_key: str | None = None, models: tuple[str, ...] = ("embed-small",)):
        super().__init__()
        self.api_key = api_key or f"sk-test-{secrets.token_hex(16)}"
        self.models = models
        self.requests: list[EmbeddingRequest] = []
        self._failures: list[int] = []
        self._answer = asyncio.Event()
        self._answer.set()
        self.arrived = asyncio.Event()  # set at each request read; a test may clear it

    def add_routes(self, app: web.Application) -> None:
        """Add this server's routes to its app."""
        app.router.add_post("/v1/embeddings", self._embed)

    @property
    def base_url(self) -> str:
        """Return the value for EMBEDDINGS_BASE_URL."""
        return f"{self.origin}/v1"

    def fail_next(self, *statuses: int) -> None:
        """Answer the next requests with these HTTP statuses (OpenAI's error shape)."""
        self._failures.extend(statuses)

    def fail_always(self, status: int = 500) -> None:
        """Answer every request from now on with the status."""
        self._failures = [status] * 10000

    def recover(self) -> None:
        """Answer requests again (no failure scripted)."""
        self._failures.clear()

    def hold(self) -> None:
        """Keep answers back from now on, as a slow server does, until release()."""
        self._answer.clear()

    def release(self) -> None:
        """Answer the requests held, and the next ones at once."""
        self._answer.set()

    async def _embed(self, request: web.Request) -> web.Response:
        authorization = request.headers.get("Authorization")
        if authorization != f"Bearer {self.api_key}":
            return _error(401, "Incorrect API key provided.", "invalid_api_key")
        body: dict[str, Any] = await request.json()
        inputs = body.get("input")
        texts = [inputs] if isinstance(inputs, str) else inputs
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            return _error(400, "'input' must be a non-empty string or list of strings", None)
        self.requests.append(EmbeddingRequest(str(body.get("model")), texts, authorization))
        self.arrived.set()
        await self._answer.wait()
        if self._failures:
            return _error(self._failures.pop(0), "The server had an error.", None)
        if body.get("model") not in self.models:
            unknown = f"The model `{body.get('model')}` does not exist."
            return _error(404, unknown, "model_not_found")
        base64_asked = body.get("encoding_format") == "base64"
        data = []
        for index, text in enumerate(texts):
            vector = fake_vector(text)
            packed = struct.pack(f"<{len(vector)}f", *vector)
            shown: Any = base64.b64encode(packed).decode() if base64_asked else vector
            data.append({"object": "embedding", "index": index, "embedding": shown})
        usage = {"prompt_tokens": sum(len(t.split()) for t in texts)}
        usage["total_tokens"] = usage["prompt_tokens"]
        return web.json_response(
            {"object": "list", "data": data, "model": body["model"], "usage": usage}
        )


def _error(status: int, message: str, code: str | None) -> web.Response:
    """Answer an error as OpenAI does."""
    kind = "invalid_request_error" if status < 500 else "server_error"
    error = {"message": message, "type": kind, "param": None, "code": code}
    return web.json_response({"error": error}, status=status)
