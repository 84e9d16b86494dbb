"""Database engine and sessions for SQLite (laptop) and Postgres (hosted)."""

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlencode

from sqlalchemy import event
from sqlalchemy.engine import URL, CursorResult, Result, make_url
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.pool import ConnectionPoolEntry

from memory.sqlite_driver import one_trip_dbapi

if TYPE_CHECKING:
    from sqlalchemy.dialects import postgresql, sqlite

logger = logging.getLogger(__name__)

SQLITE_BUSY_TIMEOUT_MS = 10_000

POSTGRES_DRIVERS = frozenset(
    {"postgres", "postgresql", "postgresql+asyncpg", "postgresql+psycopg2", "postgresql+psycopg"}
)
SQLITE_DRIVERS = frozenset({"sqlite", "sqlite+aiosqlite", "sqlite+pysqlite"})
# libpq's sslmode values. asyncpg's `ssl` connect argument takes these very strings with
# libpq's meaning (asyncpg.connect_utils.SSLMode), so a mode is passed through unchanged.
SSL_MODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
# libpq parameters asyncpg honours only inside a DSN, not as keyword arguments; they travel
# in a query-only DSN that asyncpg merges with the host, user and database it is given.
DSN_ONLY_PARAMS = frozenset(
    {
        "sslrootcert",
        "sslcert",
        "sslkey",
        "sslcrl",
        "sslpassword",
        "sslnegotiation",
        "ssl_min_protocol_version",
        "ssl_max_protocol_version",
        "application_name",
        "options",
    }
)
# libpq parameters asyncpg has no equivalent for; TLS settings above still apply.
UNSUPPORTED_PARAMS = frozenset({"channel_binding", "gssencmode", "sslcompression", "sslsni"})


class DatabaseUrlError(ValueError):
    """DATABASE_URL cannot be used; the message never repeats the URL (it may hold a password)."""


@dataclass(frozen=True)
class DatabaseTarget:
    """What create_engine needs: the SQLAlchemy URL and the driver's extra connect arguments."""

    url: URL
    connect_args: dict[str, Any] = field(default_factory=dict)
    ignored: tuple[str, ...] = ()


def _last(value: str | tuple[str, ...]) -> str:
    """Return the last of a repeated query parameter, as libpq does."""
    return value[-1] if isinstance(value, tuple) else value


def _postgres_target(parsed: URL) -> DatabaseTarget:
    """Translate libpq query parameters into what SQLAlchemy's asyncpg dialect passes on."""
    parsed = parsed.set(drivername="postgresql+asyncpg")
    query = {key: _last(value) for key, value in parsed.query.items()}
    kept: dict[str, str] = {}
    dsn_params: dict[str, str] = {}
    connect_args: dict[str, Any] = {}
    ignored: list[str] = []
    for key, value in query.items():
        if key in ("sslmode", "ssl"):
            # libpq itself reads ssl=true as sslmode=require, for JDBC-style URLs.
            value = "require" if key == "ssl" and value == "true" else value
            if value not in SSL_MODES:
                raise DatabaseUrlError(
                    f"DATABASE_URL has an unknown sslmode {value!r} "
                    f"(use one of {', '.join(SSL_MODES)})"
                )
            kept["ssl"] = value
        elif key in DSN_ONLY_PARAMS:
            dsn_params[key] = value
        elif key == "connect_timeout":
            try:
                connect_args["timeout"] = float(value)
            except ValueError:
                raise DatabaseUrlError("DATABASE_URL has a non-numeric connect_timeout") from None
        elif key in UNSUPPORTED_PARAMS:
            ignored.append(key)
        else:
            kept[key] = value
    if dsn_params:
        connect_args["dsn"] = "postgresql://?" + urlencode(dsn_params)
    return DatabaseTarget(parsed.set(query=kept), connect_args, tuple(ignored))


def _sqlite_in_memory(parsed: URL) -> bool:
    """Tell whether a SQLite URL names an in-memory database (or a nameless temporary one)."""
    database = parsed.database or ""
    mode = parsed.query.get("mode")
    if mode is not None and _last(mode) == "memory":
        return True
    # A URI (uri=true) names the database after "file:", as in file::memory:?cache=shared.
    return database.removeprefix("file:") in ("", ":memory:")


def parse_database_url(url: str | URL) -> DatabaseTarget:
    """Map the URL forms hosts hand out onto our async drivers, or raise DatabaseUrlError."""
    text = url.render_as_string(hide_password=False) if isinstance(url, URL) else url.strip()
    try:
        parsed = make_url(text)
    except (ArgumentError, ValueError):
        raise DatabaseUrlError(
            "DATABASE_URL is not a database URL (expected sqlite+aiosqlite:///path or "
            "postgres://user:password@host:5432/name)"
        ) from None
    if parsed.drivername in POSTGRES_DRIVERS:
        return _postgres_target(parsed)
    if parsed.drivername in SQLITE_DRIVERS:
        if _sqlite_in_memory(parsed):
            # Migrations and the bot use different connections, and each would get its own
            # empty database.
            raise DatabaseUrlError(
                "DATABASE_URL is an in-memory SQLite database, which each connection sees "
                "empty (use a file, like sqlite+aiosqlite:///./data/bot.db)"
            )
        return DatabaseTarget(parsed.set(drivername="sqlite+aiosqlite"))
    raise DatabaseUrlError(
        f"DATABASE_URL must be a SQLite or Postgres URL, not {parsed.drivername!r}"
    )


def normalize_database_url(url: str | URL) -> URL:
    """Return the SQLAlchemy URL our engine uses for a DATABASE_URL as hosts set it."""
    return parse_database_url(url).url


def _enable_sqlite_pragmas(dbapi_connection: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
    """Turn on what SQLite leaves off: WAL, a busy timeout and foreign keys."""
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def create_engine(url: str | URL) -> AsyncEngine:
    """Build the async engine for a database URL, creating a SQLite file's folder."""
    target = parse_database_url(url)
    parsed = target.url
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            private_file(Path(parsed.database))
        # SQLite takes one writer at a time. One connection queues our transactions on the pool,
        # which wakes the next at once, instead of in SQLite's busy handler, which sleeps up to
        # 100 ms between tries; the busy timeout still covers other processes.
        # Each statement in one trip to aiosqlite's thread, not four (memory/sqlite_driver.py).
        driver = one_trip_dbapi()
        engine = create_async_engine(
            parsed,
            pool_size=1,
            max_overflow=0,
            connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
            **({"module": driver} if driver is not None else {}),
        )
        event.listen(engine.sync_engine, "connect", _enable_sqlite_pragmas)
        return engine
    for name in target.ignored:
        logger.warning("DATABASE_URL parameter %s is not supported by asyncpg; ignored", name)
    return create_async_engine(parsed, pool_pre_ping=True, connect_args=target.connect_args)


def create_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Return the session factory the stores use."""
    return async_sessionmaker(engine, expire_on_commit=False)


def affected(result: Result[Any]) -> int:
    """Return how many rows an UPDATE or DELETE changed."""
    # Session.execute is typed to return Result; for UPDATE and DELETE it is a CursorResult.
    return cast(CursorResult[Any], result).rowcount


def private_file(path: Path) -> None:
    """Create a file (and its folder) that only this user may read, unless it exists."""
    # Memories and conversations are private whatever the umask; SQLite gives its journal
    # and WAL files the database file's permissions.
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))


def dialect_insert(
    dialect_name: str,
) -> "Callable[[Any], postgresql.Insert] | Callable[[Any], sqlite.Insert]":
    """Return the INSERT with ON CONFLICT of this dialect, loading only that dialect.

    Postgres's dialect costs a SQLite bot about 2 MiB and 0.1 s of start-up for nothing.
    """
    if dialect_name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgres_insert

        return postgres_insert
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert
