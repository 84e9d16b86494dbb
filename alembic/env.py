"""Alembic environment: async engines, or a connection handed in by the caller."""

import asyncio
import logging.config

from sqlalchemy.engine import Connection

import bot.conversations.models
import bot.conversations.web_uses
import bot.reminders.models  # noqa: F401
from alembic import context
from bot.migrations import check_foreign_keys, migration_lock, require_foreign_keys_off
from bot.settings import configured_database_url
from memory.db import create_engine
from memory.models import Base, is_search_object

config = context.config
target_metadata = Base.metadata


def database_url() -> str:
    """Return the URL to migrate: the caller's, else DATABASE_URL as the bot reads it.

    That is the environment, then .env in the current directory, then ./data/bot.db.
    """
    return config.attributes.get("database_url") or configured_database_url()


def do_run_migrations(connection: Connection) -> None:
    """Run the migrations on a synchronous connection; on SQLite, check foreign keys after."""
    on_sqlite = connection.dialect.name == "sqlite"
    if on_sqlite:
        require_foreign_keys_off(connection)
    applied = []
    context.configure(
        include_name=lambda name, kind, parent: not is_search_object(name),
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=on_sqlite,
        compare_type=True,
        on_version_apply=lambda step, **_: applied.append(step),
    )
    with context.begin_transaction():
        context.run_migrations()
        # With foreign keys off, SQLite lets a table rebuild leave rows pointing nowhere.
        if on_sqlite and applied:
            check_foreign_keys(connection)


async def run_async_migrations() -> None:
    """Open an engine for the configured URL and migrate through it."""
    engine = create_engine(database_url())
    try:
        # The same lock as `python -m bot` takes, so a release phase never races a start-up.
        async with migration_lock(engine) as connection:
            await connection.run_sync(do_run_migrations)
    finally:
        await engine.dispose()


def run_migrations_online() -> None:
    """Migrate the connection handed in, or one we open ourselves."""
    connection = config.attributes.get("connection")
    if connection is not None:
        do_run_migrations(connection)
        return
    if config.config_file_name is not None and config.attributes.get("configure_logger", True):
        logging.config.fileConfig(config.config_file_name, disable_existing_loggers=False)
    asyncio.run(run_async_migrations())


if context.is_offline_mode():
    raise SystemExit("Offline (--sql) migrations are not supported; run against a database.")
run_migrations_online()
