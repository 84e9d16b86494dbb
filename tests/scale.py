"""Several web processes of `python -m bot` behind one address, as a host's router runs them.

RoundRobin is a small HTTP proxy: each request goes to the next process in turn; a process
that refuses the connection (not listening yet, or killed) is skipped as a router's health
check would, and a request a process drops (killed mid-request) is answered 502, which
Telegram retries. An update sent again goes to another process than the one that had it.
Cluster starts the processes on one database, each on its own PORT with the proxy's address
as WEBHOOK_URL, and kills and restarts them. Used by tests/test_scale_out.py and
tests/perf/bench_scale.py.
"""

import asyncio
import itertools
import json
import signal
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from tests.process import BotProcess, bot_environment
from tests.test_webhook import free_port

FORWARDED_HEADERS = ("Content-Type", "X-Telegram-Bot-Api-Secret-Token")


class RoundRobin:
    """An HTTP proxy on 127.0.0.1 that spreads requests over backends in turn."""

    def __init__(self, backends: list[str]):
        self.backends = backends
        self.served: Counter[str] = Counter()  # requests each backend answered
        self._turn = itertools.count()
        self._had: dict[int, str] = {}  # update id -> the backend that had it last
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.url = ""

    async def start(self) -> "RoundRobin":
        """Listen on a free port."""
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None))
        app = web.Application()
        app.router.add_route("*", "/{path:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        return self

    async def stop(self) -> None:
        """Stop listening and close the connections to the backends."""
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    def _order(self, update_id: int | None) -> list[str]:
        """Return the backends to try, starting with the next in turn (not the last to have it)."""
        start = next(self._turn) % len(self.backends)
        order = self.backends[start:] + self.backends[:start]
        had = self._had.get(update_id) if update_id is not None else None
        return [b for b in order if b != had] + ([had] if had else [])

    async def _forward(self, request: web.Request) -> web.Response:
        """Pass the request to a backend that accepts the connection; 502 if it drops it."""
        assert self._session is not None
        body = await request.read()
        headers = {k: request.headers[k] for k in FORWARDED_HEADERS if k in request.headers}
        try:
            update_id = json.loads(body).get("update_id")
        except ValueError:
            update_id = None
        for backend in self._order(update_id):
            if update_id is not None:
                self._had[update_id] = backend
            try:
                async with self._session.post(
                    backend + request.path_qs, data=body, headers=headers
                ) as response:
                    payload = await response.read()
            except aiohttp.ClientConnectorError:
                continue  # not listening: the next one
            except aiohttp.ClientError:
                return web.Response(status=502)  # dropped mid-request: Telegram tries again
            self.served[backend] += 1
            return web.Response(status=response.status, body=payload)
        return web.Response(status=502)


async def listening(port: int, timeout: float = 120) -> None:  # noqa: ASYNC109
    """Wait until something accepts connections on the port (PTB listens after setWebhook)."""
    async with asyncio.timeout(timeout):
        while True:
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(0.05)  # polled: nothing outside the process tells
                continue
            writer.close()
            await writer.wait_closed()
            return


def echo_words(body: dict[str, Any]) -> str:
    """Return the newest user text's last line: what the fake model answers to."""
    last = body["messages"][-1]["content"]
    words = last if isinstance(last, str) else last[-1]["text"]
    return str(words.splitlines()[-1])


def answer_to(words: str) -> str:
    """Return the fake model's answer to words."""
    return f"answer to: {words}"


@dataclass
class Cluster:
    """Web processes of `python -m bot` on one database behind a RoundRobin proxy."""

    fakes: tuple[Any, Any]
    database_url: str
    cwd: Path
    size: int
    settings: dict[str, str] = field(default_factory=dict)
    ports: list[int] = field(default_factory=list)
    processes: list[BotProcess | None] = field(default_factory=list)
    proxy: RoundRobin | None = None

    async def start(self) -> str:
        """Start the proxy and every process; return the address Telegram posts to."""
        self.ports = [free_port() for _ in range(self.size)]
        self.processes = [None] * self.size
        backends = [f"http://127.0.0.1:{port}" for port in self.ports]
        self.proxy = await RoundRobin(backends).start()
        await asyncio.gather(*(self.start_one(i) for i in range(self.size)))
        return f"{self.proxy.url}/telegram"

    async def start_one(self, index: int) -> BotProcess:
        """Start process index on its port; return once it has started."""
        tg, model = self.fakes
        assert self.proxy is not None
        extra = {
            "WEBHOOK_URL": self.proxy.url,
            "WEBHOOK_LISTEN": "127.0.0.1",
            "PORT": str(self.ports[index]),
            **self.settings,
        }
        bot = BotProcess(bot_environment(tg, model, self.database_url, **extra), self.cwd)
        self.processes[index] = await bot.start()
        await bot.wait_for_output("started as", timeout=120)
        await listening(self.ports[index])
        return bot

    async def kill(self, index: int) -> None:
        """Kill process index with SIGKILL, as a host that loses a machine does."""
        bot = self.processes[index]
        assert bot is not None
        bot.process.kill()
        assert await bot.exited() == -signal.SIGKILL
        (self.cwd / f"bot-{index}-killed.log").write_text(bot.output)

    async def stop(self, timeout: float = 60) -> list[tuple[int | None, str]]:  # noqa: ASYNC109
        """Stop every process with SIGTERM (killed past timeout), and the proxy.

        Return each exit code (None: it had to be killed) and output, also kept in cwd.
        """
        running = [bot for bot in self.processes if bot is not None]
        codes = await asyncio.gather(*(_stop(bot, timeout) for bot in running))
        if self.proxy is not None:
            await self.proxy.stop()
        for n, bot in enumerate(running):
            (self.cwd / f"bot-{n}.log").write_text(bot.output)
        return list(zip(codes, (bot.output for bot in running), strict=True))


async def _stop(bot: BotProcess, timeout: float) -> int | None:  # noqa: ASYNC109
    """Stop a process with SIGTERM; kill it past timeout and return None."""
    try:
        return await bot.stop(timeout=timeout)
    except TimeoutError:
        bot.process.kill()
        await bot.exited()
        return None


def think_range(scale: float) -> tuple[float, float]:
    """Return the fake model's answer time, 0.2 to 2 s, times scale."""
    return (0.2 * scale, 2.0 * scale)


def chat_texts(chat_id: int, count: int) -> list[str]:
    """Return a chat's messages, each unique in the run."""
    return [f"chat {chat_id} message {n}" for n in range(count)]
