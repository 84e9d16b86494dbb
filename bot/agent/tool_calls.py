"""Run the tool calls of one model response: reminder tools, else memory tools."""

import logging
from dataclasses import dataclass
from datetime import tzinfo

from anthropic.types import Message, SearchResultBlockParam, TextBlockParam, ToolResultBlockParam

from bot.agent.citations import search_result
from bot.agent.history.ledger import memory_write
from bot.agent.user_turn import message_turn
from bot.conversations.blocks import Content, text_block
from bot.conversations.leases import fenced_writes
from bot.conversations.snapshot import ConversationState, MemoryWrite, StoredTurn
from bot.reminders.records import Place
from bot.reminders.tools import ReminderTools
from memory.budget import MemoryFull
from memory.items import MemoryChange
from memory.proposals import Proposal, ProposalStore
from memory.store import MemoryStore
from memory.switch import MemorySwitch
from memory.tools import MEMORY_TOOLS, PastConversations, ToolContext, ToolOutcome, run_tool

logger = logging.getLogger(__name__)

# What a turn's tool calls changed, refused or proposed: each gets a notice or a question.
TurnChange = MemoryChange | MemoryFull | Proposal


def result_content(outcome: ToolOutcome) -> str | list[TextBlockParam | SearchResultBlockParam]:
    """Return a tool result's content: its text, then the memories found, to be cited."""
    if not outcome.found:
        return outcome.content
    found = [search_result(m.memory_id, m.title, m.content) for m in outcome.found]
    return [text_block(outcome.content), *found]


@dataclass
class ToolCalls:
    """What the tools need: the stores, the memory limit and zone, the reminders if any."""

    store: MemoryStore
    switch: MemorySwitch
    past: PastConversations
    memory_limit: int
    zone: tzinfo
    reminders: ReminderTools | None = None
    proposals: ProposalStore | None = None

    async def run(
        self,
        conversation: ConversationState,
        message: Message,
        turns: list[StoredTurn],
        changes: list[TurnChange],
    ) -> tuple[Content, list[MemoryWrite]]:
        """Run a message's tool calls; return their results and writes, collecting changes."""
        # The user's message answered: in a group its member's (whose facts are whose).
        asked = message_turn(turns)
        ctx = self._context(conversation, asked)
        results: Content = []
        writes: list[MemoryWrite] = []
        for block in message.content:
            if block.type != "tool_use":
                continue
            # A process taken for dead may still be here: its writes stop once the turn is not.
            with fenced_writes(conversation.chat_id):
                outcome = await self._run_one(ctx, conversation, block.name, block.input)
            logger.info("tool %s -> %s", block.name, "error" if outcome.is_error else "ok")
            if (change := outcome.change or outcome.refusal or outcome.proposal) is not None:
                changes.append(change)
            if outcome.change is not None:
                writes.append(memory_write(block.id, outcome.change))
            result: ToolResultBlockParam = {
                "type": "tool_result",
                "tool_use_id": block.id,
                "content": result_content(outcome),
            }
            if outcome.is_error:
                result["is_error"] = True
            results.append(result)
        return results, writes

    def _context(self, conversation: ConversationState, asked: StoredTurn | None) -> ToolContext:
        """Return what the memory tools know of this turn: its owner, speaker and message."""
        return ToolContext(
            self.store,
            self.switch,
            conversation.owner_id,
            conversation.id,
            memory_limit=self.memory_limit,
            zone=self.zone,
            conversations=self.past,
            speaker=asked.said_by.speaker if asked and asked.said_by else None,
            proposals=self.proposals,
            turn_id=asked.id if asked else None,
        )

    async def _run_one(
        self, ctx: ToolContext, conversation: ConversationState, name: str, tool_input: object
    ) -> ToolOutcome:
        """Run one tool call: a reminder tool for the conversation's chat, else a memory tool."""
        if self.reminders is not None and name in self.reminders.names:
            place = Place(conversation.owner_id, conversation.chat_id, conversation.thread_id)
            return await self.reminders.run(place, name, tool_input)
        return await run_tool(ctx, name, tool_input, MEMORY_TOOLS)
