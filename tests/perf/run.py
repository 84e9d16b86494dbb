"""Run the benchmarks and print one table: figure, value, target, met?, command."""

import argparse
import asyncio
import contextlib
import logging
import math
import os
import platform
import sqlite3
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path

import asyncpg

from bot.log_setup import configure_logging
from tests.perf import (
    bench_archive,
    bench_cache,
    bench_concurrency,
    bench_files,
    bench_flood,
    bench_format,
    bench_miniapp,
    bench_native,
    bench_overhead,
    bench_process,
    bench_prompt,
    bench_recall,
    bench_reminders,
    bench_scale,
    bench_sources,
    bench_sql,
    bench_streaming,
    bench_tidy,
    bench_voice,
    bench_web,
)
from tests.perf.botrun import postgres_available
from tests.perf.common import Config, Row
from tests.perf.remote import RemoteFakes

Benchmark = Callable[..., Awaitable[list[Row]]]
BENCHMARKS: dict[str, Benchmark] = {
    "overhead": bench_overhead.run,
    "concurrency": bench_concurrency.run,
    "cache": bench_cache.run,
    "prompt": bench_prompt.run,
    "sql": bench_sql.run,
    "process": bench_process.run,
    "flood": bench_flood.run,
    "format": bench_format.run,
    "archive": bench_archive.run,
    "files": bench_files.run,
    "streaming": bench_streaming.run,
    "reminders": bench_reminders.run,
    "voice": bench_voice.run,
    "tidy": bench_tidy.run,
    "web": bench_web.run,
    "sources": bench_sources.run,
    "native": bench_native.run,
    "recall": bench_recall.run,
    "miniapp": bench_miniapp.run,
    "scale": bench_scale.run,
}
# These talk to the fakes in their own process; one such process serves the whole run.
REMOTE = {"overhead", "concurrency", "flood", "streaming"}


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(",") if part.strip())


def _names(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def parse_args(argv: Sequence[str] | None) -> tuple[list[str], Config, argparse.Namespace]:
    """Read the benchmarks to run and their sizes from the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m tests.perf", description="Measure what a turn of the bot costs."
    )
    parser.add_argument(
        "benchmarks", nargs="*", choices=[[], *BENCHMARKS], metavar="BENCHMARK",
        help=f"any of {', '.join(BENCHMARKS)} (default: all)",
    )  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="smaller sizes, about three minutes")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, a few seconds")
    parser.add_argument("--markdown", type=Path, help="also write the table as Markdown here")
    parser.add_argument("--details", action="store_true", help="print each figure's details")
    parser.add_argument("--backends", type=_names, help="sqlite,postgres")
    parser.add_argument("--postgres-url", help="server to create a scratch database on")
    parser.add_argument("--memories", type=_ints, help="memory counts for overhead")
    parser.add_argument("--messages", type=int, help="measured messages per overhead run")
    parser.add_argument("--turns-per-conversation", type=int)
    parser.add_argument("--overhead-rounds", type=int, help="turns of the bot and references")
    parser.add_argument("--pace", type=float, help="seconds between overhead messages")
    parser.add_argument("--chats", type=int, help="chats sending at once for concurrency")
    parser.add_argument("--model-latency", type=float, help="fake model latency, seconds")
    parser.add_argument("--cache-turns", type=int)
    parser.add_argument("--cache-memories", type=int)
    parser.add_argument("--sql-memories", type=_ints)
    parser.add_argument("--sql-history", type=_ints)
    parser.add_argument("--startup-runs", type=int)
    parser.add_argument("--process-messages", type=int)
    parser.add_argument("--flood-updates", type=int, help="stranger updates per flood")
    parser.add_argument("--flood-rounds", type=int, help="rounds with and without a flood")
    parser.add_argument("--archive-sizes", type=_ints, help="memories and turns of the owner")
    parser.add_argument("--file-repeats", type=int, help="conversations per kind for files")
    parser.add_argument("--stream-runs", type=int, help="replies timed for streaming")
    parser.add_argument("--stream-tokens", type=int, help="tokens of the streamed reply")
    parser.add_argument("--stream-first-delay", type=float, help="seconds to the first token")
    parser.add_argument("--stream-duration", type=float, help="seconds over which the rest comes")
    parser.add_argument("--data", type=Path, help="folder of LoCoMo files for recall")
    parser.add_argument("--scale-processes", type=_ints, help="web process counts for scale")
    parser.add_argument("--scale-chats", type=int, help="chats for scale")
    parser.add_argument("--scale-messages", type=int, help="messages per chat for scale")
    parser.add_argument("--scale-runs", type=int, help="runs per process count for scale")
    args = parser.parse_args(argv)
    config = Config()
    if args.quick:
        config = config.quick()
    if args.smoke:
        config = config.smoke()
    overrides = {
        name: getattr(args, name)
        for name in (
            "backends", "postgres_url", "memories", "messages", "turns_per_conversation",
            "overhead_rounds",
            "pace", "chats", "model_latency", "cache_turns", "cache_memories", "sql_memories",
            "sql_history", "startup_runs", "process_messages", "flood_updates", "flood_rounds",
            "archive_sizes", "file_repeats", "stream_runs", "stream_tokens", "stream_first_delay",
            "stream_duration", "scale_processes", "scale_chats", "scale_messages", "scale_runs",
        )
        if getattr(args, name) is not None
    }  # fmt: skip
    if args.data is not None:
        overrides["recall_data"] = args.data
    return list(args.benchmarks or BENCHMARKS), replace(config, **overrides), args


def hardware() -> str:
    """Describe the processor and memory of this machine."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f", {kib / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return f"{cpu}, {os.cpu_count()} cores{memory}"


async def machine(config: Config) -> str:
    """Describe the machine and the software the figures were measured on."""
    postgres = "not used"
    if "postgres" in config.backends:
        try:
            connection = await asyncpg.connect(config.postgres_url, timeout=3)
            postgres = await connection.fetchval("SHOW server_version")
            await connection.close()
        except (OSError, asyncpg.PostgresError, TimeoutError):
            postgres = "unreachable"
    return (
        f"{hardware()}; load average {os.getloadavg()[0]:.2f} at the start; "
        f"{platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}; SQLite {sqlite3.sqlite_version}; "
        f"PostgreSQL {postgres}"
    )


async def run_benchmarks(
    names: Sequence[str], config: Config, *, progress: bool = False
) -> list[Row]:
    """Run the named benchmarks in a scratch folder; return their rows in order."""
    if "postgres" in config.backends and not await postgres_available(config.postgres_url):
        print(f"Postgres at {config.postgres_url} is unreachable: SQLite only", file=sys.stderr)
        config = replace(config, backends=tuple(b for b in config.backends if b != "postgres"))
    rows: list[Row] = []
    async with contextlib.AsyncExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="membot-perf-")))
        fakes = await stack.enter_async_context(RemoteFakes()) if REMOTE & set(names) else None
        for name in names:
            started = time.perf_counter()
            if progress:
                print(f"running {name} ...", file=sys.stderr, flush=True)
            extra = (fakes,) if name in REMOTE else ()
            rows += await BENCHMARKS[name](config, folder, *extra)
            if progress:
                print(f"  {name} took {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return rows


def _met(row: Row) -> str:
    return "" if row.met is None else ("yes" if row.met else "NO")


def text_table(rows: Sequence[Row], details: bool = False) -> str:
    """Lay the rows out as an aligned plain-text table."""
    header = ("figure", "value", "target", "met?", "command")
    cells = [header] + [(r.figure, r.value, r.target, _met(r), r.command) for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = []
    for index, row in enumerate(cells):
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
        if index == 0:
            lines.append("  ".join("-" * width for width in widths))
        elif details:
            lines += [f"    {line}" for line in rows[index - 1].details]
    return "\n".join(line.rstrip() for line in lines)


def markdown_table(rows: Sequence[Row]) -> str:
    """Render the rows as a Markdown table for docs/performance.md."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = ["| figure | value | target | met? | command |", "| --- | --- | --- | --- | --- |"]
    for r in rows:
        command = f"`{r.command}`" if r.command else ""
        lines.append(
            f"| {cell(r.figure)} | {cell(r.value)} | {cell(r.target) or '—'} | "
            f"{_met(r) or '—'} | {command} |"
        )
    return "\n".join(lines)


def quiet_production_logging() -> None:
    """Log as `python -m bot` does at INFO, into /dev/null, so logging costs what it costs."""
    configure_logging("INFO", [])
    handler = logging.getLogger().handlers[0]
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(open(os.devnull, "w"))  # lives as long as the process


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmarks from the command line and print the table."""
    names, config, args = parse_args(argv)
    quiet_production_logging()

    async def everything() -> tuple[str, list[Row]]:
        return await machine(config), await run_benchmarks(names, config, progress=True)

    started = time.perf_counter()
    where, rows = asyncio.run(everything())
    elapsed = time.perf_counter() - started
    print()
    print(text_table(rows, details=args.details))
    print()
    markdown = (
        f"Measured on: {where}. Whole run: {elapsed:.0f} s, load average "
        f"{os.getloadavg()[0]:.2f} at the end.\n\n{markdown_table(rows)}\n"
    )
    print(markdown)
    if args.markdown:
        args.markdown.write_text(markdown)
    recall = bench_recall.last_line(rows)
    if recall:
        print(recall)  # the recall benchmark's contract: its figure is the last line
    broken = [r.figure for r in rows if any(not math.isfinite(n) for n in r.numbers)]
    return 1 if broken else 0
