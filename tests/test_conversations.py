"""Conversations end on /new or after the idle time, and keep their block."""

from datetime import UTC, datetime, timedelta

import pytest

from bot.conversations import ConversationStore, DuplicateUpdate
from memory.categories import Category


class Clock:
    """A clock the test moves by hand."""

    def __init__(self):
        self.now = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


async def test_idle_timeout_starts_a_new_conversation_with_a_fresh_block(sessionmaker, store):
    clock = Clock()
    conversations = ConversationStore(sessionmaker, store, timedelta(minutes=30), clock)
    first = await conversations.current(chat_id=5, owner_id=5)
    await conversations.append(first.id, "user", [{"type": "text", "text": "hi"}])
    await store.add(5, "The user likes green tea", Category.PREFERENCE)

    clock.now += timedelta(minutes=29)
    same = await conversations.current(5, 5)
    assert same.id == first.id and same.memory_block == first.memory_block
    await conversations.append(same.id, "user", [{"type": "text", "text": "still here"}])

    clock.now += timedelta(minutes=31)
    fresh = await conversations.current(5, 5)
    assert fresh.id != first.id
    assert "green tea" in fresh.memory_block and "green tea" not in first.memory_block
    assert await conversations.turns(fresh.id) == []
    assert [t.content[0]["text"] for t in await conversations.turns(first.id)] == [
        "hi",
        "still here",
    ]


async def test_end_closes_only_that_chat(sessionmaker, store):
    conversations = ConversationStore(sessionmaker, store, timedelta(hours=2))
    a = await conversations.current(1, 1)
    b = await conversations.current(2, 2)
    assert await conversations.end(1) is True
    assert await conversations.end(1) is False
    assert (await conversations.current(1, 1)).id != a.id
    assert (await conversations.current(2, 2)).id == b.id


async def test_a_redelivered_update_is_not_stored_twice(sessionmaker, store):
    conversations = ConversationStore(sessionmaker, store, timedelta(hours=2))
    conversation = await conversations.current(1, 1)
    content = [{"type": "text", "text": "hello"}]
    await conversations.append(conversation.id, "user", content, update_id=42)
    with pytest.raises(DuplicateUpdate):
        await conversations.append(conversation.id, "user", content, update_id=42)
    assert [t.update_id for t in await conversations.turns(conversation.id)] == [42]


async def test_history_tokens_counts_only_turns_not_yet_summarised(sessionmaker, store):
    conversations = ConversationStore(sessionmaker, store, timedelta(hours=2))
    conversation = await conversations.current(1, 1)
    first = await conversations.append(conversation.id, "user", [{"type": "text", "text": "a b c"}])
    await conversations.append(conversation.id, "assistant", [{"type": "text", "text": "d e"}])
    assert await conversations.history_tokens(conversation.id) == 5
    await conversations.compact(conversation.id, "summary", first)
    assert await conversations.history_tokens(conversation.id) == 2
