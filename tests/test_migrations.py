"""Migrations build exactly the schema the models describe."""

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

import bot.conversations.models
import bot.reminders.models  # noqa: F401
from memory.models import Base, is_search_object


def _diff(connection):
    context = MigrationContext.configure(
        connection,
        opts={
            "compare_type": True,
            "include_name": lambda name, kind, parent: not is_search_object(name),
        },
    )
    return compare_metadata(context, Base.metadata)


async def test_upgrade_to_head_matches_the_models(engine):
    async with engine.connect() as connection:
        assert await connection.run_sync(_diff) == []
        tables = await connection.run_sync(lambda c: set(inspect(c).get_table_names()))
    assert {
        "agent_memories",
        "agent_memory_versions",
        "conversations",
        "conversation_turns",
    } <= tables
