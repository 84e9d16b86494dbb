"""The agent loop: call Claude, run the tools it asks for, repeat until it answers."""

import logging
from dataclasses import dataclass, field
from typing import Any

from anthropic import AsyncAnthropic
from anthropic.types import Message

from bot.agent.request import build_request
from bot.agent.stream import Progress, stream_message
from bot.conversations.snapshot import ConversationState, Snapshot, StoredTurn
from bot.conversations.store import ConversationStore
from memory.budget import MemoryFull
from memory.items import MemoryChange
from memory.store import MemoryStore
from memory.switch import MemorySwitch
from memory.tools import ToolContext, run_tool, tool_definitions

logger = logging.getLogger(__name__)

MAX_TOKENS_NOTE = "(My reply was cut off because it reached the length limit.)"
REFUSAL_NOTE = "(I can't help with that request.)"
TOOL_LIMIT_NOTE = "(I stopped after too many memory operations in one turn.)"


@dataclass(frozen=True)
class AgentConfig:
    """How the loop calls the model, and the memory budget its tools keep."""

    model: str
    max_tokens: int
    max_tool_rounds: int
    memory_token_budget: int


@dataclass
class Answer:
    """What one turn produced: the text for the user, and what it changed or could not save."""

    text: str
    changes: list[MemoryChange | MemoryFull] = field(default_factory=list)


def stored_content(message: Message) -> list[dict[str, Any]]:
    """Return the assistant content blocks to store and send back, without empty text."""
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if block.type == "text":
            if block.text:
                blocks.append({"type": "text", "text": block.text})
        elif block.type == "tool_use":
            # The API only accepts object inputs when the history is sent back.
            tool_input = block.input if isinstance(block.input, dict) else {}
            blocks.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": tool_input}
            )
        else:
            blocks.append(block.model_dump(mode="json", exclude_none=True))
    return blocks


def reply_text(message: Message) -> str:
    """Join the text blocks of a model response."""
    return "\n\n".join(b.text for b in message.content if b.type == "text" and b.text.strip())


def closing_note(message: Message, out_of_rounds: bool, has_text: bool) -> str | None:
    """Return the note that explains why the model stopped where it did, if it needs one."""
    if message.stop_reason == "tool_use" and out_of_rounds:
        return TOOL_LIMIT_NOTE
    if message.stop_reason == "max_tokens":
        return MAX_TOKENS_NOTE
    if message.stop_reason == "refusal" and not has_text:
        return REFUSAL_NOTE
    return None


class Agent:
    """Runs one user turn of a conversation through the model and the memory tools."""

    def __init__(
        self,
        client: AsyncAnthropic,
        config: AgentConfig,
        conversations: ConversationStore,
        store: MemoryStore,
        switch: MemorySwitch,
    ):
        self._client = client
        self._config = config
        self._tools = tool_definitions()
        self._conversations = conversations
        self._store = store
        self._switch = switch

    async def run(self, snapshot: Snapshot, progress: Progress | None = None) -> Answer:
        """Answer the conversation's newest user turn, storing every step as it happens.

        With progress, the model's answers are streamed and reported to it as they come.
        """
        conversation = snapshot.conversation
        turns = list(snapshot.turns)  # each turn stored below is added here too
        tools = self._tools if snapshot.memory_on else []
        answer, texts = Answer(text=""), []
        for round_number in range(self._config.max_tool_rounds + 1):
            out_of_rounds = round_number == self._config.max_tool_rounds
            message = await self._call(conversation, turns, tools, out_of_rounds, progress, texts)
            if content := stored_content(message):
                stored = await self._conversations.append(conversation.id, "assistant", content)
                turns.append(stored)
            if text := reply_text(message):
                texts.append(text)
            if message.stop_reason != "tool_use" or out_of_rounds:
                break
            results = await self._run_tools(conversation, message, answer.changes)
            turns.append(await self._conversations.append(conversation.id, "user", results))
        if note := closing_note(message, out_of_rounds, bool(texts)):
            texts.append(note)
        answer.text = "\n\n".join(texts)
        return answer

    async def _run_tools(
        self,
        conversation: ConversationState,
        message: Message,
        changes: list[MemoryChange | MemoryFull],
    ) -> list[dict[str, Any]]:
        """Run the tool calls of a message; return their results, collecting what changed."""
        ctx = ToolContext(
            self._store,
            self._switch,
            conversation.owner_id,
            conversation.id,
            self._config.memory_token_budget,
        )
        results = []
        for block in message.content:
            if block.type != "tool_use":
                continue
            outcome = await run_tool(ctx, block.name, block.input)
            logger.info("tool %s -> %s", block.name, "error" if outcome.is_error else "ok")
            if (change := outcome.change or outcome.refusal) is not None:
                changes.append(change)
            result = {"type": "tool_result", "tool_use_id": block.id, "content": outcome.content}
            if outcome.is_error:
                result["is_error"] = True
            results.append(result)
        return results

    async def _call(
        self,
        conversation: ConversationState,
        turns: list[StoredTurn],
        tools: list[dict[str, Any]],
        force_answer: bool,
        progress: Progress | None = None,
        shown: list[str] | None = None,
    ) -> Message:
        """Send the conversation with these turns; stream the answer to progress, if given.

        shown: the texts of this turn's earlier rounds, which the reply so far starts with.
        """
        request = build_request(
            model=self._config.model,
            max_tokens=self._config.max_tokens,
            tools=tools,
            memory_block=conversation.memory_block,
            summary=conversation.summary,
            turns=[(t.role, t.content) for t in turns],
            force_answer=force_answer,
        )
        if progress is None:
            message = await self._client.messages.create(**request)
        else:
            message = await stream_message(self._client, request, progress, shown or [])
        usage = message.usage
        logger.debug(
            "model call: in=%s cache_read=%s cache_write=%s out=%s stop=%s",
            usage.input_tokens,
            usage.cache_read_input_tokens,
            usage.cache_creation_input_tokens,
            usage.output_tokens,
            message.stop_reason,
        )
        return message
