"""The Postgres server the suite's postgres leg runs on, and throwaway databases on it.

The server comes from TEST_POSTGRES_URL (default: trust auth on 127.0.0.1:5432). Fixtures are
synchronous, so each helper runs its asyncpg calls on a private loop in a worker thread,
never touching the test's own event loop.
"""

import asyncio
import functools
import os
import secrets
from concurrent.futures import ThreadPoolExecutor

import asyncpg
import pytest
from sqlalchemy.engine import make_url

ADMIN_URL = os.environ.get("TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
DATABASE_PREFIX = "membot_test_"
CONNECT_TIMEOUT = 5
# A previous test's leaked connection could hold locks that block a reset, or pile up.
TERMINATE_OTHERS = (
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
)


def in_ci() -> bool:
    """Tell whether we run in CI, where a missing engine is a failure, not a skip."""
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def run(coroutine_function, *args):
    """Run an async helper to completion on a private event loop in another thread."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine_function(*args)).result()


def url_for(database: str, scheme: str = "postgres") -> str:
    """Return a host-style URL (postgres://user@host:port/name) of a database on the server."""
    admin = make_url(ADMIN_URL).set(drivername="postgresql", database=database)
    return scheme + "://" + admin.render_as_string(hide_password=False).split("://", 1)[1]


def new_database_name() -> str:
    """Return an unused-looking name, so runs sharing the server never collide."""
    return DATABASE_PREFIX + secrets.token_hex(4)


async def _connect(database: str | None = None) -> asyncpg.Connection:
    """Connect to the admin database, or to one of ours."""
    url = ADMIN_URL if database is None else url_for(database, "postgresql")
    return await asyncpg.connect(url, timeout=CONNECT_TIMEOUT)


async def _probe() -> None:
    """Connect once and ask something trivial."""
    connection = await _connect()
    try:
        await connection.fetchval("SELECT 1")
    finally:
        await connection.close()


@functools.cache
def unavailable_reason() -> str | None:
    """Return why the Postgres server cannot be used, or None when it can."""
    try:
        run(_probe)
    except (OSError, TimeoutError, asyncpg.PostgresError) as error:
        host = make_url(ADMIN_URL).set(password=None).render_as_string()
        return f"Postgres at {host} is unreachable ({type(error).__name__}: {error})"
    return None


def require_postgres() -> None:
    """Fail in CI, or skip locally, when the Postgres server is unreachable."""
    reason = unavailable_reason()
    if reason is None:
        return
    if in_ci():
        pytest.fail(f"{reason}; CI runs every test on Postgres too", pytrace=False)
    pytest.skip(f"{reason}; set TEST_DATABASES=sqlite to run only the SQLite leg")


async def _create(name: str) -> None:
    connection = await _connect()
    try:
        await connection.execute(f'CREATE DATABASE "{name}"')
    finally:
        await connection.close()


async def _drop(name: str) -> None:
    connection = await _connect()
    try:
        # FORCE ends connections a test may have leaked, so the drop never hangs.
        await connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await connection.close()


async def _reset(name: str) -> None:
    connection = await _connect(name)
    try:
        await connection.execute(TERMINATE_OTHERS)
        await connection.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    finally:
        await connection.close()


async def _table_names(name: str) -> frozenset[str]:
    connection = await _connect(name)
    try:
        rows = await connection.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    finally:
        await connection.close()
    return frozenset(row["tablename"] for row in rows)


async def _empty_tables(name: str, expected: frozenset[str]) -> bool:
    connection = await _connect(name)
    try:
        await connection.execute(TERMINATE_OTHERS)
        found = await connection.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        )
        if frozenset(row["tablename"] for row in found) != expected:
            return False
        sequences = await connection.fetch(
            "SELECT sequencename FROM pg_sequences WHERE schemaname = 'public'"
        )
        # DELETE, not TRUNCATE: a TRUNCATE gives every table and index new files, about 60 ms
        # of the server's CPU a test here against 5 ms for deleting a test's few rows. With
        # triggers off for the session (replica), foreign keys included, any order will do.
        await connection.execute(
            "; ".join(
                [
                    "SET session_replication_role = replica",
                    *(f'DELETE FROM "{table}"' for table in sorted(expected - {"alembic_version"})),
                    # ids start at 1 again, as in a new SQLite file
                    *(f'ALTER SEQUENCE "{row["sequencename"]}" RESTART' for row in sequences),
                ]
            )
        )
        return True
    finally:
        await connection.close()


def table_names(name: str) -> frozenset[str]:
    """Return the tables of a database's public schema."""
    return run(_table_names, name)


def empty_tables(name: str, expected: frozenset[str]) -> bool:
    """Delete every row but the schema version, if the tables are the expected ones."""
    return run(_empty_tables, name, expected)


def create_database(name: str) -> None:
    """Create an empty database on the server."""
    run(_create, name)


def drop_database(name: str) -> None:
    """Drop a database, ending any connection still open to it."""
    run(_drop, name)


def reset_database(name: str) -> None:
    """Empty a database: drop every table, type and sequence with the public schema."""
    run(_reset, name)
