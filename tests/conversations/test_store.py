"""Conversations end on /new or after the idle time, and keep their block."""

from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy import select

from bot.conversations.blocks import Content
from bot.conversations.models import Turn
from bot.conversations.notes import PendingNotes
from bot.conversations.snapshot import (
    ChatThread,
    DuplicateUpdate,
    MemoryWrite,
    MessageRef,
    WebDay,
)
from bot.conversations.store import ConversationStore
from bot.conversations.web_uses import WebUses
from bot.reminders.models import OwnerZone
from memory.categories import Category


class Clock:
    """A clock the test moves by hand."""

    def __init__(self):
        self.now = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def said(text: str) -> list[dict]:
    """Return the content of a user's text message."""
    return [{"type": "text", "text": text}]


async def test_idle_timeout_starts_a_new_conversation_with_a_fresh_block(sessionmaker, store):
    clock = Clock()
    conversations = ConversationStore(sessionmaker, timedelta(minutes=30), clock)
    first = await conversations.store_user_message(ChatThread(5), owner_id=5, content=said("hi"))
    await store.add(5, "The user likes green tea", Category.PREFERENCE)

    clock.now += timedelta(minutes=29)
    same = await conversations.store_user_message(ChatThread(5), 5, said("still here"))
    assert same.conversation == first.conversation
    assert [t.content for t in same.turns] == [said("hi"), said("still here")]

    # Idle is measured from the user's last message, not from the conversation's start.
    clock.now += timedelta(minutes=29)
    assert (
        await conversations.store_user_message(ChatThread(5), 5, said("and here"))
    ).conversation == (first.conversation)

    clock.now += timedelta(minutes=31)
    fresh = await conversations.store_user_message(ChatThread(5), 5, said("back"))
    assert fresh.conversation.id != first.conversation.id
    assert "green tea" in fresh.conversation.memory_block
    assert "green tea" not in first.conversation.memory_block
    assert [t.content for t in fresh.turns] == [said("back")]
    assert [
        t.content[0]["text"] for t in (await conversations.snapshot(first.conversation.id)).turns
    ] == [
        "hi",
        "still here",
        "and here",
    ]
    # The idle conversation was ended, so only the fresh one continues.
    assert await conversations.end(ChatThread(5)) is True
    assert await conversations.end(ChatThread(5)) is False


async def test_end_closes_only_that_chat(sessionmaker, store):
    conversations = ConversationStore(sessionmaker, timedelta(hours=2))
    a = await conversations.store_user_message(ChatThread(1), 1, said("a"))
    b = await conversations.store_user_message(ChatThread(2), 2, said("b"))
    assert await conversations.end(ChatThread(1)) is True
    assert await conversations.end(ChatThread(1)) is False
    again = await conversations.store_user_message(ChatThread(1), 1, said("a again"))
    assert again.conversation.id != a.conversation.id
    assert [t.content for t in again.turns] == [said("a again")]
    same = await conversations.store_user_message(ChatThread(2), 2, said("b again"))
    assert same.conversation.id == b.conversation.id


async def test_a_redelivered_update_is_not_stored_twice(sessionmaker, store):
    conversations = ConversationStore(sessionmaker, timedelta(hours=2))
    await conversations.store_user_message(
        ChatThread(1), 1, said("hello"), MessageRef("1:42:1763900000", update_id=42)
    )
    with pytest.raises(DuplicateUpdate):
        await conversations.store_user_message(
            ChatThread(1), 1, said("hello"), MessageRef("1:42:1763900000", update_id=42)
        )
    async with sessionmaker() as session:
        stored = (await session.scalars(select(Turn.update_id).order_by(Turn.id))).all()
    assert stored == [42]


async def test_a_redelivered_first_message_leaves_no_empty_conversation(sessionmaker, store):
    clock = Clock()
    conversations = ConversationStore(sessionmaker, timedelta(minutes=30), clock)
    first = await conversations.store_user_message(
        ChatThread(1), 1, said("hello"), MessageRef("1:7:1763900000", update_id=7)
    )
    clock.now += timedelta(hours=1)
    with pytest.raises(DuplicateUpdate):
        await conversations.store_user_message(
            ChatThread(1), 1, said("hello"), MessageRef("1:7:1763900000", update_id=7)
        )
    # The rolled-back attempt neither ended the old conversation nor started another.
    assert await conversations.end(ChatThread(1)) is True
    assert (await conversations.snapshot(first.conversation.id)).turns != []


async def test_turns_leave_out_what_the_summary_holds(sessionmaker, store):
    conversations = ConversationStore(sessionmaker, timedelta(hours=2))
    first = await conversations.store_user_message(ChatThread(1), 1, said("a b c"))
    reply = await conversations.append(first.conversation, "assistant", said("d e"))
    assert [t.tokens for t in (await conversations.snapshot(first.conversation.id)).turns] == [3, 2]
    await conversations.compact(first.conversation.id, "summary", first.turns[0].id, [])
    assert (await conversations.snapshot(first.conversation.id)).turns == [reply]
    later = await conversations.store_user_message(ChatThread(1), 1, said("f"))
    assert [t.id for t in later.turns] == [reply.id, later.turns[-1].id]


async def test_a_continued_conversation_tells_whether_a_note_waits_with_turns_or_none(
    sessionmaker,
):
    conversations = ConversationStore(sessionmaker, timedelta(hours=2))
    conversation = (
        await conversations.store_user_message(ChatThread(1), 1, said("a"))
    ).conversation
    assert not (await conversations.store_user_message(ChatThread(1), 1, said("b"))).waiting.notes
    await PendingNotes(sessionmaker).add(1, conversation.id, "The user tapped Remember.")
    assert (await conversations.store_user_message(ChatThread(1), 1, said("c"))).waiting.notes
    # Every turn folded into the summary: the flags are read without turns to read them with.
    newest = (await conversations.snapshot(conversation.id)).turns[-1]
    await conversations.compact(conversation.id, "summary", newest.id, [])
    snapshot = await conversations.store_user_message(ChatThread(1), 1, said("d"))
    assert [t.content for t in snapshot.turns] == [said("d")]
    assert snapshot.waiting.notes
    other = await conversations.store_user_message(ChatThread(2), 2, said("e"))
    assert not (await conversations.store_user_message(ChatThread(2), 2, said("f"))).waiting.notes
    assert other.conversation.id != conversation.id


async def test_memory_writes_and_the_summarys_changes_are_stored_as_they_were_given(sessionmaker):
    conversations = ConversationStore(sessionmaker, timedelta(hours=2))
    first = await conversations.store_user_message(ChatThread(1), 1, said("remember tea"))
    write: MemoryWrite = {"tool_use_id": "toolu_1", "kind": "added", "memory_id": "Tt4tTt4t",
                          "subject": None, "content": "The user likes tea"}  # fmt: skip
    result: Content = [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "Done"}]
    stored = await conversations.append(first.conversation, "user", result, [write])
    plain = await conversations.append(first.conversation, "assistant", said("ok"))
    assert (stored.memory_writes, plain.memory_writes) == ((write,), ())
    assert (await conversations.snapshot(first.conversation.id)).turns[1:] == [stored, plain]
    lines = ['- saved [id:Tt4tTt4t] "The user likes tea"']
    await conversations.compact(first.conversation.id, "They met.", first.turns[0].id, lines)
    later = await conversations.store_user_message(ChatThread(1), 1, said("and"))
    assert (later.conversation.summary, later.conversation.summary_changes) == (
        "They met.",
        tuple(lines),
    )
    # A later compaction with the same prose refused (None) still stores the longer list.
    await conversations.compact(first.conversation.id, None, stored.id, [*lines, "- forgot x"])
    snapshot = await conversations.snapshot(first.conversation.id)
    assert snapshot.conversation.summary == "They met."
    assert snapshot.conversation.summary_changes == (*lines, "- forgot x")


async def test_the_snapshot_tells_whether_memory_is_on(sessionmaker, store, switch):
    conversations = ConversationStore(sessionmaker, timedelta(hours=2))
    await store.add(1, "The user likes green tea", Category.PREFERENCE)
    on = await conversations.store_user_message(ChatThread(1), 1, said("hi"))
    assert on.memory_on and "green tea" in on.conversation.memory_block
    await switch.turn(1, False)
    assert (await conversations.snapshot(on.conversation.id)).memory_on is False
    await conversations.end(ChatThread(1))
    off = await conversations.store_user_message(ChatThread(1), 1, said("hi again"))
    assert off.memory_on is False and off.conversation.memory_block == ""


async def test_a_continued_conversation_reads_its_own_owners_memory_switch(
    sessionmaker, store, switch
):
    conversations = ConversationStore(sessionmaker, timedelta(hours=2))
    await switch.turn(1, False)
    await switch.turn(3, True)
    for owner in (1, 2, 3):
        await conversations.store_user_message(ChatThread(owner), owner, said("hi"))
    later = {
        o: await conversations.store_user_message(ChatThread(o), o, said("again"))
        for o in (1, 2, 3)
    }
    assert {o: s.memory_on for o, s in later.items()} == {1: False, 2: True, 3: True}


async def test_an_update_id_telegram_reuses_for_another_message_is_stored(sessionmaker):
    # Telegram restarts update ids after a week of silence and with a new token.
    conversations = ConversationStore(sessionmaker, timedelta(hours=2))
    first = MessageRef("1:10:1763000000", update_id=42)
    later = MessageRef("1:900:1763900000", update_id=42)
    await conversations.store_user_message(ChatThread(1), 1, said("before"), first)
    snapshot = await conversations.store_user_message(ChatThread(1), 1, said("after"), later)
    assert [t.content for t in snapshot.turns] == [said("before"), said("after")]


async def test_a_continued_conversation_brings_the_days_web_uses_and_the_owners_zone(
    sessionmaker,
):
    conversations, uses = ConversationStore(sessionmaker, timedelta(hours=2)), WebUses(sessionmaker)
    day = date(2026, 11, 22)
    started = await conversations.store_user_message(ChatThread(7), 7, said("a"), web_day=day)
    assert started.web is None  # a new conversation: the web budget reads its own
    continued = await conversations.store_user_message(ChatThread(7), 7, said("b"), web_day=day)
    assert continued.web == WebDay(day, 0, None)
    await uses.add(7, day, 2, 1)
    await uses.add(8, day, 5, 5)  # another owner's
    await uses.add(7, day - timedelta(days=1), 9, 9)  # another day's
    async with sessionmaker.begin() as session:
        session.add(OwnerZone(owner_id=7, zone="Europe/Lisbon"))
    later = await conversations.store_user_message(ChatThread(7), 7, said("c"), web_day=day)
    assert later.web == WebDay(day, 3, "Europe/Lisbon")
    assert (await conversations.store_user_message(ChatThread(7), 7, said("d"))).web is None
