"""Start-up loads no library the first message can do without.

Voice notes (openai) and PDFs (pypdf) load when first used; Alembic (with Mako, Pygments and
every SQLAlchemy dialect it brings) only when the database is behind the newest migration;
Postgres's dialect and driver only on Postgres. And what start-up freed goes back to the system,
and the collector's full passes, held off while `python -m bot` imports, run again once it is up.
"""

import gc
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from bot.collector import FULL_PASS_EVERY, hold_full_passes, resume_full_passes

ROOT = Path(__file__).resolve().parent.parent
# Not Pygments (Alembic's, through Mako): httpx's command line loads it whenever click is
# installed, as the embeddings extra's huggingface_hub does, whatever the bot imports.
HEAVY = ("openai", "pypdf", "alembic", "mako", "sqlalchemy.dialects.postgresql", "asyncpg")

# Start as python -m bot does on a migrated database (voice notes configured), up to the
# point where it polls, then name what loaded.
START = f"""
import sys
from bot.__main__ import migrate
from bot.app import build_application
from bot.settings import load_settings

settings = load_settings()
assert migrate(settings.database_url)
build_application(settings)
print(*sorted(name for name in {HEAVY!r} if name in sys.modules))
"""


def run(code: str, tmp_path: Path) -> str:
    """Run code in a new interpreter with the bot's settings; return what it printed."""
    environment = {
        **os.environ,
        "TELEGRAM_BOT_TOKEN": "123:abc",
        "ANTHROPIC_API_KEY": "sk-ant-x",
        "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}",
        "FILE_CACHE_DIR": str(tmp_path / "files"),
        "TRANSCRIPTION_BASE_URL": "http://127.0.0.1:9/v1",
        "TRANSCRIPTION_API_KEY": "sk-voice",
        "TRANSCRIPTION_MODEL": "whisper-1",
    }
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_starting_on_a_migrated_database_loads_none_of_the_heavy_libraries(tmp_path):
    # The first start of all creates the tables, through Alembic.
    assert "alembic" in run(START, tmp_path).split()
    assert run(START, tmp_path).split() == []


# Freed chunks below one still in use stay with glibc's allocator until malloc_trim.
TRIM = """
from pathlib import Path
from bot.collector import give_back_freed_memory

def rss_mib():
    lines = Path("/proc/self/status").read_text().splitlines()
    return next(int(line.split()[1]) for line in lines if line.startswith("VmRSS")) / 1024

chunks = [bytes(8192) for _ in range(20_000)]  # 160 MiB of malloc's own heap, not mmap
kept = chunks[-1]
del chunks
before = rss_mib()
give_back_freed_memory()
print(before - rss_mib())
"""


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="malloc_trim is glibc's",
)
def test_start_up_hands_the_allocators_freed_memory_back(tmp_path):
    assert float(run(TRIM, tmp_path)) > 100  # MiB handed back of the 160 freed


def test_full_collections_resume_after_start_up_with_its_objects_frozen():
    young, middle, full = gc.get_threshold()
    gc.collect()  # what is frozen stays: no garbage of earlier tests among it
    hold_full_passes()  # as `python -m bot` does before it imports
    made = [[] for _ in range(100)]  # as start-up makes, after the run froze its own (conftest)
    frozen = gc.get_freeze_count()
    try:
        assert gc.get_threshold()[:2] == (young, middle)  # young passes run on
        assert gc.get_threshold()[2] > 1000
        resume_full_passes()
        assert gc.get_threshold() == (young, middle, FULL_PASS_EVERY)
        assert gc.get_freeze_count() >= frozen + len(made)
    finally:
        gc.set_threshold(young, middle, full)


def test_collections_not_held_are_left_as_they_are():
    threshold, frozen = gc.get_threshold(), gc.get_freeze_count()
    resume_full_passes()
    assert gc.get_threshold() == threshold
    assert gc.get_freeze_count() == frozen
