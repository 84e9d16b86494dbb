"""A chat's history reads in the order the user sent it, whichever process stored what first."""

from datetime import timedelta
from typing import cast

from bot.agent.request import normalize_history
from bot.conversations.blocks import Content, text_block
from bot.conversations.snapshot import ChatThread, MessageRef, Snapshot
from bot.conversations.store import ConversationStore

CHAT = ChatThread(1)
SENT = 1_763_900_000  # a message date, in seconds


def said(text: str) -> Content:
    """Return the content of a text turn."""
    return [text_block(text)]


def message(number: int, seconds: int = 0) -> MessageRef:
    """Return the reference of the chat's message number, sent seconds after SENT."""
    return MessageRef(f"1:{number}:{SENT + seconds}", update_id=1000 + number, sender_id=1)


def words(snapshot: Snapshot) -> list[str]:
    """Return each turn's words, tool calls and results by their id."""
    named = {"text": "text", "tool_use": "id", "tool_result": "tool_use_id"}
    return [
        cast(dict, block)[named[block["type"]]] for turn in snapshot.turns for block in turn.content
    ]


async def ask(conversations: ConversationStore, number: int, seconds: int = 0) -> Snapshot:
    """Store the user's message number and answer it, as the process that received it would."""
    snapshot = await conversations.store_user_message(
        CHAT, 1, said(f"m{number}"), message(number, seconds)
    )
    assert snapshot.unanswered and words(snapshot)[-1] == f"m{number}"
    await conversations.append(snapshot.conversation, "assistant", said(f"a{number}"))
    return snapshot


async def test_messages_stored_out_of_order_read_in_the_order_they_were_sent(sessionmaker):
    conversations = ConversationStore(sessionmaker, timedelta(hours=2))
    await ask(conversations, 5)
    # Another process held the chat: message 8 is stored before 6 and 7.
    await ask(conversations, 8, seconds=2)
    late = await conversations.store_user_message(CHAT, 1, said("m6"), message(6, seconds=1))
    # The message being answered comes last: the API answers the newest message.
    assert words(late) == ["m5", "a5", "m8", "a8", "m6"]
    conversation = late.conversation
    # Its answer uses a tool: the call and its result stay together, after the message.
    call: Content = [{"type": "tool_use", "id": "call6", "name": "search_memory", "input": {}}]
    result: Content = [{"type": "tool_result", "tool_use_id": "call6", "content": "none"}]
    await conversations.append(conversation, "assistant", call)
    midway = await conversations.snapshot(conversation.id)
    assert words(midway) == ["m5", "a5", "m8", "a8", "m6", "call6"]
    await conversations.append(conversation, "user", result)
    await conversations.append(conversation, "assistant", said("a6"))
    await ask(conversations, 7, seconds=1)

    history = await conversations.snapshot(conversation.id)
    assert words(history) == ["m5", "a5", "m6", "call6", "call6", "a6", "m7", "a7", "m8", "a8"]
    roles = [m["role"] for m in normalize_history([(t.role, t.content) for t in history.turns])]
    assert roles == ["user", "assistant"] * 5


async def test_a_message_left_unanswered_by_a_crash_is_still_the_one_answered(sessionmaker):
    conversations = ConversationStore(sessionmaker, timedelta(hours=2))
    await ask(conversations, 5)
    await ask(conversations, 8)
    stored = await conversations.store_user_message(CHAT, 1, said("m6"), message(6))
    [pending] = await conversations.unanswered()
    assert pending.conversation.id == stored.conversation.id
    again = await conversations.snapshot(stored.conversation.id)
    assert again.unanswered and words(again) == ["m5", "a5", "m8", "a8", "m6"]


async def test_the_summary_folds_what_was_read_before_its_cut_and_hides_nothing_else(
    sessionmaker,
):
    conversations = ConversationStore(sessionmaker, timedelta(hours=2))
    await ask(conversations, 5)
    await ask(conversations, 8)
    await ask(conversations, 6)
    history = await conversations.snapshot((await ask(conversations, 7)).conversation.id)
    assert words(history) == ["m5", "a5", "m6", "a6", "m7", "a7", "m8", "a8"]
    # Compaction folds the oldest four turns as read: the last one folded is a6.
    conversation = history.conversation
    await conversations.compact(conversation.id, "earlier", history.turns[3].id, [])
    assert words(await conversations.snapshot(conversation.id)) == ["m7", "a7", "m8", "a8"]
    # A message stored late, from before the summary's cut, is not lost behind it.
    await ask(conversations, 4)
    folded = await conversations.snapshot(conversation.id)
    assert words(folded) == ["m4", "a4", "m7", "a7", "m8", "a8"]


async def test_the_bots_own_words_come_after_what_was_said_before_them(sessionmaker):
    conversations = ConversationStore(sessionmaker, timedelta(hours=2))
    await ask(conversations, 5)
    await ask(conversations, 9)
    reminder = await conversations.store_bot_message(CHAT, 1, "[a reminder fired]", "Tea!")
    await ask(conversations, 7)
    await ask(conversations, 10)
    history = await conversations.snapshot(reminder.conversation.id)
    assert words(history) == [
        "m5", "a5", "m7", "a7", "m9", "a9", "[a reminder fired]", "Tea!", "m10", "a10",
    ]  # fmt: skip


async def test_a_group_upgraded_to_a_supergroup_keeps_its_order_though_ids_restart(
    sessionmaker,
):
    conversations = ConversationStore(sessionmaker, timedelta(hours=2))
    await ask(conversations, 500)
    # The supergroup's message ids start again from 1; its dates go on.
    await ask(conversations, 2, seconds=60)
    history = await conversations.snapshot(
        (await ask(conversations, 3, seconds=61)).conversation.id
    )
    assert words(history) == ["m500", "a500", "m2", "a2", "m3", "a3"]
