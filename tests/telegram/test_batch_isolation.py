"""One owner's failure in a batch loop never stops another owner's work (both engines)."""

import logging
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy import text as sql

from bot.conversations.models import Conversation
from bot.conversations.retention import FORGET_BATCH
from bot.conversations.snapshot import ChatThread
from bot.conversations.store import ConversationStore
from bot.telegram.tidy.nightly import run_nightly
from tests.buttons import last_to
from tests.harness import FRIEND, OWNER
from tests.tidy_support import archive_line, plan_reply, seed


@pytest.mark.engines
async def test_one_owners_failing_nightly_tidy_does_not_stop_the_next_owners(harness, caplog):
    first, second = sorted((OWNER, FRIEND))
    seeded = {owner: await seed(harness.store, owner) for owner in (first, second)}
    for owner in (first, second):
        await harness.services.reminders.store.set_zone(owner, "Asia/Tokyo")
    harness.model.script(
        plan_reply(archive_line(seeded[first])), plan_reply(archive_line(seeded[second]))
    )
    # The first owner's chat blocked the bot: showing their plan fails.
    harness.tg.fail_next(
        "sendMessage", status=403, description="Forbidden: bot was blocked by the user"
    )
    night = datetime(2026, 11, 26, 19, 10, tzinfo=UTC)  # 04:10 in Tokyo
    with caplog.at_level(logging.ERROR, logger="bot.telegram.tidy.nightly"):
        assert await run_nightly(harness.running_app, night) == 1
    assert last_to(harness, second)["text"].startswith("Tidy plan: 2 change(s).")
    assert f"nightly tidy of owner {first} failed" in caplog.text
    assert len(harness.model.requests) == 2


# A row that refuses to go, as one owner's bad data would: a trigger, on either engine.
STUCK = {
    "sqlite": [
        f"CREATE TRIGGER stuck_turns BEFORE DELETE ON conversation_turns "
        f"WHEN OLD.owner_id = {FRIEND} BEGIN SELECT RAISE(ABORT, 'this row cannot go'); END",
    ],
    "postgresql": [
        "CREATE FUNCTION stuck_turn() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN RAISE EXCEPTION 'this row cannot go'; END $$",
        f"CREATE TRIGGER stuck_turns BEFORE DELETE ON conversation_turns FOR EACH ROW "
        f"WHEN (OLD.owner_id = {FRIEND}) EXECUTE FUNCTION stuck_turn()",
    ],
}
UNSTUCK = {
    "sqlite": ["DROP TRIGGER stuck_turns"],
    "postgresql": ["DROP TRIGGER stuck_turns ON conversation_turns", "DROP FUNCTION stuck_turn()"],
}


async def run_all(engine, statements: list[str]) -> None:
    async with engine.begin() as connection:
        for statement in statements:
            await connection.execute(sql(statement))


async def test_one_owners_conversation_that_cannot_be_deleted_does_not_stop_retention(
    engine, sessionmaker, caplog
):
    now = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
    old = ConversationStore(sessionmaker, timedelta(hours=2), clock=lambda: now - timedelta(days=5))
    said = [{"type": "text", "text": "old words"}]
    # The stuck owner's conversation comes first in every batch.
    await old.store_user_message(ChatThread(FRIEND), FRIEND, said)
    for chat in range(1000, 1000 + FORGET_BATCH + 5):
        await old.store_user_message(ChatThread(chat), chat, said)
    await run_all(engine, STUCK[engine.dialect.name])
    try:
        later = ConversationStore(sessionmaker, timedelta(hours=2), clock=lambda: now)
        with caplog.at_level(logging.WARNING, logger="bot.conversations.retention"):
            assert await later.forget_before(now - timedelta(days=1)) == FORGET_BATCH + 5
        async with sessionmaker() as session:
            left = (await session.scalars(select(Conversation.owner_id))).all()
        assert left == [FRIEND]
        assert caplog.text.count(f"of owner {FRIEND}") == 1
    finally:
        await run_all(engine, UNSTUCK[engine.dialect.name])
