"""The timed fakes in a process of their own, so the bot being measured has its CPU to itself.

Run as `python -m tests.perf.remote`: it prints one JSON line with its control port, then
serves a small control API until stdin closes. RemoteFakes is the benchmark's side of it.
Both processes stamp times with time.perf_counter, which on Linux is CLOCK_MONOTONIC and so
comparable across processes.
"""

import asyncio
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from tests.fakes.anthropic_server import paced, text
from tests.perf.data import model_reply
from tests.perf.fakes import TimedAnthropic, TimedTelegram

ROOT = Path(__file__).resolve().parents[2]
# Hand updates out this long after the control call is answered, so the benchmark's own
# HTTP client is idle again when the measured window opens.
PUSH_DELAY = 0.005


@dataclass(frozen=True)
class Endpoint:
    """Where a fake server listens and the credential it expects (what make_settings reads)."""

    base_url: str
    token: str = ""
    api_key: str = ""


class Control:
    """The control API: fresh fakes, queued messages, waits, and the recorded times."""

    def __init__(self) -> None:
        self.tg: TimedTelegram | None = None
        self.model: TimedAnthropic | None = None
        self.pushed_at: list[float] = []

    async def reset(self, request: web.Request) -> web.Response:
        """Replace both fakes with fresh ones; answer with where they listen."""
        params = await request.json()
        await self.close()
        self.tg = await TimedTelegram().start()
        self.model = await TimedAnthropic(latency=params.get("model_latency", 0.0)).start()
        model, reply = self.model, params.get("reply")
        pacing = {
            "first_delay": params.get("first_delay", 0.0),
            "duration": params.get("duration", 0.0),
        }
        model.default = (lambda body: paced(reply, **pacing)) if reply else self._numbered_reply
        self.pushed_at = []
        return web.json_response(
            {
                "token": self.tg.token,
                "telegram": self.tg.base_url,
                "api_key": model.api_key,
                "anthropic": model.base_url,
            }
        )

    def _numbered_reply(self, body: dict[str, Any]):
        assert self.model is not None
        return text(model_reply(len(self.model.requests)))

    async def latency(self, request: web.Request) -> web.Response:
        """Set the fake model's answer latency."""
        assert self.model is not None
        self.model.latency = (await request.json())["model_latency"]
        return web.json_response({})

    async def push(self, request: web.Request) -> web.Response:
        """Queue user messages, all in one go, shortly after answering."""
        messages = (await request.json())["messages"]
        asyncio.get_running_loop().call_later(PUSH_DELAY, self._push_now, messages)
        return web.json_response({})

    def _push_now(self, messages: list[list[Any]]) -> None:
        assert self.tg is not None
        self.pushed_at.append(time.perf_counter())
        for chat_id, message, *sender in messages:
            # An optional third item: push_message's keywords, such as user_id and chat_type.
            self.tg.push_message(chat_id, message, **(sender[0] if sender else {}))

    async def wait(self, request: web.Request) -> web.Response:
        """Answer once the chats together got `total` messages."""
        assert self.tg is not None
        params = await request.json()
        await self.tg.wait_for_sends(params["chats"], params["total"], params["timeout"])
        return web.json_response({})

    async def state(self, request: web.Request) -> web.Response:
        """Return everything recorded since reset."""
        assert self.tg is not None and self.model is not None
        return web.json_response(
            {
                "update_out": sorted(self.tg.update_out.items()),
                "timings": self.model.timings,
                "sends": self.tg.sends,
                "drafts": self.tg.draft_times,
                "pushed_at": self.pushed_at,
                "max_in_flight": self.model.max_in_flight,
                "rejected": [f"{method}: {why}" for method, _, why in self.tg.rejected],
            }
        )

    async def close(self) -> None:
        """Stop the current fakes, if any."""
        for server in (self.tg, self.model):
            if server is not None:
                await server.stop()


async def serve() -> None:
    """Serve the control API until stdin is closed by the parent."""
    control = Control()
    app = web.Application()
    for name in ("reset", "latency", "push", "wait", "state"):
        app.router.add_post(f"/{name}", getattr(control, name))
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    print(json.dumps({"control": runner.addresses[0][1]}), flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)
    await control.close()
    await runner.cleanup()


class RemoteFakes:
    """Start `python -m tests.perf.remote` and drive it."""

    def __init__(self) -> None:
        self._process: asyncio.subprocess.Process | None = None
        self._session: aiohttp.ClientSession | None = None
        self._url = ""

    async def __aenter__(self) -> "RemoteFakes":
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self._process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.perf.remote", env=env,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert self._process.stdout is not None
        line = await asyncio.wait_for(self._process.stdout.readline(), timeout=60)
        self._url = f"http://127.0.0.1:{json.loads(line)['control']}"
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None))
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._session is not None:
            await self._session.close()
        if self._process is not None:
            assert self._process.stdin is not None
            self._process.stdin.close()
            try:
                await asyncio.wait_for(self._process.wait(), timeout=10)
            except TimeoutError:
                self._process.kill()
                await self._process.wait()

    async def _call(self, name: str, **params: Any) -> Any:
        assert self._session is not None
        async with self._session.post(f"{self._url}/{name}", json=params) as response:
            response.raise_for_status()
            return await response.json()

    async def reset(
        self,
        model_latency: float = 0.0,
        reply: str | None = None,
        first_delay: float = 0.0,
        duration: float = 0.0,
    ) -> tuple[Endpoint, Endpoint]:
        """Start fresh fakes; return the Bot API and the Messages API endpoints.

        reply, if given, is every answer, streamed after first_delay and over duration seconds.
        """
        answer = await self._call(
            "reset", model_latency=model_latency, reply=reply, first_delay=first_delay,
            duration=duration,
        )  # fmt: skip
        return (
            Endpoint(answer["telegram"], token=answer["token"]),
            Endpoint(answer["anthropic"], api_key=answer["api_key"]),
        )

    async def set_latency(self, seconds: float) -> None:
        """Make the fake model answer after this many seconds."""
        await self._call("latency", model_latency=seconds)

    async def push(self, messages: list[tuple[int, str] | tuple[int, str, dict[str, Any]]]) -> None:
        """Queue user messages, each optionally with push_message's keywords (user_id, ...).

        The fake hands them out a few milliseconds later, in this order.
        """
        await self._call("push", messages=messages)

    async def wait(self, chats: list[int], total: int, timeout: float = 30.0) -> None:  # noqa: ASYNC109
        """Wait until the chats together got `total` messages from the bot."""
        await self._call("wait", chats=chats, total=total, timeout=timeout)

    async def state(self) -> dict[str, Any]:
        """Return the times recorded since the last reset."""
        return await self._call("state")


if __name__ == "__main__":
    asyncio.run(serve())
