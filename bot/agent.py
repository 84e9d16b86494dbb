"""The agent loop: call Claude, run the tools it asks for, repeat until it answers."""

import logging
from dataclasses import dataclass, field
from typing import Any

from anthropic import AsyncAnthropic
from anthropic.types import Message

from bot.conversations import ConversationState, ConversationStore, Snapshot, StoredTurn
from bot.prompt import build_request
from memory.store import MemoryStore
from memory.tools import MemoryChange, ToolContext, run_tool, tool_definitions

logger = logging.getLogger(__name__)

MAX_TOKENS_NOTE = "(My reply was cut off because it reached the length limit.)"
REFUSAL_NOTE = "(I can't help with that request.)"
TOOL_LIMIT_NOTE = "(I stopped after too many memory operations in one turn.)"


@dataclass(frozen=True)
class AgentConfig:
    """How the loop calls the model."""

    model: str
    max_tokens: int
    max_tool_rounds: int


@dataclass
class AgentReply:
    """What one turn produced: the text for the user and the memory changes made."""

    text: str
    changes: list[MemoryChange] = field(default_factory=list)


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


class Agent:
    """Runs one user turn of a conversation through the model and the memory tools."""

    def __init__(
        self,
        client: AsyncAnthropic,
        config: AgentConfig,
        conversations: ConversationStore,
        memories: MemoryStore,
    ):
        self._client = client
        self._config = config
        self._tools = tool_definitions()
        self._conversations = conversations
        self._memories = memories

    async def respond(self, snapshot: Snapshot) -> AgentReply:
        """Answer the conversation's newest user turn, storing every step as it happens."""
        reply = AgentReply(text="")
        conversation = snapshot.conversation
        # The turns as stored: each turn stored below is added here too.
        turns = list(snapshot.turns)
        tools = self._tools if snapshot.memory_on else []
        ctx = ToolContext(self._memories, conversation.owner_id, conversation.id)
        texts: list[str] = []
        for round_number in range(self._config.max_tool_rounds + 1):
            out_of_rounds = round_number == self._config.max_tool_rounds
            message = await self._call(conversation, turns, tools, force_answer=out_of_rounds)
            content = stored_content(message)
            if content:
                turns.append(
                    await self._conversations.append(conversation.id, "assistant", content)
                )
            if text := reply_text(message):
                texts.append(text)
            if message.stop_reason != "tool_use":
                break
            if out_of_rounds:
                texts.append(TOOL_LIMIT_NOTE)
                break
            results = []
            for block in message.content:
                if block.type != "tool_use":
                    continue
                outcome = await run_tool(ctx, block.name, block.input)
                logger.info("tool %s -> %s", block.name, "error" if outcome.is_error else "ok")
                if outcome.change is not None:
                    reply.changes.append(outcome.change)
                result = {
                    "type": "tool_result",
                    "tool_use_id": block.id,
                    "content": outcome.content,
                }
                if outcome.is_error:
                    result["is_error"] = True
                results.append(result)
            turns.append(await self._conversations.append(conversation.id, "user", results))
        if message.stop_reason == "max_tokens":
            texts.append(MAX_TOKENS_NOTE)
        elif message.stop_reason == "refusal" and not texts:
            texts.append(REFUSAL_NOTE)
        reply.text = "\n\n".join(texts)
        return reply

    async def _call(
        self,
        conversation: ConversationState,
        turns: list[StoredTurn],
        tools: list[dict[str, Any]],
        force_answer: bool,
    ) -> Message:
        """Send the conversation with these turns."""
        request = build_request(
            model=self._config.model,
            max_tokens=self._config.max_tokens,
            tools=tools,
            memory_block=conversation.memory_block,
            summary=conversation.summary,
            turns=[(t.role, t.content) for t in turns],
            force_answer=force_answer,
        )
        message = await self._client.messages.create(**request)
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
