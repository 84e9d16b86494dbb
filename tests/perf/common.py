"""What every benchmark shares: its sizes, the rows it reports, and small statistics."""

import math
import os
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

# The same variable the test suite's Postgres leg reads.
POSTGRES_URL = os.environ.get("TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
COMMAND = "python -m tests.perf"


@dataclass(frozen=True)
class Config:
    """Sizes of every benchmark; the defaults are the full run docs/performance.md reports."""

    backends: tuple[str, ...] = ("sqlite", "postgres")
    postgres_url: str = POSTGRES_URL
    # 1. bot overhead per message
    memories: tuple[int, ...] = (0, 100, 1000, 10000)
    messages: int = 200
    warmup: int = 10
    turns_per_conversation: int = 10
    # The bot and the references take turns this many times, the messages split among the
    # turns, so that a shared machine's slow spell falls on each alike.
    overhead_rounds: int = 3
    # Two Bot API calls per turn at this pace stay under AIORateLimiter's 30 calls/s.
    pace: float = 0.075
    # 2. concurrency
    chats: int = 100
    model_latency: float = 2.0
    # 3. prompt cache
    cache_turns: int = 20
    cache_memories: int = 50
    # 7. an image turn (its memories: cache_memories)
    file_repeats: int = 30
    # 4. prompt size
    token_memories: int = 1000
    render_sizes: tuple[int, ...] = (1000, 10000)
    render_repeats: int = 20
    # 5. database work per turn
    sql_memories: tuple[int, ...] = (0, 100, 1000, 10000)
    sql_history: tuple[int, ...] = (1, 20, 50)
    # 6. start-up and resident memory
    startup_runs: int = 3
    process_messages: int = 1000
    # 7. a stranger's flood in another chat
    flood_updates: int = 1000
    flood_rounds: int = 5
    # 8. reply rendering and splitting: input sizes in characters, runs per input and size
    format_sizes: tuple[int, int] = (4096, 8192)
    format_repeats: int = 9
    # 9. memory without a ceiling: the owner's memories and turns, searches, saves
    archive_sizes: tuple[int, ...] = (1000, 10000, 100000)
    archive_searches: int = 200
    archive_save_size: int = 10000
    archive_saves: int = 100
    # 11. streamed replies
    stream_runs: int = 3
    # 16. Stop and rich drafts: presses of Stop timed, table replies timed per setting
    stop_presses: int = 20
    miniapp_calls: int = 200  # per endpoint
    miniapp_views: int = 5  # page loads of each kind, after one to warm up
    rich_runs: int = 3
    stream_tokens: int = 400
    stream_first_delay: float = 1.0
    stream_duration: float = 8.0
    # 12. reminders: active rows for the due query, its runs, and reminders fired at once
    reminder_rows: int = 10000
    reminder_queries: int = 200
    reminder_fires: int = 60
    # 13. recall: the folder of LoCoMo files (None: ../shared/data/locomo beside the repo)
    recall_data: Path | None = None
    # 18. scale-out: web processes on one Postgres, chats, messages each, the fake model's
    # think time (0.2-2 s times this), and runs per size (the median is reported)
    scale_processes: tuple[int, ...] = (1, 2, 4)
    scale_chats: int = 50
    scale_messages: int = 10
    scale_think: float = 0.1
    scale_runs: int = 3

    def quick(self) -> "Config":
        """Return smaller sizes for a run of about three minutes."""
        return replace(
            self,
            memories=(0, 1000),
            messages=60,
            warmup=5,
            chats=20,
            model_latency=0.5,
            render_repeats=5,
            sql_memories=(0, 1000),
            startup_runs=1,
            process_messages=300,
            flood_rounds=3,
            format_repeats=3,
            archive_sizes=(1000, 10000),
            archive_searches=100,
            file_repeats=10,
            stream_runs=2,
        )

    def smoke(self) -> "Config":
        """Return tiny sizes that exercise every code path in a few seconds."""
        return replace(
            self,
            backends=("sqlite",),
            memories=(3,),
            messages=4,
            warmup=1,
            overhead_rounds=1,
            turns_per_conversation=3,
            pace=0.0,
            chats=3,
            model_latency=0.05,
            cache_turns=3,
            cache_memories=5,
            token_memories=20,
            render_sizes=(10, 50),
            render_repeats=2,
            sql_memories=(0, 3),
            sql_history=(1, 3),
            startup_runs=0,
            process_messages=6,
            flood_updates=20,
            flood_rounds=1,
            format_sizes=(256, 512),
            format_repeats=1,
            archive_sizes=(40,),
            archive_searches=4,
            archive_save_size=40,
            archive_saves=3,
            file_repeats=1,
            stream_runs=1,
            stop_presses=2,
            miniapp_calls=10,
            miniapp_views=1,
            rich_runs=1,
            stream_tokens=150,  # with structure, so it goes as a Rich Message, as at full size
            stream_first_delay=0.3,
            stream_duration=1.2,
            reminder_rows=50,
            reminder_queries=5,
            reminder_fires=3,
        )


@dataclass(frozen=True)
class Row:
    """One figure of the table: what was measured, its value, and how to reproduce it."""

    key: str  # the benchmark it comes from: overhead, concurrency, ..., files, streaming
    figure: str
    value: str
    numbers: tuple[float, ...]
    target: str = ""
    met: bool | None = None
    command: str = ""
    details: tuple[str, ...] = field(default=(), compare=False)


def percentile(values: Sequence[float], p: float) -> float:
    """Return the p-th percentile (0..100) by linear interpolation between closest ranks."""
    if not values:
        return math.nan
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    rank = (len(ordered) - 1) * p / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def median(values: Sequence[float]) -> float:
    """Return the median, or NaN for no values."""
    return statistics.median(values) if values else math.nan


def ms(seconds: float) -> str:
    """Format seconds as milliseconds with sensible precision."""
    value = seconds * 1000
    return f"{value:.2f} ms" if value < 10 else f"{value:.1f} ms"


def command(*options: str) -> str:
    """Return the command line that reproduces a figure."""
    return " ".join([COMMAND, *options])
