"""Database engine and sessions for SQLite (laptop) and Postgres (hosted)."""

from pathlib import Path

from sqlalchemy import event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine

SQLITE_BUSY_TIMEOUT_MS = 10_000


def normalize_database_url(url: str) -> URL:
    """Map the URL forms hosts hand out onto the async drivers we use."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url.removeprefix("postgres://")
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgresql+psycopg2", "postgresql+psycopg"):
        parsed = parsed.set(drivername="postgresql+asyncpg")
    if parsed.drivername == "sqlite":
        parsed = parsed.set(drivername="sqlite+aiosqlite")
    if parsed.drivername == "postgresql+asyncpg" and "sslmode" in parsed.query:
        # asyncpg spells libpq's sslmode as ssl.
        sslmode = parsed.query["sslmode"]
        parsed = parsed.difference_update_query(["sslmode"]).update_query_dict({"ssl": sslmode})
    return parsed


def _enable_sqlite_pragmas(dbapi_connection, _record) -> None:
    """Turn on what SQLite leaves off: WAL, a busy timeout and foreign keys."""
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def create_engine(url: str | URL) -> AsyncEngine:
    """Build the async engine for a database URL, creating a SQLite file's folder."""
    parsed = normalize_database_url(str(url)) if isinstance(url, str) else url
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(
            parsed, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000}
        )
        event.listen(engine.sync_engine, "connect", _enable_sqlite_pragmas)
        return engine
    return create_async_engine(parsed, pool_pre_ping=True)


def create_sessionmaker(engine: AsyncEngine) -> async_sessionmaker:
    """Return the session factory the stores use."""
    return async_sessionmaker(engine, expire_on_commit=False)
