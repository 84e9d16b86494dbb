"""The documented backup commands work with every DATABASE_URL form the bot accepts.

pg_dump takes only libpq URIs: `postgresql+asyncpg://` or JDBC's `ssl=true` make it refuse.
`python -m bot.database_url` prints the database as pg_dump and sqlite3 take it.
"""

import os
import shutil
import sqlite3
import sys
from contextlib import closing
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from bot.database_url import libpq_url, tool_target
from bot.migrations import upgrade_database_async
from tests import pg
from tests.builders import sqlite_url
from tests.process import ROOT, run_merged

FORMS = ("postgres", "postgresql", "postgresql+asyncpg", "postgresql+psycopg")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("postgres://u:p%40ss@db.host:5432/app", "postgresql://u:p%40ss@db.host:5432/app"),
        ("postgresql+asyncpg://u@db.host/app", "postgresql://u@db.host/app"),
        ("postgresql://u@h/app?ssl=true", "postgresql://u@h/app?sslmode=require"),
        (
            "postgres://u@h/app?sslmode=verify-full&sslrootcert=/etc/ca.pem",
            "postgresql://u@h/app?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem",
        ),
        # An asyncpg option means nothing to libpq, which would refuse the whole URI.
        ("postgresql+asyncpg://u@h/app?prepared_statement_cache_size=0", "postgresql://u@h/app"),
    ],
)
def test_postgres_urls_become_libpq_uris_with_the_same_meaning(given, expected):
    assert libpq_url(given) == expected
    assert make_url(libpq_url(given)).password == make_url(given).password


@pytest.mark.parametrize(
    "given",
    ["sqlite+aiosqlite:///./data/bot.db", "sqlite:///./data/bot.db", "sqlite:///data/bot.db"],
)
def test_sqlite_urls_become_the_files_path(given):
    assert Path(tool_target(given)) == Path("data/bot.db")


async def _print_target(cwd: Path, **env: str) -> str:
    """Run `python -m bot.database_url` and return the one line it prints."""
    clean = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    code, output = await run_merged(
        sys.executable, "-m", "bot.database_url", env=clean | {"PYTHONPATH": str(ROOT)} | env,
        cwd=cwd,
    )  # fmt: skip
    assert code == 0, output
    [line] = output.splitlines()
    return line


def _require_tools(*tools: str) -> None:
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing and pg.in_ci():
        pytest.fail(f"{', '.join(missing)} not installed; CI runs the backup tests", pytrace=False)
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed")


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
@pytest.mark.parametrize("form", FORMS)
async def test_pg_dump_and_pg_restore_take_every_form_through_the_command(
    database_url, form, tmp_path
):
    _require_tools("pg_dump", "pg_restore")
    url = make_url(database_url).set(drivername=form).render_as_string(hide_password=False)
    (tmp_path / ".env").write_text(f"DATABASE_URL={url}?sslmode=disable\n")
    target = await _print_target(tmp_path)  # from .env, as the bot reads it
    assert target.startswith("postgresql://")
    dump = tmp_path / "bot-backup.dump"
    code, output = await run_merged(
        "pg_dump", "--format=custom", "--no-owner", f"--file={dump}", target, env=dict(os.environ)
    )
    assert code == 0, output
    code, output = await run_merged(
        "pg_restore", "--clean", "--if-exists", "--no-owner", f"--dbname={target}", str(dump),
        env=dict(os.environ),
    )  # fmt: skip
    assert code == 0, output


@pytest.mark.sqlite
@pytest.mark.parametrize("form", ["sqlite+aiosqlite", "sqlite"])
async def test_the_sqlite3_shell_backs_up_every_form_through_the_command(form, tmp_path):
    _require_tools("sqlite3")
    await upgrade_database_async(sqlite_url(tmp_path / "data" / "bot.db"))
    target = await _print_target(tmp_path, DATABASE_URL=f"{form}:///./data/bot.db")
    code, output = await run_merged(
        "sqlite3", target, ".backup 'bot-backup.db'", env=dict(os.environ), cwd=tmp_path
    )
    assert code == 0, output
    with closing(sqlite3.connect(tmp_path / "bot-backup.db")) as copy:
        assert copy.execute("SELECT count(*) FROM alembic_version").fetchone() == (1,)
