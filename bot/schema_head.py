"""Tell whether a database is at the newest migration without loading Alembic.

Alembic, with Mako, Pygments and every SQLAlchemy dialect it loads, costs start-up a few
tenths of a second and about 10 MiB that stay for the life of the process; at head there is
nothing for it to do. The newest revision is read from the migration files' own lines; any
file whose lines this cannot read makes the answer "not known", and Alembic runs as before.
"""

import asyncio
import re
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from memory.db import create_engine

VERSIONS = Path(__file__).resolve().parent.parent / "alembic" / "versions"
# `revision: str = "0020"` and `down_revision: str | None = "0019"` (or None), as Alembic's
# template writes them; a merge (a tuple of revisions) is not read, and Alembic decides.
_REVISION = re.compile(r"""^revision\b[^=\n]*=\s*["']([^"'\n]+)["']\s*$""", re.MULTILINE)
_DOWN = re.compile(r"""^down_revision\b[^=\n]*=\s*(None|["']([^"'\n]+)["'])\s*$""", re.MULTILINE)


def head_revision(versions: Path = VERSIONS) -> str | None:
    """Return the one newest revision in the migration files, or None when unsure."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in sorted(versions.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        revision, down = _REVISION.findall(source), _DOWN.findall(source)
        if len(revision) != 1 or len(down) != 1:
            return None
        revisions.add(revision[0])
        if down[0][1]:
            parents.add(down[0][1])
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 and parents <= revisions else None


async def _stored_revision(database_url: str) -> str | None:
    """Return the revision Alembic recorded in the database, or None."""
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            rows = await connection.execute(text("SELECT version_num FROM alembic_version"))
            versions = rows.scalars().all()
    except (SQLAlchemyError, OSError):  # no file, no table, no server: Alembic will say
        return None
    finally:
        await engine.dispose()
    return versions[0] if len(versions) == 1 else None


def at_head(database_url: str) -> bool:
    """Tell whether the database is known to be at the newest revision; call outside a loop."""
    head = head_revision()
    return head is not None and asyncio.run(_stored_revision(database_url)) == head
