"""Figure 6: `python -m bot` as a process, beside PTB + the SDK alone: start-up and memory."""

import asyncio
import compileall
import os
import signal
import sqlite3
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from memory.embeddings import local_model_folder
from tests.builders import sqlite_url
from tests.fakes.anthropic_server import text
from tests.harness import OWNER
from tests.perf.common import Config, Row, command, median
from tests.perf.data import user_message
from tests.perf.fakes import TimedAnthropic, TimedTelegram

ROOT = Path(__file__).resolve().parents[2]
BARE_BOT = Path(__file__).with_name("bare_bot.py")
FIRST_CHAT = 30_000
WAVE = 100  # chats that write at once while memory is measured
STARTUP_TARGET = 1.5  # seconds, to the first getUpdates
MEMORY_TARGET = 150.0  # MiB, after the first message
TICKS = os.sysconf("SC_CLK_TCK")
VECTORS_TIMEOUT = 120.0  # seconds the local model may take to embed the turns


def rss_mb(pid: int) -> float:
    """Return a process's resident set size in MiB, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def cpu_seconds(pid: int) -> float:
    """Return the CPU time a process has used so far (user and system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


class BotProcess:
    """`python -m bot` (or the reference) in a subprocess, wired to the fakes by environment."""

    def __init__(
        self,
        tg: TimedTelegram,
        model: TimedAnthropic,
        database: Path,
        log: Path,
        reference: bool = False,
    ):
        self.tg, self.model, self.database, self.log = tg, model, database, log
        self.reference = reference
        self.argv = [str(BARE_BOT)] if reference else ["-m", "bot"]
        self.process: asyncio.subprocess.Process | None = None
        self.cpu = 0.0  # CPU seconds the process had used when it first polled

    def environment(self) -> dict[str, str]:
        """Return the bot's environment: ours, less what the fakes replace."""
        allowed = ",".join(map(str, [OWNER, *range(FIRST_CHAT, FIRST_CHAT + WAVE)]))
        prefixes = ("ANTHROPIC", "TELEGRAM", "DATABASE", "LOG_LEVEL")
        return {
            **{k: v for k, v in os.environ.items() if not k.startswith(prefixes)},
            "TELEGRAM_BOT_TOKEN": self.tg.token,
            "ANTHROPIC_API_KEY": self.model.api_key,
            "ALLOWED_USER_IDS": allowed,
            "DATABASE_URL": sqlite_url(self.database),
            "TELEGRAM_API_BASE_URL": self.tg.base_url,
            "ANTHROPIC_BASE_URL": self.model.base_url,
            "PYTHONPATH": str(ROOT),
        }

    async def start(self) -> float:
        """Start the process; return the seconds until the fake saw its first getUpdates."""
        self.tg.first_get_updates = None
        polls = sum(1 for method, _ in self.tg.calls if method == "getUpdates")
        with self.log.open("ab") as log:
            start = time.perf_counter()
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, *self.argv, cwd=self.database.parent, env=self.environment(),
                stdout=log, stderr=asyncio.subprocess.STDOUT,
            )  # fmt: skip
        polled = asyncio.ensure_future(self.tg.wait_for_call("getUpdates", polls + 1, 120))
        exited = asyncio.ensure_future(self.process.wait())
        await asyncio.wait([polled, exited], return_when=asyncio.FIRST_COMPLETED)
        for waiter in (polled, exited):
            waiter.cancel()
        if self.tg.first_get_updates is None:
            raise RuntimeError(f"the bot exited or never polled; see {self.log}")
        self.cpu = cpu_seconds(self.process.pid)
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


@dataclass
class Starts:
    """Seconds to the first getUpdates, and the CPU seconds used by then, per start."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    async def add(self, process: BotProcess) -> None:
        """Start the process, note its times, and stop it unless it is to be measured on."""
        self.wall.append(await process.start())
        self.cpu.append(process.cpu)

    def value(self) -> str:
        """Return the medians, wall and CPU."""
        return f"{median(self.wall):.2f} s (CPU {median(self.cpu):.2f} s)"

    def details(self) -> tuple[str, ...]:
        """Return every run's figures."""
        return (
            f"runs: {', '.join(f'{s:.2f}' for s in self.wall)} s; CPU by then: "
            f"{', '.join(f'{s:.2f}' for s in self.cpu)} s",
        )


async def vectors_done(database: Path) -> None:
    """Wait until every stored turn has its vector, when the local model is installed."""
    if local_model_folder() is None:
        return
    query = (
        "SELECT count(*) FROM conversation_turns"
        " WHERE owner_id IS NOT NULL AND embedding_model IS NULL"
    )
    deadline = time.monotonic() + VECTORS_TIMEOUT
    while time.monotonic() < deadline:
        with sqlite3.connect(database, timeout=10) as connection:
            if connection.execute(query).fetchone()[0] == 0:
                return
        await asyncio.sleep(0.1)
    raise RuntimeError("the bot did not embed its turns in time")


async def watch_memory(process: BotProcess, tg: TimedTelegram, last: int) -> dict[int, float]:
    """Return the process's resident MiB after the first message, after half and after last."""
    rss: dict[int, float] = {}
    done = 0
    for checkpoint in sorted({1, max(1, last // 2), max(1, last)}):
        await send_messages(tg, checkpoint - done, done)
        done = checkpoint
        # The bot is another process, with no signal for "bookkeeping done": the
        # measuring protocol gives its last handlers a fixed 0.2 s, and the local model
        # (when installed) the time to embed every turn, so that its weights are counted.
        await asyncio.sleep(0.2)
        if not process.reference:
            await vectors_done(process.database)
        rss[checkpoint] = rss_mb(process.pid)
    return rss


async def run_once(process: BotProcess, starts: Starts, messages: int = 0) -> dict[int, float]:
    """Start the process, note its start, send it messages and watch its memory; stop it."""
    try:
        await starts.add(process)
        return await watch_memory(process, process.tg, messages) if messages else {}
    finally:
        await process.stop()


async def run(config: Config, workdir: Path) -> list[Row]:
    """Time start-ups of the bot and of the reference, and watch both one's memory."""
    folder = workdir / "process"
    (folder / "memory").mkdir(parents=True)
    # Our modules' bytecode, as pip writes an installed package's (the reference's libraries
    # have theirs): with PYTHONDONTWRITEBYTECODE set, as here, each start compiled ~200 files.
    for package in ("bot", "memory"):
        compileall.compile_dir(ROOT / package, quiet=1)
    log = folder / "bot.log"
    fresh, migrated, bare = Starts(), Starts(), Starts()
    async with TimedTelegram() as tg, TimedAnthropic() as model:
        model.default = text("Noted, thanks for telling me.")
        database = folder / "memory" / "bot.db"
        last = config.process_messages
        await run_once(BotProcess(tg, model, database, log), fresh)
        # Memory is watched after a restart, as a bot usually starts: the first start of
        # all also loads Alembic to create the tables (about 10 MiB more).
        rss = await run_once(BotProcess(tg, model, database, log), migrated, last)
        reference = BotProcess(tg, model, database, log, reference=True)
        bare_rss = await run_once(reference, bare, last)
        # Turn about, so that a machine busy with something else slows each alike.
        for run_number in range(1, config.startup_runs):
            await run_once(BotProcess(tg, model, database, log), migrated)
            new = folder / f"new{run_number}" / "bot.db"
            new.parent.mkdir()
            await run_once(BotProcess(tg, model, new, log), fresh)
            await run_once(BotProcess(tg, model, database, log, reference=True), bare)
    return startup_rows(fresh, migrated, bare) + memory_rows(rss, bare_rss, last)


def startup_rows(fresh: Starts, migrated: Starts, bare: Starts) -> list[Row]:
    """Return the start-up rows: the bot on a new and on a migrated file, then the reference."""
    rows = []
    for starts, database in ((fresh, "new"), (migrated, "migrated")):
        if starts.wall:
            rows.append(
                Row(
                    key="process",
                    figure=f"6. Start-up: `python -m bot` to first getUpdates, {database} SQLite"
                    " file",
                    value=starts.value(),
                    numbers=(median(starts.wall), median(starts.cpu)),
                    target=f"<= {STARTUP_TARGET:g} s",
                    met=median(starts.wall) <= STARTUP_TARGET,
                    command=command("process"),
                    details=starts.details()
                    + ((" (includes creating the tables)",) if database == "new" else ()),
                )
            )
    rows.append(
        Row(
            key="process",
            figure="6. Reference: PTB + anthropic SDK alone (tests/perf/bare_bot.py), to first"
            " getUpdates",
            value=bare.value(),
            numbers=(median(bare.wall), median(bare.cpu)),
            command=command("process"),
            details=bare.details(),
        )
    )
    return rows


def memory_rows(rss: dict[int, float], bare: dict[int, float], last: int) -> list[Row]:
    """Return the resident memory rows of the bot and of the reference."""
    half = max(1, last // 2)

    def value(figures: dict[int, float]) -> str:
        return f"{figures[1]:.1f} / {figures[last]:.1f} MiB (after {half:,}: {figures[half]:.1f})"

    return [
        Row(
            key="process",
            figure=f"6. Resident memory after the first / {last:,} messages ({WAVE} chats)",
            value=value(rss),
            numbers=(rss[1], rss[last], rss[half]),
            target=f"<= {MEMORY_TARGET:g} MiB after the first",
            met=rss[1] <= MEMORY_TARGET,
            command=command("process", f"--process-messages {last}"),
        ),
        Row(
            key="process",
            figure="6. Reference: resident memory, PTB + anthropic SDK alone, after the first"
            f" / {last:,} messages",
            value=value(bare),
            numbers=(bare[1], bare[last], bare[half]),
            command=command("process", f"--process-messages {last}"),
        ),
    ]
