"""Run `python -m bot` as a real process against the fake servers."""

import asyncio
import os
import signal
import sys
from pathlib import Path

from tests import zygote
from tests.harness import OWNER

ROOT = Path(__file__).resolve().parent.parent
# Set by tests/conftest.py: a test run forks its Python commands from a server that has
# imported the bot already (tests/zygote.py); anything else (benchmarks) starts them afresh.
FORK = False


async def spawn(
    *command: str, env: dict[str, str], cwd: Path, merge: bool = True, fresh: bool = False
):
    """Start command with its stdout piped (and stderr, merged into it or piped apart)."""
    forked = zygote.forkable(command, env) if FORK and not fresh else None
    if forked is not None:
        return await zygote.ZYGOTE.spawn(*forked, env=env, cwd=cwd, merge_stderr=merge)
    stderr = asyncio.subprocess.STDOUT if merge else asyncio.subprocess.PIPE
    return await asyncio.create_subprocess_exec(
        *command, cwd=cwd, env=env, stdout=asyncio.subprocess.PIPE, stderr=stderr
    )


def bot_environment(tg, model, database_url: str, **extra: str) -> dict[str, str]:
    """Return the environment for a bot process wired to the fakes."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "TELEGRAM"))}
    env.update(
        TELEGRAM_BOT_TOKEN=tg.token,
        ANTHROPIC_API_KEY=model.api_key,
        ALLOWED_USER_IDS=str(OWNER),
        DATABASE_URL=database_url,
        TELEGRAM_API_BASE_URL=tg.base_url,
        ANTHROPIC_BASE_URL=model.base_url,
        LOG_LEVEL="DEBUG",
        PYTHONPATH=str(ROOT),
    )
    env.update(extra)
    return env


async def run_merged(
    *command: str,
    env: dict[str, str],
    cwd: Path = ROOT,
    timeout: float = 120,  # noqa: ASYNC109
) -> tuple[int, str]:
    """Run a command until it exits; return its exit code and its stdout and stderr together."""
    process = await spawn(*command, env=env, cwd=cwd)
    output, _ = await asyncio.wait_for(process.communicate(), timeout=timeout)
    assert process.returncode is not None  # communicate() returns once the process exited
    return process.returncode, output.decode(errors="replace")


async def run_to_exit(env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
    """Run `python -m bot` until it exits by itself; return its exit code, stdout and stderr."""
    process = await spawn(sys.executable, "-m", "bot", env=env, cwd=cwd, merge=False)
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode is not None  # communicate() returns once the process exited
    return process.returncode, stdout.decode(errors="replace"), stderr.decode(errors="replace")


class BotProcess:
    """A `python -m bot` child process whose output is kept for assertions."""

    def __init__(self, env: dict[str, str], cwd: Path, *, fresh: bool = False):
        self.env = env
        self.cwd = cwd
        self.fresh = fresh  # a new interpreter even when the tests fork (see spawn)
        self._process: asyncio.subprocess.Process | None = None
        self._chunks: list[bytes] = []
        self._reader: asyncio.Task | None = None
        self._grew = asyncio.Event()

    @property
    def process(self) -> asyncio.subprocess.Process:
        """Return the started process."""
        assert self._process is not None, "start() first"
        return self._process

    @property
    def output(self) -> str:
        """Return what the process has written so far, stdout and stderr together."""
        return b"".join(self._chunks).decode(errors="replace")

    async def start(self) -> "BotProcess":
        """Spawn the process."""
        self._process = await spawn(
            sys.executable, "-m", "bot", env=self.env, cwd=self.cwd, fresh=self.fresh
        )
        # Read as it comes: a full pipe would block the bot's logging, and with it the bot.
        self._reader = asyncio.create_task(self._read_output())
        return self

    async def _read_output(self) -> None:
        """Collect the process's output until it closes."""
        assert self.process.stdout is not None  # spawned with stdout=PIPE
        while chunk := await self.process.stdout.read(65536):
            self._chunks.append(chunk)
            self._grew.set()
            self._grew = asyncio.Event()
        self._grew.set()

    async def wait_for_output(self, words: str, count: int = 1, timeout: float = 60) -> None:  # noqa: ASYNC109
        """Wait until the output says words count times (or the process ends)."""
        try:
            async with asyncio.timeout(timeout):
                while self.output.count(words) < count:
                    if self._reader is not None and self._reader.done():
                        break
                    await self._grew.wait()
        except TimeoutError:
            pass
        if self.output.count(words) < count:
            raise AssertionError(f"did not say {words!r} {count} time(s):\n{self.output}")

    async def exited(self, timeout: float = 60) -> int:  # noqa: ASYNC109
        """Wait for the process to exit by itself (after a signal sent earlier); return its code."""
        assert self.process is not None and self._reader is not None, "start() first"
        code = await asyncio.wait_for(self.process.wait(), timeout=timeout)
        await self._reader
        return code

    async def stop(self, signum: int = signal.SIGTERM, timeout: float = 60) -> int:  # noqa: ASYNC109
        """Send a signal, wait for the exit, and return the exit code."""
        if self.process.returncode is None:
            self.process.send_signal(signum)
        returncode = await asyncio.wait_for(self.process.wait(), timeout=timeout)
        if self._reader is not None:
            await self._reader
        return returncode
