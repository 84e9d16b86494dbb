"""Start-up skips Alembic only when the database is known to be at the newest migration."""

import asyncio
import shutil

from alembic.script import ScriptDirectory

from bot.__main__ import migrate
from bot.migrations import alembic_config, downgrade_engine, upgrade_database
from bot.schema_head import VERSIONS, at_head, head_revision
from memory.db import create_engine

HEAD = ScriptDirectory.from_config(alembic_config()).get_current_head()


def downgrade(url: str, revision: str) -> None:
    """Downgrade the database at url to a revision."""

    async def run() -> None:
        engine = create_engine(url)
        try:
            await downgrade_engine(engine, revision)
        finally:
            await engine.dispose()

    asyncio.run(run())


def test_the_newest_revision_read_from_the_files_is_alembics():
    assert HEAD is not None
    assert head_revision() == HEAD


def test_a_file_whose_revision_lines_are_not_plain_makes_the_head_unknown(tmp_path):
    versions = tmp_path / "versions"
    shutil.copytree(VERSIONS, versions, ignore=shutil.ignore_patterns("__pycache__"))
    assert head_revision(versions) == HEAD
    # A merge names two parents; a file might set its revision some other way.
    (versions / "9998_merge.py").write_text(
        'revision: str = "9998"\ndown_revision = ("0019", "0020")\n'
    )
    assert head_revision(versions) is None
    (versions / "9998_merge.py").write_text(f'revision = "9998"\ndown_revision = "{HEAD}"\n')
    assert head_revision(versions) == "9998"
    (versions / "9999_odd.py").write_text('revision = make_id()\ndown_revision = "9998"\n')
    assert head_revision(versions) is None
    # Two heads: Alembic would refuse to pick; so does this.
    (versions / "9999_odd.py").write_text(f'revision = "9999"\ndown_revision = "{HEAD}"\n')
    assert head_revision(versions) is None


def test_only_a_database_at_head_is_at_head_and_one_behind_is_migrated(empty_database_url):
    assert not at_head(empty_database_url)  # no tables yet
    upgrade_database(empty_database_url)
    assert at_head(empty_database_url)
    previous = ScriptDirectory.from_config(alembic_config()).get_revision(HEAD).down_revision
    assert isinstance(previous, str)
    downgrade(empty_database_url, previous)
    assert not at_head(empty_database_url)
    assert migrate(empty_database_url)  # through Alembic, as before
    assert at_head(empty_database_url)


def test_a_missing_folder_is_not_at_head_and_alembic_creates_it(tmp_path):
    url = f"sqlite+aiosqlite:///{tmp_path / 'not' / 'yet' / 'bot.db'}"
    assert not at_head(url)
    assert migrate(url)
    assert at_head(url)
