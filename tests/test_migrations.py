"""Migrations build exactly the schema the models describe."""

from datetime import UTC, datetime

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, select, text

import bot.conversations.models
import bot.reminders.models  # noqa: F401
from bot.migrations import upgrade_engine
from memory.db import create_engine
from memory.models import Base, StoredMemoryBlock, is_search_object

NOW = datetime(2026, 11, 26, 1, 0, tzinfo=UTC)


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


async def test_0011_gives_stored_blocks_the_ids_of_their_memories(empty_database_url):
    engine = create_engine(empty_database_url)
    lines = ['- [id:alec0001] "Alec": "Alec is the boss"', '- [id:sara0002] "Sarah is on Platform"']
    block = "\n".join(["## Your Memory", "", "### People", *lines])
    try:
        await upgrade_engine(engine, "0010")
        async with engine.begin() as connection:
            await connection.execute(
                text("INSERT INTO agent_memory_blocks VALUES (:owner, :block, :at)"),
                [{"owner": 111, "block": block, "at": NOW}, {"owner": 222, "block": "", "at": NOW}],
            )
        await upgrade_engine(engine)
        async with engine.connect() as connection:
            rows = await connection.execute(
                select(StoredMemoryBlock.owner_id, StoredMemoryBlock.memory_ids).order_by(
                    StoredMemoryBlock.owner_id
                )
            )
            assert [(row.owner_id, row.memory_ids) for row in rows] == [
                (111, ["alec0001", "sara0002"]),
                (222, []),
            ]
    finally:
        await engine.dispose()
