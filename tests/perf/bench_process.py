"""Figure 6: `python -m bot` as a process: time to its first getUpdates, and its memory."""

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

from tests.builders import sqlite_url
from tests.fakes.anthropic_server import text
from tests.harness import OWNER
from tests.perf.common import Config, Row, command, median
from tests.perf.data import user_message
from tests.perf.fakes import TimedAnthropic, TimedTelegram

ROOT = Path(__file__).resolve().parents[2]
FIRST_CHAT = 30_000
WAVE = 100  # chats that write at once while memory is measured


def rss_mb(pid: int) -> float:
    """Return a process's resident set size in MiB, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


class BotProcess:
    """`python -m bot` in a subprocess, wired to the fakes through its environment."""

    def __init__(self, tg: TimedTelegram, model: TimedAnthropic, database: Path, log: Path):
        self.tg, self.model, self.database, self.log = tg, model, database, log
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> float:
        """Start the bot; return the seconds until the fake saw its first getUpdates."""
        allowed = ",".join(map(str, [OWNER, *range(FIRST_CHAT, FIRST_CHAT + WAVE)]))
        env = {
            **{
                k: v
                for k, v in os.environ.items()
                if not k.startswith(("ANTHROPIC", "TELEGRAM", "DATABASE", "LOG_LEVEL"))
            },
            "TELEGRAM_BOT_TOKEN": self.tg.token,
            "ANTHROPIC_API_KEY": self.model.api_key,
            "ALLOWED_USER_IDS": allowed,
            "DATABASE_URL": sqlite_url(self.database),
            "TELEGRAM_API_BASE_URL": self.tg.base_url,
            "ANTHROPIC_BASE_URL": self.model.base_url,
            "PYTHONPATH": str(ROOT),
        }
        self.tg.first_get_updates = None
        polls = sum(1 for method, _ in self.tg.calls if method == "getUpdates")
        with self.log.open("ab") as log:
            start = time.perf_counter()
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot", cwd=self.database.parent, env=env,
                stdout=log, stderr=asyncio.subprocess.STDOUT,
            )  # fmt: skip
        polled = asyncio.ensure_future(self.tg.wait_for_call("getUpdates", polls + 1, 120))
        exited = asyncio.ensure_future(self.process.wait())
        await asyncio.wait([polled, exited], return_when=asyncio.FIRST_COMPLETED)
        for waiter in (polled, exited):
            waiter.cancel()
        if self.tg.first_get_updates is None:
            raise RuntimeError(f"the bot exited or never polled; see {self.log}")
        return self.tg.first_get_updates - start

    async def stop(self) -> None:
        """Stop the bot like a process manager does, with SIGTERM."""
        if self.process is None or self.process.returncode is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.process.wait(), timeout=30)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()

    @property
    def pid(self) -> int:
        """Return the bot's process id."""
        assert self.process is not None
        return self.process.pid


async def send_messages(tg: TimedTelegram, count: int, first: int) -> None:
    """Send count messages in waves of one message per chat, each wave answered in full."""
    sent = 0
    while sent < count:
        wave = min(WAVE, count - sent)
        before = len(tg.sent)
        for chat in range(FIRST_CHAT, FIRST_CHAT + wave):
            tg.push_message(chat, user_message(first + sent + chat))
        await tg.wait_for_messages(count=before + wave, timeout=300)
        sent += wave


async def run(config: Config, workdir: Path) -> list[Row]:
    """Time start-ups on a new and on a migrated database, and watch memory over many turns."""
    folder = workdir / "process"
    folder.mkdir(exist_ok=True)
    log = folder / "bot.log"
    fresh: list[float] = []
    migrated: list[float] = []
    rss: dict[int, float] = {}
    async with TimedTelegram() as tg, TimedAnthropic() as model:
        model.default = text("Noted, thanks for telling me.")
        bot = BotProcess(tg, model, folder / "memory" / "bot.db", log)
        bot.database.parent.mkdir()
        try:
            fresh.append(await bot.start())
            await send_messages(tg, 1, 0)
            rss[0] = rss_mb(bot.pid)
            checkpoints = sorted({config.process_messages // 2, config.process_messages})
            done = 0
            for checkpoint in checkpoints:
                await send_messages(tg, checkpoint - done, done)
                done = checkpoint
                # The bot is another process, with no signal for "bookkeeping done": the
                # measuring protocol gives its last handlers a fixed 0.2 s.
                await asyncio.sleep(0.2)
                rss[checkpoint] = rss_mb(bot.pid)
        finally:
            await bot.stop()
        for run_number in range(config.startup_runs):
            again = BotProcess(tg, model, bot.database, log)
            try:
                migrated.append(await again.start())
            finally:
                await again.stop()
            if run_number:
                new = BotProcess(tg, model, folder / f"new{run_number}" / "bot.db", log)
                new.database.parent.mkdir()
                try:
                    fresh.append(await new.start())
                finally:
                    await new.stop()
    last = config.process_messages
    half = last // 2
    rows = [
        Row(
            key="process",
            figure="6. Start-up: `python -m bot` to first getUpdates, new SQLite file",
            value=f"{median(fresh):.2f} s",
            numbers=(median(fresh),),
            command=command("process"),
            details=(f"runs: {', '.join(f'{s:.2f}' for s in fresh)} s (includes migrations)",),
        )
    ]
    if migrated:
        rows.append(
            Row(
                key="process",
                figure="6. Start-up: `python -m bot` to first getUpdates, migrated SQLite file",
                value=f"{median(migrated):.2f} s",
                numbers=(median(migrated),),
                command=command("process"),
                details=(f"runs: {', '.join(f'{s:.2f}' for s in migrated)} s",),
            )
        )
    rows.append(
        Row(
            key="process",
            figure=f"6. Resident memory after {last:,} messages ({WAVE} chats)",
            value=(f"{rss[last]:.1f} MiB (after 1: {rss[0]:.1f}, after {half:,}: {rss[half]:.1f})"),
            numbers=(rss[last], rss[0], rss[half]),
            command=command("process", f"--process-messages {last}"),
        )
    )
    return rows
