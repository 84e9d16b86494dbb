"""Walking the migrations base -> head -> base -> head keeps every row a downgrade does not drop.

When you add a migration, add an entry to SEEDS under its revision id: rows for every table
it creates, and rows that fill every column it adds (an empty dict if it adds neither). The
walk does the rest: it seeds each revision's rows on the way up, and after every step
compares each table's rows on the columns present before and after the step. Nothing may be
lost on the way up; on the way down only the reverted revision's columns and tables go, and
each revision's schema comes back as it was.
"""

import os
import sqlite3
import sys
from contextlib import closing
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import Column, MetaData, Table, inspect, select
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from alembic import command
from bot.migrations import MigrationError, alembic_config, downgrade_engine, upgrade_engine
from memory.db import create_engine
from memory.models import is_search_object
from tests import pg
from tests.builders import sqlite_url
from tests.test_engines import HEAD, ROOT, _run, _schema

AT = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
LATER = datetime(2026, 11, 21, 18, 5, tzinfo=UTC)
TEXT = [{"type": "text", "text": "Alec is my boss by the way"}]
VERSIONS = "SELECT version_num FROM alembic_version"
# Each table's column names and its rows in primary key order.
Contents = dict[str, tuple[tuple[str, ...], list[tuple]]]

# Revision -> table -> rows inserted right after upgrading to that revision, with its columns.
SEEDS: dict[str, dict[str, list[dict]]] = {
    "0001": {
        "agent_memories": [
            {"id": "alec0001", "owner_id": 111, "category": "person", "subject": "Alec",
             "created_at": AT, "deleted_at": None},
            {"id": "gone0001", "owner_id": 111, "category": "preference", "subject": None,
             "created_at": AT, "deleted_at": LATER},
        ],
        "agent_memory_versions": [
            {"id": 1, "memory_id": "alec0001", "version_number": 1,
             "content": "Alec is the user's boss", "source_conversation_id": 1, "created_at": AT},
            {"id": 2, "memory_id": "gone0001", "version_number": 1,
             "content": "The user likes green tea", "source_conversation_id": None,
             "created_at": AT},
        ],
        "conversations": [
            {"id": 1, "chat_id": 111, "owner_id": 111, "memory_block": "## People\n- Alec",
             "summary": "They talked about Alec.", "started_at": AT, "last_activity_at": LATER,
             "ended_at": LATER},
        ],
        "conversation_turns": [
            {"id": 1, "conversation_id": 1, "role": "user", "content": TEXT, "created_at": AT},
            {"id": 2, "conversation_id": 1, "role": "assistant",
             "content": [{"type": "text", "text": "Noted."}], "created_at": AT},
        ],
    },
    "0002": {
        "agent_memories": [
            {"id": "sara0002", "owner_id": -500, "category": "person", "subject": "Sarah",
             "created_at": LATER, "deleted_at": None},
        ],
        "agent_memory_versions": [
            {"id": 3, "memory_id": "sara0002", "version_number": 1,
             "content": "Sarah is on the Platform team", "source_conversation_id": None,
             "created_at": LATER},
            {"id": 4, "memory_id": "alec0001", "version_number": 2,
             "content": "Alec is the user's manager", "source_conversation_id": 1,
             "created_at": LATER},
        ],
        "agent_memory_changes": [
            {"id": 1, "owner_id": 111, "memory_id": "alec0001", "kind": "updated",
             "version_number": 2, "created_at": LATER, "undone_at": None},
            {"id": 2, "owner_id": -500, "memory_id": "sara0002", "kind": "added",
             "version_number": 1, "created_at": LATER, "undone_at": LATER},
        ],
        "owner_settings": [
            {"owner_id": 111, "memory_enabled": False, "updated_at": LATER},
        ],
    },
    "0003": {
        "conversations": [
            {"id": 2, "chat_id": -500, "owner_id": -500, "memory_block": "",
             "summary": "Earlier: Sarah moved teams.", "started_at": LATER,
             "last_activity_at": LATER, "ended_at": None, "summary_through_turn_id": 3},
        ],
        "conversation_turns": [
            {"id": 3, "conversation_id": 2, "role": "user", "content": TEXT,
             "created_at": LATER, "tokens": 12, "update_id": 9001},
            {"id": 4, "conversation_id": 1, "role": "user", "content": TEXT,
             "created_at": LATER, "tokens": 7, "update_id": None},
        ],
    },
    "0004": {
        "agent_memory_blocks": [
            {"owner_id": 111, "block": "## People\n- [alec0001] Alec: Alec is the user's manager",
             "rendered_at": LATER},
        ],
    },
    "0005": {
        "conversations": [
            {"id": 3, "chat_id": -1001, "thread_id": 7, "owner_id": -1001, "memory_block": "",
             "summary": None, "started_at": LATER, "last_activity_at": LATER, "ended_at": None,
             "summary_through_turn_id": None},
        ],
        "conversation_turns": [
            {"id": 5, "conversation_id": 3, "role": "user", "content": TEXT,
             "created_at": LATER, "tokens": 9, "update_id": 9002,
             "message_key": "-1001:55:1763900000", "sender_id": 111},
        ],
    },
    "0006": {
        "agent_memories": [
            {"id": "pin00006", "owner_id": 111, "category": "project", "subject": "Falcon",
             "created_at": LATER, "deleted_at": None, "pinned": True, "tokens": 14,
             "changed_at": LATER, "subject_key": "falcon"},
        ],
        "agent_memory_versions": [
            {"id": 5, "memory_id": "pin00006", "version_number": 1,
             "content": "Falcon launches in May", "source_conversation_id": 3,
             "created_at": LATER},
        ],
        "conversation_turns": [
            {"id": 6, "conversation_id": 3, "role": "assistant",
             "content": [{"type": "text", "text": "Falcon launches in May."}],
             "created_at": LATER, "tokens": 6, "update_id": None, "message_key": None,
             "sender_id": None, "search_text": "on1001zfalcon on1001zlaunches in may",
             "owner_id": -1001},
        ],
    },
    "0007": {
        "reminders": [
            {"id": 1, "owner_id": 111, "chat_id": 111, "thread_id": None, "text": "call Sarah",
             "check_in": False, "zone": "Europe/Berlin", "start_local": LATER.replace(tzinfo=None),
             "start_at": None, "rule": "FREQ=WEEKLY", "until_local": None, "count": None,
             "next_fire_at": LATER, "state": "active", "created_at": LATER, "updated_at": LATER},
        ],
        "reminder_fires": [
            {"id": 1, "reminder_id": 1, "scheduled_at": LATER, "outcome": "sent",
             "claimed_at": LATER, "sent_at": LATER, "message_id": 77},
        ],
        "owner_zones": [{"owner_id": 111, "zone": "Europe/Berlin", "updated_at": LATER}],
    },
    # 0008 repairs earlier shapes of 0006; on the current shape it changes nothing.
    "0008": {},
    # 0009 indexes every memory and turn again (search_text is compared by no walk).
    "0009": {},
    "0010": {
        "conversation_turns": [
            {"id": 7, "conversation_id": 3, "role": "user", "content": TEXT,
             "created_at": LATER, "tokens": 9, "update_id": 9003,
             "message_key": "-1001:56:1763900000", "sender_id": 222, "search_text": None,
             "owner_id": -1001, "said_by": {"speaker": "Bob"}},
        ],
    },
    "0011": {
        "agent_memory_blocks": [
            {"owner_id": -500, "block": '## Your Memory\n\n### People\n- [id:sara0002] "Sarah"',
             "rendered_at": LATER, "memory_ids": ["sara0002"]},
        ],
    },
    "0012": {
        "turn_leases": [
            {"chat_id": 111, "holder": "host:1:abcd", "expires_at": LATER, "incarnation": 7},
        ],
    },
    # A summary_changes list would go back into its summary's text on the way down, which the
    # walk counts as a changed row: tests/test_migrations.py checks that round trip instead.
    "0013": {
        "conversation_turns": [
            {"id": 8, "conversation_id": 3, "role": "user",
             "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "Done"}],
             "created_at": LATER, "tokens": 3, "update_id": None, "message_key": None,
             "sender_id": None, "search_text": None, "owner_id": -1001, "said_by": None,
             "memory_writes": [{"tool_use_id": "toolu_1", "kind": "added",
                                "memory_id": "pin00006", "subject": "Falcon",
                                "content": "Falcon launches in May"}]},
        ],
    },
    "0014": {
        "agent_memory_batches": [
            {"id": 1, "owner_id": 111, "kind": "tidy", "state": "applied", "automatic": True,
             "plan": [{"action": "archive", "memory_id": "pin00006"}], "digest": "ab" * 32,
             "tokens": 1200, "reverts_id": None, "created_at": AT, "undone_at": LATER},
        ],
        "agent_memory_batch_changes": [
            {"id": 1, "batch_id": 1, "memory_id": "pin00006", "before_version": 1,
             "before_deleted": False, "after_version": 1, "after_deleted": True,
             "reason": "The launch was in May"},
        ],
    },
    "0015": {
        "memory_proposals": [
            {"id": 1, "owner_id": -1001, "conversation_id": 3, "turn_id": 8,
             "content": "Ann's boss is Alec", "category": "person", "subject": "Alec",
             "status": "declined", "created_at": AT, "answered_at": LATER, "memory_id": None},
        ],
        "pending_notes": [
            {"id": 1, "conversation_id": 3, "owner_id": -1001,
             "text": "[The user tapped No on your memory question.]", "created_at": LATER,
             "turn_id": None},
        ],
    },
    "0016": {
        "web_uses": [
            {"owner_id": -1001, "day": date(2026, 11, 21), "searches": 3, "fetches": 1},
        ],
    },
    "0017": {
        "conversation_turns": [
            {"id": 9, "conversation_id": 3, "role": "assistant",
             "content": [{"type": "text", "text": "Falcon launches in May."}],
             "created_at": LATER, "tokens": 6, "update_id": None, "message_key": None,
             "sender_id": None, "search_text": None, "owner_id": -1001, "said_by": None,
             "memory_writes": None, "cited_memory_ids": ["pin00006"]},
        ],
    },
    "0018": {
        "reminder_fires": [
            {"id": 2, "reminder_id": 1, "scheduled_at": AT, "outcome": "claimed",
             "claimed_at": LATER, "sent_at": None, "message_id": None,
             "lease_until": LATER, "attempts": 2, "failed_at": LATER},
        ],
    },
    "0019": {
        "conversation_turns": [
            {"id": 10, "conversation_id": 3, "role": "user",
             "content": [{"type": "text", "text": "When?"}],
             "created_at": LATER, "tokens": 2, "update_id": 12, "message_key": "-1001:7:1763900000",
             "sender_id": 111, "search_text": None, "owner_id": -1001, "said_by": None,
             "memory_writes": None, "cited_memory_ids": None,
             "user_order": 1763900000 * 2**31 + 7},
        ],
        "bot_processes": [
            {"holder": "vm:4242:abcd1234", "host": "vm", "pid": 4242, "started": 123456,
             "expires_at": LATER},
        ],
    },
    "0020": {
        "conversation_turns": [
            {"id": 11, "conversation_id": 3, "role": "user",
             "content": [{"type": "text", "text": "[Friday; from Bob]\nWe camped by the lake."}],
             "created_at": LATER, "tokens": 6, "update_id": None, "message_key": None,
             "sender_id": None, "search_text": None, "owner_id": -1001,
             "said_by": {"speaker": "Bob"}, "memory_writes": None, "cited_memory_ids": None},
        ],
    },
    "0021": {
        "conversation_turns": [
            {"id": 12, "conversation_id": 3, "role": "assistant",
             "content": [{"type": "text", "text": "The lake sounds lovely."}],
             "created_at": LATER, "tokens": 5, "update_id": None, "message_key": None,
             "sender_id": None, "search_text": None, "owner_id": -1001, "said_by": None,
             "memory_writes": None, "cited_memory_ids": None, "user_order": None,
             "embedding": bytes(range(8)), "embedding_model": "all-MiniLM-L6-v2"},
        ],
    },
    "0022": {
        "memory_proposals": [
            {"id": 2, "owner_id": -1001, "conversation_id": 3, "turn_id": 12,
             "content": "The team meets on Thursdays", "category": "context",
             "subject": "meeting day", "status": "pending", "created_at": LATER,
             "answered_at": None, "memory_id": None, "question_id": 2, "target_id": None,
             "previous": None, "about": None, "chosen": True},
        ],
    },
    "0024": {
        "job_claims": [
            {"name": "retention", "period": "2026-11-20", "claimed_by": "vm:4242:abcd1234",
             "lease_until": AT, "done_at": LATER},
        ],
    },
}  # fmt: skip

REVISIONS = [
    script.revision
    for script in reversed(list(ScriptDirectory.from_config(alembic_config()).walk_revisions()))
]


def _contents(connection: Connection) -> Contents:
    """Return each table's column names and its rows in primary key order."""
    inspector = inspect(connection)
    # The full-text indexes hold what the other tables hold, in the engine's own form.
    names = [
        name
        for name in inspector.get_table_names()
        if name != "alembic_version" and not is_search_object(name)
    ]
    if not names:
        return {}
    # The columns with their types and the primary keys, in one query each for all tables on
    # Postgres: reading the rows needs no indexes or constraints, which autoloading reads too.
    columns = inspector.get_multi_columns(filter_names=names)
    keys = inspector.get_multi_pk_constraint(filter_names=names)
    contents = {}
    for name in names:
        table = Table(
            name, MetaData(), *(Column(c["name"], c["type"]) for c in columns[(None, name)])
        )
        # A turn's search text is its words in the index's spelling, which 0009 changes.
        kept = [
            c for c in table.columns if c.name != "search_text" and not is_search_object(c.name)
        ]
        order = [table.c[c] for c in keys[(None, name)]["constrained_columns"]]
        rows = connection.execute(select(*kept).order_by(*order))
        contents[name] = (tuple(rows.keys()), [tuple(row) for row in rows])
    return contents


def _seed(connection: Connection, tables: dict[str, list[dict]]) -> None:
    """Insert rows into tables as they are at the current revision."""
    for name, rows in tables.items():
        connection.execute(Table(name, MetaData(), autoload_with=connection).insert(), rows)


def _contents_and_schema(connection: Connection) -> tuple[Contents, dict]:
    """Return the database's contents and its schema, leaving out Alembic's own table."""
    schema = _schema(connection)
    schema.pop("alembic_version", None)
    return _contents(connection), schema


async def _read(engine: AsyncEngine) -> tuple[Contents, dict]:
    """Return the database's contents and its schema, leaving out Alembic's own table."""
    async with engine.connect() as connection:
        return await connection.run_sync(_contents_and_schema)


async def _read_contents(engine: AsyncEngine) -> Contents:
    """Return the database's contents."""
    async with engine.connect() as connection:
        return await connection.run_sync(_contents)


async def _versions(engine: AsyncEngine) -> list[str]:
    """Return the revisions Alembic's table records."""
    async with engine.connect() as connection:
        return list((await connection.exec_driver_sql(VERSIONS)).scalars())


def _assert_kept(before: dict, after: dict, step: str, *, upgrade: bool) -> None:
    """Check that every table left after a step has the same rows on the columns it kept."""
    for name, (columns, rows) in before.items():
        if name not in after:
            assert not upgrade, f"{step} dropped table {name}"
            continue
        after_columns, after_rows = after[name]
        kept = [columns.index(c) for c in columns if c in after_columns]
        if upgrade:
            assert len(kept) == len(columns), f"{step} dropped columns of {name}"
        moved = [after_columns.index(columns[i]) for i in kept]
        assert [tuple(row[i] for i in moved) for row in after_rows] == [
            tuple(row[i] for i in kept) for row in rows
        ], f"{step} changed the rows of {name}"


async def _walk_up(engine: AsyncEngine, schemas: dict[str, dict]) -> Contents:
    """Upgrade one revision at a time from base, seeding each, checking nothing is lost.

    Return the contents at head. Each step's contents before it are the previous step's after
    its seeding: nothing runs in between, so they are not read twice.
    """
    before, schema = await _read(engine)
    schemas.setdefault("base", schema)
    for revision in REVISIONS:
        await upgrade_engine(engine, revision)
        after, schema = await _read(engine)
        assert await _versions(engine) == [revision]
        _assert_kept(before, after, f"upgrade to {revision}", upgrade=True)
        assert schema == schemas.setdefault(revision, schema)
        async with engine.begin() as connection:
            await connection.run_sync(_seed, SEEDS[revision])
        before = await _read_contents(engine)
        empty = sorted(name for name, (_, rows) in before.items() if not rows)
        assert not empty, f"add rows for {empty} to SEEDS[{revision!r}]"
    return before


async def _walk_down(engine: AsyncEngine, schemas: dict[str, dict], before: Contents) -> None:
    """Downgrade one revision at a time from head (before) to base; only reverted parts go."""
    for revision, target in zip(
        reversed(REVISIONS), [*reversed(REVISIONS[:-1]), "base"], strict=True
    ):
        await downgrade_engine(engine, target)
        after, schema = await _read(engine)
        assert await _versions(engine) == ([] if target == "base" else [target])
        _assert_kept(before, after, f"downgrade of {revision}", upgrade=False)
        assert schema == schemas[target], f"downgrade of {revision} left another schema"
        before = after


async def _seed_up(url: str) -> None:
    """Upgrade from base one revision at a time, seeding each, checking nothing (the walk does)."""
    engine = create_engine(url)
    try:
        for revision in REVISIONS:
            await upgrade_engine(engine, revision)
            async with engine.begin() as connection:
                await connection.run_sync(_seed, SEEDS[revision])
    finally:
        await engine.dispose()


@pytest.fixture(scope="module")
def seeded_sqlite(tmp_path_factory) -> Path:
    """Return a SQLite file at head holding every revision's seed rows, made once per worker."""
    path = tmp_path_factory.mktemp("seeded") / "bot.db"
    pg.run(_seed_up, sqlite_url(path))
    return path


def _copy_of(seeded: Path, url: str) -> None:
    """Copy the seeded SQLite file to the database file the URL names."""
    # The online backup API copies a consistent image, WAL or not.
    with (
        closing(sqlite3.connect(seeded)) as source,
        closing(sqlite3.connect(str(make_url(url).database))) as copy,
    ):
        source.backup(copy)


async def _foreign_keys_enforced(engine: AsyncEngine) -> bool:
    """Tell whether the engine's connections enforce foreign keys (always so on Postgres)."""
    if engine.dialect.name != "sqlite":
        return True
    async with engine.connect() as connection:
        return (await connection.exec_driver_sql("PRAGMA foreign_keys")).scalar() == 1


def test_every_revision_has_seed_rows():
    assert list(SEEDS) == REVISIONS


async def test_base_head_base_head_then_the_alembic_command_line_keep_every_row_not_dropped(
    empty_database_url,
):
    # One database walks down and up and is downgraded by the command line: each walk up
    # seeds the same rows, so the command line starts from what a single walk up leaves.
    engine = create_engine(empty_database_url)
    schemas: dict[str, dict] = {}
    try:
        at_head = await _walk_up(engine, schemas)
        await _walk_down(engine, schemas, at_head)
        at_head = await _walk_up(engine, schemas)
        # The migrations ran on the pool's one SQLite connection; it must enforce them again.
        assert await _foreign_keys_enforced(engine)

        env = {**os.environ, "PYTHONPATH": str(ROOT), "DATABASE_URL": empty_database_url}
        code, output = await _run(sys.executable, "-m", "alembic", "downgrade", "0002", env=env)
        assert code == 0, output
        after = await _read_contents(engine)
        later_tables = {
            "agent_memory_blocks", "reminders", "reminder_fires", "owner_zones", "turn_leases",
            "agent_memory_batches", "agent_memory_batch_changes",
            "memory_proposals", "pending_notes",
            "web_uses", "bot_processes", "job_claims",
        }  # fmt: skip
        assert set(after) == set(at_head) - later_tables
        _assert_kept(at_head, after, "alembic downgrade 0002", upgrade=False)
    finally:
        await engine.dispose()


@pytest.mark.parametrize("empty_database_url", ["sqlite"], indirect=True)
async def test_alembic_refuses_a_sqlite_connection_that_enforces_foreign_keys(
    empty_database_url, seeded_sqlite
):
    _copy_of(seeded_sqlite, empty_database_url)
    engine = create_engine(empty_database_url)
    try:
        before = await _read(engine)
        async with engine.connect() as connection:
            with pytest.raises(MigrationError, match="foreign keys are on"):
                await connection.run_sync(
                    lambda sync: command.downgrade(alembic_config(connection=sync), "0002")
                )
        assert await _read(engine) == before
    finally:
        await engine.dispose()


@pytest.mark.parametrize("empty_database_url", ["sqlite"], indirect=True)
async def test_a_row_left_pointing_nowhere_stops_the_migration_and_changes_nothing(
    empty_database_url, seeded_sqlite
):
    _copy_of(seeded_sqlite, empty_database_url)
    engine = create_engine(empty_database_url)
    try:
        # The sqlite3 shell enforces no foreign keys, so a hand edit can strand a turn.
        with closing(sqlite3.connect(make_url(empty_database_url).database)) as db:
            db.execute("DELETE FROM conversations WHERE id = 2")
            db.commit()
        before = await _read(engine)
        with pytest.raises(MigrationError, match=r"conversation_turns row 3 -> conversations"):
            await downgrade_engine(engine, "0003")
        assert await _read(engine) == before
        assert await _versions(engine) == [HEAD]
        assert await _foreign_keys_enforced(engine)
    finally:
        await engine.dispose()
