"""Print the bot's database as the engines' own tools take it: `python -m bot.database_url`.

DATABASE_URL may be in any form the bot accepts (postgres://, postgresql+asyncpg://, JDBC's
ssl=true, sqlite+aiosqlite:///...), read from the environment or .env as the bot reads it.
Postgres comes out as a libpq URI for pg_dump, pg_restore and psql; SQLite as the file's path
for the sqlite3 shell. See docs/operations.md, "Back up and restore".
"""

import sys

from sqlalchemy.engine import URL, make_url

from bot.settings import configured_database_url
from memory.db import POSTGRES_DRIVERS, SSL_MODES, DatabaseUrlError, parse_database_url

# The parameters libpq knows (PostgreSQL 17); any other (a SQLAlchemy or asyncpg option)
# would make pg_dump refuse the whole URI, and means nothing to it.
LIBPQ_PARAMS = frozenset(
    {
        "application_name",
        "channel_binding",
        "client_encoding",
        "connect_timeout",
        "fallback_application_name",
        "gssdelegation",
        "gssencmode",
        "gsslib",
        "hostaddr",
        "keepalives",
        "keepalives_count",
        "keepalives_idle",
        "keepalives_interval",
        "krbsrvname",
        "load_balance_hosts",
        "options",
        "passfile",
        "replication",
        "requirepeer",
        "service",
        "ssl_max_protocol_version",
        "ssl_min_protocol_version",
        "sslcert",
        "sslcertmode",
        "sslcompression",
        "sslcrl",
        "sslcrldir",
        "sslkey",
        "sslkeylogfile",
        "sslmode",
        "sslnegotiation",
        "sslpassword",
        "sslrootcert",
        "sslsni",
        "target_session_attrs",
        "tcp_user_timeout",
    }
)


def libpq_url(url: str) -> str:
    """Return a Postgres DATABASE_URL as a libpq URI, with the same meaning for libpq."""
    parsed = make_url(url.strip())
    query: dict[str, str] = {}
    for key, value in parsed.query.items():
        value = value[-1] if isinstance(value, tuple) else value  # libpq keeps the last
        if key == "ssl":
            # The bot reads JDBC's ssl=true as libpq does: sslmode=require.
            key, value = "sslmode", "require" if value == "true" else value
        if key in LIBPQ_PARAMS:
            query[key] = value
    if query.get("sslmode", "prefer") not in SSL_MODES:
        raise DatabaseUrlError(f"DATABASE_URL has an unknown sslmode {query['sslmode']!r}")
    libpq = URL.create(
        "postgresql",
        parsed.username,
        parsed.password,
        parsed.host,
        parsed.port,
        parsed.database,
        query,
    )
    return libpq.render_as_string(hide_password=False)


def tool_target(url: str) -> str:
    """Return what pg_dump (a libpq URI) or sqlite3 (a file path) needs for this URL."""
    target = parse_database_url(url)  # raises DatabaseUrlError for a URL the bot refuses
    if make_url(url.strip()).drivername in POSTGRES_DRIVERS:
        return libpq_url(url)
    return target.url.database or ""


def main() -> int:
    """Print the database of DATABASE_URL (environment, then .env) for its tools."""
    try:
        print(tool_target(configured_database_url()))
    except DatabaseUrlError as error:
        print(error, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
