"""Apply Alembic migrations from code: at start-up and in tests."""

from pathlib import Path

from alembic.config import Config
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from alembic import command
from memory.db import create_engine

ALEMBIC_INI = Path(__file__).resolve().parent.parent / "alembic.ini"


def alembic_config(**attributes) -> Config:
    """Return the project's Alembic config, leaving the caller's logging alone."""
    config = Config(str(ALEMBIC_INI))
    config.attributes["configure_logger"] = False
    config.attributes.update(attributes)
    return config


def upgrade_database(database_url: str) -> None:
    """Upgrade the database to head; call outside any running event loop."""
    command.upgrade(alembic_config(database_url=database_url), "head")


def _upgrade_connection(connection: Connection) -> None:
    """Upgrade through an open synchronous connection."""
    command.upgrade(alembic_config(connection=connection), "head")


async def upgrade_engine(engine: AsyncEngine) -> None:
    """Upgrade the engine's database to head from inside an event loop."""
    async with engine.begin() as connection:
        await connection.run_sync(_upgrade_connection)


async def upgrade_database_async(database_url: str) -> None:
    """Upgrade the database at this URL to head from inside an event loop."""
    engine = create_engine(database_url)
    try:
        await upgrade_engine(engine)
    finally:
        await engine.dispose()
