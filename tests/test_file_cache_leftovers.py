"""Half-written cache files a crash leaves behind are counted, and removed at start-up."""

import hashlib
import logging
import os
import time

from bot.media.file_cache import PARTIAL_STALE_SECONDS, FileCache
from tests.harness import OWNER


def leave_partial(folder, data: bytes, age: float) -> str:
    """Write a partial file as a crashed write leaves it, `age` seconds old; return its name."""
    folder.mkdir(parents=True, exist_ok=True)
    name = f".{hashlib.sha256(data).hexdigest()}.0123abcd"
    (folder / name).write_bytes(data)
    then = time.time() - age
    os.utime(folder / name, (then, then))
    return name


async def test_partial_files_count_toward_the_bound_and_stale_ones_are_dropped(tmp_path):
    folder = tmp_path / "files"
    cache = FileCache(folder, max_bytes=1_000)
    stale = leave_partial(folder, b"a" * 600, age=PARTIAL_STALE_SECONDS + 60)
    fresh = leave_partial(folder, b"b" * 100, age=0)  # another write, under way
    assert cache.total_bytes() == 700
    photo = b"c" * 300
    await cache.put(hashlib.sha256(photo).hexdigest(), photo)
    names = sorted(p.name for p in folder.iterdir())
    assert stale not in names and fresh in names
    assert cache.total_bytes() == 400


async def test_start_up_removes_what_a_crash_left_in_the_cache(start_bot, tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="bot")
    folder = tmp_path / "files"
    stale = leave_partial(folder, b"x" * 5_000, age=PARTIAL_STALE_SECONDS + 60)
    bot = await start_bot(file_cache_dir=folder)
    assert not (folder / stale).exists()
    assert "removed 1 partial file(s), 5000 bytes" in caplog.text
    assert await bot.say(OWNER, "hi") == ["OK"]
