"""Backups as docs/operations.md gives them: SQLite's online backup, pg_dump/pg_restore."""

import asyncio
import shutil
import sqlite3
import subprocess
import threading
from contextlib import closing
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from bot.migrations import upgrade_database_async
from memory.categories import Category
from memory.db import create_engine, create_sessionmaker
from memory.store import MemoryStore
from tests import pg
from tests.builders import sqlite_url
from tests.fakes.anthropic_server import text, tool_uses
from tests.harness import OWNER

ROUNDS, PER_ROUND = 8, 4


def online_backup(source: Path, target: Path, pages: int = -1) -> None:
    """Copy a live SQLite database the way the sqlite3 shell's .backup does."""
    with closing(sqlite3.connect(source)) as live, closing(sqlite3.connect(target)) as copy:
        live.backup(copy, pages=pages)


def memory_rows(path: Path) -> dict[str, list[tuple[int, str]]]:
    """Return every memory in a database file with its versions, after an integrity check."""
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        rows = db.execute(
            "SELECT m.id, v.version_number, v.content FROM agent_memories m "
            "LEFT JOIN agent_memory_versions v ON v.memory_id = m.id ORDER BY m.id"
        ).fetchall()
    found: dict[str, list[tuple[int, str]]] = {}
    for memory_id, number, content in rows:
        found.setdefault(memory_id, []).append((number, content))
    return found


async def active_memories(database_url: str) -> list:
    """Return the owner's active memories as a fresh process would see them."""
    engine = create_engine(database_url)
    try:
        return await MemoryStore(create_sessionmaker(engine)).list_active(OWNER)
    finally:
        await engine.dispose()


@pytest.mark.sqlite
@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_an_online_backup_taken_while_the_bot_writes_restores_every_memory(
    start_bot, database_url, tmp_path
):
    # The backup holds the lease of the chat just answered (leases are let go at the keeper's
    # next tick): the restored bot cannot tell a gone holder from a live one, so that chat
    # waits out the lease once. A short lease keeps that wait short here.
    harness = await start_bot(turn_lease_seconds=1)
    live = Path(make_url(database_url).database)
    writing = threading.Event()
    writing.set()
    snapshots: list[Path] = []

    def back_up_until_the_writes_end() -> None:
        while writing.is_set():
            snapshot = tmp_path / f"during-{len(snapshots)}.db"
            # A few pages per step, so the bot commits between steps and the backup restarts.
            online_backup(live, snapshot, pages=4)
            snapshots.append(snapshot)

    backups = asyncio.create_task(asyncio.to_thread(back_up_until_the_writes_end))
    contents = []
    for round_number in range(ROUNDS):
        batch = [f"Backup fact {round_number}-{n}: keep this" for n in range(PER_ROUND)]
        contents += batch
        harness.model.script(
            tool_uses(
                [
                    ("add_to_memory", {"content": c, "category": "context", "subject": c[:20]})
                    for c in batch
                ]
            ),
            text("Saved."),
        )
        assert await harness.say(OWNER, f"remember batch {round_number}")
    writing.clear()
    await backups

    saved = await active_memories(database_url)
    assert sorted(m.content for m in saved) == sorted(contents)
    # The bot is still running (and polling) when the backup that gets restored is taken.
    assert harness.app.running
    backup = tmp_path / "backup.db"
    online_backup(live, backup)
    await harness.stop()

    # Every copy made mid-write is a consistent database: whole memories, never half of one.
    assert snapshots
    for snapshot in snapshots:
        partial = memory_rows(snapshot)
        assert all(versions and versions[0][0] == 1 for versions in partial.values())
        assert set(partial) <= {m.id for m in saved}

    # Restore onto a new machine: the backup file becomes the bot's database.
    restored = tmp_path / "restored" / "bot.db"
    restored.parent.mkdir()
    shutil.copyfile(backup, restored)
    restored_url = sqlite_url(restored)
    await upgrade_database_async(restored_url)
    assert [(m.id, m.content) for m in await active_memories(restored_url)] == [
        (m.id, m.content) for m in saved
    ]
    bot = await start_bot(restored_url)
    harness.model.script(text("I remember everything."))
    await bot.say(OWNER, "/new")
    assert await bot.say(OWNER, "what do you know?") == ["I remember everything."]
    block = bot.system_block()
    await bot.stop()
    for memory in saved:
        assert f'[id:{memory.id}] "{memory.content[:20]}": "{memory.content}"' in block


def _run(*command: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
async def test_pg_dump_then_pg_restore_brings_back_every_memory(store, database_url, tmp_path):
    if not (shutil.which("pg_dump") and shutil.which("pg_restore")):
        missing = "pg_dump and pg_restore (the Postgres client tools) are not installed"
        if pg.in_ci():
            pytest.fail(f"{missing}; CI runs the backup test too", pytrace=False)
        pytest.skip(missing)
    first = await store.add(OWNER, "Alec is the user's boss", Category.PERSON, "Alec")
    for n in range(5):
        await store.add(OWNER, f"Project fact number {n}", Category.PROJECT)
    await store.update(OWNER, first.id, "Alec is the user's former boss")
    at_backup = await store.list_active(OWNER)

    dump = tmp_path / "bot.dump"
    # The very commands docs/operations.md gives, with the URL in the form hosts set DATABASE_URL.
    await asyncio.to_thread(
        _run, "pg_dump", "--format=custom", "--no-owner", f"--file={dump}", database_url
    )
    await store.delete(OWNER, first.id)
    await store.add(OWNER, "Written after the backup", Category.CONTEXT)
    await asyncio.to_thread(
        _run, "pg_restore", "--clean", "--if-exists", "--no-owner", f"--dbname={database_url}",
        str(dump),
    )  # fmt: skip

    restored = await active_memories(database_url)
    assert [(m.id, m.content, m.version) for m in restored] == [
        (m.id, m.content, m.version) for m in at_backup
    ]
