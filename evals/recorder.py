"""Record every Messages API call of a trial, exactly as the client sent it and got it back.

A run's trials share one HTTP client (one connection pool, and one TLS context, which takes
tens of milliseconds to build); its hook files each answered call with the Recorder that is
active in the task making it.
"""

import contextlib
import json
from collections.abc import Iterator
from contextvars import ContextVar

from anthropic import DefaultAsyncHttpxClient

from evals.transcript import Exchange

MESSAGES_PATH = "/v1/messages"


class Recorder:
    """The calls of one trial, each tagged with the user turn it served."""

    def __init__(self) -> None:
        self.turn = 0  # the trial sets it before each user turn
        self.exchanges: list[Exchange] = []

    @contextlib.contextmanager
    def active(self) -> Iterator["Recorder"]:
        """Record the calls this task (and tasks it starts) makes while inside."""
        token = _active.set(self)
        try:
            yield self
        finally:
            _active.reset(token)


_active: ContextVar[Recorder | None] = ContextVar("evals_recorder", default=None)


async def _record(response) -> None:
    """Keep a successful call; failed tries the SDK retries are not what the model saw."""
    recorder = _active.get()
    if recorder is None or response.status_code != 200:
        return
    if not response.request.url.path.endswith(MESSAGES_PATH):
        return
    await response.aread()
    request = json.loads(response.request.content)
    recorder.exchanges.append(Exchange(recorder.turn, request, response.json()))


def recording_client() -> DefaultAsyncHttpxClient:
    """Return an HTTP client for the SDK, with its defaults, that records into the recorders."""
    return DefaultAsyncHttpxClient(event_hooks={"response": [_record]})
