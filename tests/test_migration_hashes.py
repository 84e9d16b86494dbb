"""A migration never changes once it has landed on main: a database somewhere is already at it."""

import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERSIONS = ROOT / "alembic" / "versions"
LANDED = Path(__file__).with_name("migration_hashes.txt")


def landed() -> dict[str, str]:
    """Return the sha256 of each landed migration file, by file name."""
    pairs = (line.split() for line in LANDED.read_text().splitlines() if line.strip())
    return {name: digest for digest, name in pairs}


def digest(path: Path) -> str:
    """Return a file's sha256."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_no_landed_migration_changed_or_went_away():
    changed = [
        name
        for name, expected in landed().items()
        if not (VERSIONS / name).exists() or digest(VERSIONS / name) != expected
    ]
    assert changed == [], (
        f"{changed} changed after landing: put the change in a new migration instead"
    )


def test_every_migration_is_recorded_once_it_lands():
    files = sorted(path.name for path in VERSIONS.glob("*.py"))
    missing = [name for name in files if name not in landed()]
    assert missing == [], (
        f"add `sha256sum alembic/versions/<file>` lines for {missing} to {LANDED.name} "
        "(format: '<sha256>  <file name>'), in the commit that adds the migration"
    )
