"""Migrations build exactly the schema the models describe."""

from datetime import UTC, datetime

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import insert, inspect, select, text

import bot.conversations.models
import bot.conversations.web_uses
import bot.reminders.models  # noqa: F401
from bot.agent.history.ledger import LEDGER_HEADING, memory_changes
from bot.conversations.models import Conversation, Turn
from bot.conversations.statements import STATE_COLUMNS, state_of, turn_of, turns_statement
from bot.migrations import downgrade_engine, upgrade_engine
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


SAVE = {"content": "The user prefers  tea", "category": "preference", "subject": "drinks"}
CALLS = [
    {"type": "text", "text": "One moment."},
    {"type": "tool_use", "id": "toolu_1", "name": "add_to_memory", "input": SAVE},
    {"type": "tool_use", "id": "toolu_2", "name": "update_memory",
     "input": {"memory_id": "alec0001", "content": "Alec is the manager"}},
    {"type": "tool_use", "id": "toolu_3", "name": "forget_memory",
     "input": {"memory_id": "gym00001"}},
    {"type": "tool_use", "id": "toolu_4", "name": "add_to_memory", "input": {"content": "x"}},
    {"type": "tool_use", "id": "toolu_5", "name": "search_memory", "input": {"query": "tea"}},
]  # fmt: skip
RESULTS = [
    {"type": "tool_result", "tool_use_id": "toolu_1",
     "content": "Saved as tea00001; to make room, older memories left the prompt"},
    {"type": "tool_result", "tool_use_id": "toolu_2",
     "content": "Updated alec0001 (version 2). Old: 'Alec is the boss'. New: 'x'."},
    {"type": "tool_result", "tool_use_id": "toolu_3", "content": [
        {"type": "text", "text": "Forgot gym00001 ('The gym is\nFitLife'). The user can undo"}]},
    {"type": "tool_result", "tool_use_id": "toolu_4", "content": "Saved as bad00001",
     "is_error": True},
    {"type": "tool_result", "tool_use_id": "toolu_5", "content": "Saved as not00001"},
]  # fmt: skip
LISTED = [
    '- saved [id:tea00001] "drinks": "The user prefers tea"',
    '- updated [id:alec0001] to "Alec is the manager"',
    '- forgot [id:gym00001] "The gym is FitLife"',
]
SUMMARIES = {
    1: "They talked.\n\n" + "\n".join([LEDGER_HEADING, LISTED[0]]),
    2: "Prose only.",
    3: f"They asked what this means:\n{LEDGER_HEADING}\nand got an answer.",
    4: "\n".join([LEDGER_HEADING, *LISTED[1:]]),
}


async def test_0013_stores_what_the_bot_read_from_results_and_summaries_and_back(
    empty_database_url,
):
    engine = create_engine(empty_database_url)
    try:
        await upgrade_engine(engine, "0012")
        async with engine.begin() as connection:
            await connection.execute(insert(Conversation), [
                {"id": n, "chat_id": 1, "owner_id": 1, "memory_block": "", "summary": summary,
                 "started_at": NOW, "last_activity_at": NOW}
                for n, summary in SUMMARIES.items()
            ])  # fmt: skip
            await connection.execute(insert(Turn), [
                {"id": n, "conversation_id": 1, "role": role, "content": content,
                 "created_at": NOW}
                for n, (role, content) in enumerate([("assistant", CALLS), ("user", RESULTS)], 1)
            ])  # fmt: skip
        await upgrade_engine(engine)
        async with engine.connect() as connection:
            turns = [turn_of(row) for row in await connection.execute(turns_statement(), {
                "conversation_id": 1})]  # fmt: skip
            states = (await connection.execute(select(*STATE_COLUMNS).order_by("id"))).all()
        # The ledger reads the same lines from the stored writes as it read from the wording.
        assert [t.memory_writes != () for t in turns] == [False, True]
        assert memory_changes(turns) == LISTED
        assert [(s.summary, s.summary_changes) for s in map(state_of, states)] == [
            ("They talked.", (LISTED[0],)), ("Prose only.", ()), (SUMMARIES[3], ()),
            (None, tuple(LISTED[1:])),
        ]  # fmt: skip
        await downgrade_engine(engine, "0012")
        async with engine.connect() as connection:
            rows = await connection.execute(text("SELECT id, summary FROM conversations"))
            assert {row.id: row.summary for row in rows} == SUMMARIES
    finally:
        await engine.dispose()
