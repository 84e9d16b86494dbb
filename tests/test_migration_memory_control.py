"""Migration 0002 (undo log, owner settings) applies, reverts and re-applies on each engine."""

from sqlalchemy import inspect

from alembic import command
from bot.migrations import alembic_config
from memory.categories import Category
from memory.db import create_sessionmaker
from memory.items import AddMemory
from memory.store import MemoryStore
from memory.switch import MemorySwitch

NEW_TABLES = {"agent_memory_changes", "owner_settings"}


def _tables(connection) -> set[str]:
    return set(inspect(connection).get_table_names())


def _migrate(connection, revision: str) -> None:
    config = alembic_config(connection=connection)
    if revision == "head":
        command.upgrade(config, "head")
    else:
        command.downgrade(config, revision)


async def test_down_to_0001_and_back_keeps_memories(engine):
    sessionmaker = create_sessionmaker(engine)
    store, switch = MemoryStore(sessionmaker), MemorySwitch(sessionmaker)
    added = AddMemory("The user likes green tea", Category.PREFERENCE)
    kept = (await store.apply(111, added, journal=True)).item
    await switch.turn(111, False)

    async with engine.begin() as connection:
        await connection.run_sync(_migrate, "0001")
        assert not NEW_TABLES & await connection.run_sync(_tables)
    async with engine.begin() as connection:
        await connection.run_sync(_migrate, "head")
        assert NEW_TABLES <= await connection.run_sync(_tables)

    assert [m.id for m in await store.list_active(111)] == [kept.id]
    assert await switch.is_on(111) is True  # settings went with the table
