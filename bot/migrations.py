"""Apply Alembic migrations from code, one upgrader at a time: at start-up and in tests."""

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from alembic.config import Config
from alembic.util import CommandError
from sqlalchemy import text
from sqlalchemy.engine import URL, Connection
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from alembic import command
from memory.db import create_engine

try:
    import fcntl
except ImportError:  # Windows: a laptop there runs one bot, so nothing to serialize against.
    fcntl = None  # type: ignore[assignment]  # checked before use

ALEMBIC_INI = Path(__file__).resolve().parent.parent / "alembic.ini"
# The pg_advisory_xact_lock key every upgrader of this schema takes ("membot" in ASCII).
MIGRATION_LOCK_KEY = 0x6D656D626F74
# What Alembic logs at INFO on every run, even with nothing to do: its dialect and DDL mode.
ALEMBIC_PREAMBLE = ("Context impl %s.", "Will assume %s DDL.")


class AlembicPreambleFilter(logging.Filter):
    """Drop Alembic's per-run preamble, so a start-up logs only the upgrades it applies."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep every record but the preamble's two lines."""
        return record.msg not in ALEMBIC_PREAMBLE


logging.getLogger("alembic.runtime.migration").addFilter(AlembicPreambleFilter())


def alembic_config(**attributes: object) -> Config:
    """Return the project's Alembic config, leaving the caller's logging alone."""
    config = Config(str(ALEMBIC_INI))
    config.attributes["configure_logger"] = False
    config.attributes.update(attributes)
    return config


class MigrationError(CommandError):
    """Migrating would damage the data, so nothing was migrated."""


def lock_for_migrations(connection: Connection) -> None:
    """Wait until no other upgrader runs; the lock ends with the transaction."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
    elif connection.dialect.name == "sqlite":
        # pysqlite runs DDL outside any transaction until the first INSERT; an explicit BEGIN
        # puts all of a migration in one, so a failure, or a failed check, leaves no trace.
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def _set_sqlite_foreign_keys(connection: Connection, enabled: bool) -> None:
    """Switch SQLite's foreign key enforcement, between transactions, and check that it took."""
    if connection.dialect.name != "sqlite":
        return
    connection.exec_driver_sql(f"PRAGMA foreign_keys={'ON' if enabled else 'OFF'}")
    # SQLite ignores the switch inside a transaction, silently.
    if connection.exec_driver_sql("PRAGMA foreign_keys").scalar() != enabled:
        raise MigrationError("could not switch SQLite foreign keys: a transaction is open")
    connection.commit()


def require_foreign_keys_off(connection: Connection) -> None:
    """Refuse to migrate SQLite with foreign keys on: a table rebuild would delete rows."""
    if connection.exec_driver_sql("PRAGMA foreign_keys").scalar():
        raise MigrationError(
            "SQLite foreign keys are on, so rebuilding a table would delete the rows that "
            "reference it: migrate with bot.migrations (upgrade_engine, downgrade_engine or "
            "migration_lock), which turns them off first"
        )


def check_foreign_keys(connection: Connection) -> None:
    """Raise MigrationError if a SQLite row references a row that does not exist."""
    dangling = connection.exec_driver_sql("PRAGMA foreign_key_check").all()
    if dangling:
        examples = ", ".join(
            f"{table} row {rowid} -> {parent}" for table, rowid, parent, _ in dangling[:3]
        )
        raise MigrationError(
            f"after migrating, rows would reference rows that do not exist: {examples} "
            f"({len(dangling)} in all); nothing was migrated"
        )


def _sqlite_lock_path(url: URL) -> Path | None:
    """Return the lock file beside a SQLite database file, or None for other databases."""
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(f"{url.database}-migrate.lock")


def _acquire_file_lock(path: Path) -> int:
    """Open the lock file and block until this process holds it exclusively."""
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


@contextlib.asynccontextmanager
async def _sqlite_file_lock(url: URL) -> AsyncIterator[None]:
    """Hold a lock file beside a SQLite database, so one upgrader at a time migrates it."""
    path = _sqlite_lock_path(url)
    if path is None or fcntl is None:
        yield
        return
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    # Waiting happens in a thread, so another upgrader on this event loop can finish.
    descriptor = await asyncio.to_thread(_acquire_file_lock, path)
    try:
        yield
    finally:
        os.close(descriptor)


async def _restore_foreign_keys(connection: AsyncConnection) -> None:
    """Turn SQLite's foreign keys back on, or drop the connection so the pool never reuses it."""
    try:
        await connection.run_sync(_set_sqlite_foreign_keys, True)
    except BaseException:
        await connection.invalidate()
        raise


@contextlib.asynccontextmanager
async def migration_lock(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """Yield a connection in a transaction that one upgrader of the database holds at a time."""
    async with _sqlite_file_lock(engine.url), engine.connect() as connection:
        # Alembic rebuilds a SQLite table to alter it: create, copy, drop, rename. With foreign
        # keys on, the drop deletes every row referencing the table (ON DELETE CASCADE).
        await connection.run_sync(_set_sqlite_foreign_keys, False)
        try:
            async with connection.begin():
                await connection.run_sync(lock_for_migrations)
                yield connection
        finally:
            # SQLite's pool keeps this one connection for the bot, which needs them on.
            await _restore_foreign_keys(connection)


async def _run_command(
    engine: AsyncEngine, alembic_command: Callable[[Config, str], None], revision: str
) -> None:
    """Run an Alembic command to a revision on the engine's database, holding the lock."""
    async with migration_lock(engine) as connection:
        await connection.run_sync(
            lambda sync: alembic_command(alembic_config(connection=sync), revision)
        )


async def upgrade_engine(engine: AsyncEngine, revision: str = "head") -> None:
    """Upgrade the engine's database to a revision (head by default) from inside an event loop."""
    await _run_command(engine, command.upgrade, revision)


async def downgrade_engine(engine: AsyncEngine, revision: str) -> None:
    """Downgrade the engine's database to a revision ("base" for none) from inside an event loop."""
    await _run_command(engine, command.downgrade, revision)


async def upgrade_database_async(database_url: str) -> None:
    """Upgrade the database at this URL to head from inside an event loop."""
    engine = create_engine(database_url)
    try:
        await upgrade_engine(engine)
    finally:
        await engine.dispose()


def upgrade_database(database_url: str) -> None:
    """Upgrade the database to head; call outside any running event loop."""
    asyncio.run(upgrade_database_async(database_url))
