"""`alembic upgrade head` as docs/operations.md gives it: .env like the bot, from any directory."""

import os
import sqlite3
import sys
from contextlib import closing
from pathlib import Path

import pytest

from tests.builders import sqlite_url
from tests.process import ROOT, run_merged

ALEMBIC = str(Path(sys.executable).with_name("alembic"))


def _environment(**extra: str) -> dict[str, str]:
    """Return the environment without any DATABASE_URL of the developer's, plus extra."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    return env | {"PYTHONPATH": str(ROOT)} | extra


def _version(path: Path) -> str:
    with closing(sqlite3.connect(path)) as db:
        return db.execute("SELECT version_num FROM alembic_version").fetchone()[0]


@pytest.mark.sqlite
async def test_alembic_reads_database_url_from_env_file_like_the_bot(tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    target = tmp_path / "from-dotenv.db"
    (app / ".env").write_text(f"TELEGRAM_BOT_TOKEN=x\nDATABASE_URL=sqlite:///{target}\n")
    code, output = await run_merged(
        ALEMBIC, "-c", str(ROOT / "alembic.ini"), "upgrade", "head", env=_environment(), cwd=app
    )
    assert code == 0, output
    assert _version(target)
    assert not (app / "data").exists()  # not the laptop default beside it


@pytest.mark.sqlite
async def test_the_environment_wins_over_env_file_as_for_the_bot(tmp_path):
    (tmp_path / ".env").write_text(f"DATABASE_URL=sqlite:///{tmp_path / 'dotenv.db'}\n")
    target = tmp_path / "environment.db"
    env = _environment(DATABASE_URL=sqlite_url(target))
    code, output = await run_merged(
        ALEMBIC, "-c", str(ROOT / "alembic.ini"), "upgrade", "head", env=env, cwd=tmp_path
    )
    assert code == 0, output
    assert _version(target) and not (tmp_path / "dotenv.db").exists()


@pytest.mark.sqlite
async def test_alembic_runs_from_any_directory_given_the_ini_or_alembic_config(tmp_path):
    elsewhere = tmp_path / "somewhere" / "else"
    elsewhere.mkdir(parents=True)
    first, second = tmp_path / "first.db", tmp_path / "second.db"
    env = _environment(DATABASE_URL=f"sqlite:///{first}")
    ini = str(ROOT / "alembic.ini")
    code, output = await run_merged(ALEMBIC, "-c", ini, "upgrade", "head", env=env, cwd=elsewhere)
    assert code == 0, output
    env = _environment(DATABASE_URL=f"sqlite:///{second}", ALEMBIC_CONFIG=ini)
    code, output = await run_merged(ALEMBIC, "upgrade", "head", env=env, cwd=elsewhere)
    assert code == 0, output
    assert _version(first) == _version(second)
