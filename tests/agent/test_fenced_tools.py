"""A turn's tools and compaction write only while the turn is still this process's."""

from datetime import UTC, timedelta

import pytest
from anthropic.types import Message

from bot.agent.tool_calls import ToolCalls
from bot.conversations.blocks import text_block
from bot.conversations.leases import LeaseLost
from bot.conversations.snapshot import ChatThread
from bot.conversations.store import ConversationStore
from bot.reminders.store import ReminderStore
from bot.reminders.tools import ReminderTools
from memory.categories import Category
from memory.proposals import ProposalStore
from memory.store import MemoryStore
from memory.switch import MemorySwitch
from tests.conversations.test_store import Clock
from tests.telegram.test_lease_keeper import CHAT, TTL, processes, take_over

CALLS = {
    "add_to_memory": {
        "content": "Alice likes hiking",
        "category": "preference",
        "subject": "hiking",
    },
    "propose_memory": {
        "facts": [{"content": "Alice skis", "category": "context", "subject": "skiing"}]
    },
    "create_reminder": {"text": "water the plants", "in_duration": "P2D"},
}


def asking(name: str) -> Message:
    """Return a model message that calls one tool."""
    return Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": CALLS[name]}],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )


class Turn:
    """A chat's conversation and the tools its turns call, on one database."""

    def __init__(self, sessionmaker) -> None:
        self.memories = MemoryStore(sessionmaker)
        self.proposals = ProposalStore(sessionmaker)
        self.reminders = ReminderStore(sessionmaker)
        self.conversations = ConversationStore(sessionmaker, timedelta(minutes=30))
        self.tools = ToolCalls(
            self.memories,
            MemorySwitch(sessionmaker),
            past=None,  # type: ignore[arg-type]  # no past-conversation search is called
            memory_limit=100,
            zone=UTC,
            reminders=ReminderTools(self.reminders, max_active=10),
            proposals=self.proposals,
        )

    async def call(self, name: str) -> None:
        """Store the user's message, then run the model's call of one tool for it."""
        await self.reminders.set_zone(CHAT, "Europe/Berlin")  # the user's, set before
        snapshot = await self.conversations.store_user_message(
            ChatThread(CHAT), CHAT, [text_block("hi")]
        )
        await self.tools.run(snapshot.conversation, asking(name), list(snapshot.turns), [])

    async def written(self) -> list[object]:
        """Return every memory, open question and reminder of the chat's owner."""
        [conversation] = await self.conversations.unanswered()
        return [
            *await self.memories.list_active(CHAT),
            *await self.proposals.open_questions(CHAT, conversation.conversation.id),
            *await self.reminders.upcoming(CHAT, limit=10),
        ]


@pytest.mark.parametrize("name", list(CALLS))
async def test_a_tool_call_after_another_process_took_the_turn_writes_nothing(sessionmaker, name):
    clock = Clock()
    keeper, other = processes(sessionmaker, clock)
    turn = Turn(sessionmaker)
    async with keeper.hold(CHAT):
        await take_over(sessionmaker, other, CHAT, clock.now + TTL)
        with pytest.raises(LeaseLost):
            await turn.call(name)
    assert await turn.written() == []


@pytest.mark.parametrize("name", list(CALLS))
async def test_a_tool_call_under_the_turns_own_lease_writes(sessionmaker, name):
    keeper, _ = processes(sessionmaker, Clock())
    turn = Turn(sessionmaker)
    async with keeper.hold(CHAT):
        await turn.call(name)
    assert len(await turn.written()) == 1


async def test_a_write_outside_a_tool_call_is_not_fenced(sessionmaker):
    # A button or command the user pressed in the chat meanwhile is theirs, not the turn's.
    clock = Clock()
    keeper, other = processes(sessionmaker, clock)
    turn = Turn(sessionmaker)
    async with keeper.hold(CHAT):
        await take_over(sessionmaker, other, CHAT, clock.now + TTL)
        await turn.memories.add(CHAT, "Alice likes tea", Category.PREFERENCE)
    assert len(await turn.memories.list_active(CHAT)) == 1


@pytest.mark.parametrize("taken_over", [False, True])
async def test_a_compaction_folds_the_history_only_while_the_turn_is_its_own(
    sessionmaker, taken_over
):
    clock = Clock()
    keeper, other = processes(sessionmaker, clock)
    conversations = Turn(sessionmaker).conversations
    async with keeper.hold(CHAT):
        said = await conversations.store_user_message(ChatThread(CHAT), CHAT, [text_block("hi")])
        fold = conversations.compact(said.conversation.id, "They said hi.", said.turns[-1].id, [])
        if taken_over:
            await take_over(sessionmaker, other, CHAT, clock.now + TTL)
            with pytest.raises(LeaseLost):
                await fold
        else:
            await fold
    after = await conversations.snapshot(said.conversation.id)
    assert after.conversation.summary == (None if taken_over else "They said hi.")
