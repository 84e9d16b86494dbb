"""SQLite and Postgres alike: the same schema, concurrent writers, concurrent upgrades."""

import asyncio
import os
import sys
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import inspect
from sqlalchemy import text as sql
from sqlalchemy.exc import IntegrityError

from bot.migrations import alembic_config, upgrade_database_async
from memory.categories import Category
from memory.db import create_engine, create_sessionmaker
from memory.models import is_search_object
from memory.store import MemoryStore
from tests.builders import sqlite_url
from tests.process import run_merged as _run

ROOT = Path(__file__).resolve().parent.parent
OWNER = 111
WRITERS = 24
HEAD = ScriptDirectory.from_config(alembic_config()).get_current_head()


# --- the migrations give the same schema on both engines ----------------------------------


def _schema(connection) -> dict:
    """Describe every table in engine-neutral terms: columns, keys, constraints, indexes."""
    inspector = inspect(connection)
    # The full-text indexes are an FTS5 table on one engine and a tsvector on the other.
    tables = sorted(t for t in inspector.get_table_names() if not is_search_object(t))
    if not tables:
        return {}
    # One query per kind for all tables (Postgres), not one per kind and table.
    found = {
        kind: {name: value for (_, name), value in reflect(filter_names=tables).items()}
        for kind, reflect in (
            ("columns", inspector.get_multi_columns),
            ("primary key", inspector.get_multi_pk_constraint),
            ("foreign keys", inspector.get_multi_foreign_keys),
            ("unique", inspector.get_multi_unique_constraints),
            ("checks", inspector.get_multi_check_constraints),
            ("indexes", inspector.get_multi_indexes),
        )
    }
    schema = {}
    for table in tables:
        columns = {}
        for column in found["columns"][table]:
            if is_search_object(column["name"]):
                continue
            generic = column["type"].as_generic()
            columns[column["name"]] = (
                type(generic).__name__,
                getattr(generic, "length", None),
                column["nullable"],
            )
        primary_key = found["primary key"][table]
        schema[table] = {
            "columns": columns,
            "primary key": (primary_key["name"], tuple(primary_key["constrained_columns"])),
            "foreign keys": sorted(
                (
                    fk["name"],
                    tuple(fk["constrained_columns"]),
                    fk["referred_table"],
                    tuple(fk["referred_columns"]),
                    (fk.get("options") or {}).get("ondelete"),
                )
                for fk in found["foreign keys"][table]
            ),
            "unique": sorted(
                (uc["name"], tuple(uc["column_names"])) for uc in found["unique"][table]
            ),
            "checks": sorted(ck["name"] for ck in found["checks"][table]),
            "indexes": sorted(
                (ix["name"], tuple(ix["column_names"]), bool(ix["unique"]))
                for ix in found["indexes"][table]
                # Postgres also lists the index behind each unique constraint.
                if not ix.get("duplicates_constraint") and not is_search_object(ix["name"])
            ),
        }
    return schema


async def _migrated_schema(url: str) -> dict:
    await upgrade_database_async(url)
    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(_schema)
    finally:
        await engine.dispose()


@pytest.mark.parametrize("empty_database_url", ["postgres"], indirect=True)
async def test_migrations_build_the_same_schema_on_sqlite_and_postgres(
    empty_database_url, tmp_path
):
    on_sqlite = await _migrated_schema(sqlite_url(tmp_path / "schema.db"))
    on_postgres = await _migrated_schema(empty_database_url)
    assert {"agent_memories", "agent_memory_versions", "alembic_version"} <= set(on_sqlite)
    assert on_postgres == on_sqlite


# --- concurrent writers of one memory -------------------------------------------------------


async def test_concurrent_updates_of_one_memory_each_get_their_own_version(store, database_url):
    item = await store.add(OWNER, "Sarah is on the Platform team", Category.PERSON, "Sarah")
    # A second engine stands for a second process writing to the same database.
    other_engine = create_engine(database_url)
    stores = [store, MemoryStore(create_sessionmaker(other_engine))]
    contents = [f"Sarah moved to team number {n:02d}" for n in range(WRITERS)]
    try:
        results = await asyncio.gather(
            *(stores[n % 2].update(OWNER, item.id, c) for n, c in enumerate(contents))
        )
    finally:
        await other_engine.dispose()

    history = await store.history(OWNER, item.id)
    assert [v.version_number for v in history] == list(range(1, WRITERS + 2))
    assert sorted(v.content for v in history[1:]) == sorted(contents)
    # Each writer saw the version it replaced, and no two replaced the same one.
    assert sorted(before.version for before, _ in results) == list(range(1, WRITERS + 1))
    assert all(after.version == before.version + 1 for before, after in results)
    current = await store.find(OWNER, item.id)
    assert current.version == WRITERS + 1 and current.content == history[-1].content


async def test_an_invalid_update_fails_at_once_instead_of_retrying(store):
    item = await store.add(OWNER, "The user likes green tea", Category.PREFERENCE)
    with pytest.raises(IntegrityError, match="content_length"):
        await store.update(OWNER, item.id, "no")  # below the 5-character minimum
    assert [v.version_number for v in await store.history(OWNER, item.id)] == [1]


# --- concurrent and repeated upgrades -------------------------------------------------------


async def _revisions(url: str) -> list[str]:
    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            return list(
                (await connection.execute(sql("SELECT version_num FROM alembic_version"))).scalars()
            )
    finally:
        await engine.dispose()


async def test_concurrent_upgrades_of_a_fresh_database_all_succeed(empty_database_url):
    # Unserialized, these deadlock (alembic's context is process-global), hence the timeout.
    async with asyncio.timeout(60):
        await asyncio.gather(*(upgrade_database_async(empty_database_url) for _ in range(4)))
    assert await _revisions(empty_database_url) == [HEAD]


def procfile() -> dict[str, str]:
    """Return the Procfile's process types and their commands."""
    lines = (ROOT / "Procfile").read_text().splitlines()
    return dict(line.split(": ", 1) for line in lines if line.strip())


def test_the_procfile_releases_with_alembic_and_runs_the_bot_as_worker_or_web():
    assert procfile() == {
        "release": "alembic upgrade head",
        "worker": "python -m bot",
        "web": "python -m bot",
    }


async def test_start_ups_and_release_phases_racing_on_a_fresh_database_then_after_are_safe(
    empty_database_url,
):
    # The host runs Procfile commands with our virtual environment first on PATH.
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    env = {**os.environ, "PATH": path, "PYTHONPATH": str(ROOT), "DATABASE_URL": empty_database_url}
    upgrade = (
        "import sys; from bot.migrations import upgrade_database; upgrade_database(sys.argv[1])"
    )
    release = procfile()["release"].split()
    # Three `python -m bot` start-ups migrating a fresh database at the same moment, racing
    # each other and two release phases (one race, where two tests once raced separately).
    results = await asyncio.gather(
        _run(*release, env=env),
        _run(*release, env=env),
        *(_run(sys.executable, "-c", upgrade, empty_database_url, env=env) for _ in range(3)),
    )
    assert [code for code, _ in results] == [0, 0, 0, 0, 0], results
    assert await _revisions(empty_database_url) == [HEAD]
    # The release phase after them, and a start-up after that: nothing left to do.
    code, output = await _run(*release, env=env)
    assert code == 0, output
    code, output = await _run(sys.executable, "-c", upgrade, empty_database_url, env=env)
    assert code == 0, output
    assert await _revisions(empty_database_url) == [HEAD]
