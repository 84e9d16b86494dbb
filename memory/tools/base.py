"""What a tool is (data: name, description, schema; plus one function) and how a call is run."""

import copy
import functools
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any, Literal, Protocol, TypedDict

from pydantic import BaseModel, ValidationError
from sqlalchemy.exc import SQLAlchemyError

from memory.budget import DEFAULT_MEMORY_LIMIT, MemoryFull
from memory.items import MemoryChange
from memory.proposals import Proposal, ProposalStore
from memory.store import MemoryStore
from memory.switch import MemorySwitch

logger = logging.getLogger(__name__)


class FoundTurn(Protocol):
    """A past message search_conversations found: whose words ("you said", "Bob" said,
    a forward's author's), when, and the words around the match (in a quote it replies to)."""

    # Read-only, so frozen dataclasses (bot/conversations' TurnHit) satisfy it.
    @property
    def role(self) -> str: ...
    @property
    def said_at(self) -> datetime: ...
    @property
    def excerpt(self) -> str: ...
    @property
    def who(self) -> str: ...
    @property
    def quote_excerpt(self) -> str | None: ...


class PastConversations(Protocol):
    """Where search_conversations looks: the owner's stored conversations."""

    async def search(
        self,
        owner_id: int,
        query: str,
        limit: int,
        *,
        skip_conversation: int | None = None,
        order: Literal["relevance", "newest"] = "relevance",
    ) -> Sequence[FoundTurn]:
        """Return the owner's turns matching the words, best (or newest) first, not from one."""


@dataclass(frozen=True)
class FoundMemory:
    """A memory a search found, as the model gets it to cite: its id, a title, its content."""

    memory_id: str
    title: str
    content: str


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool call returns to the model, and what it changed or refused.

    found: the memories a search found, which follow content as results the model can cite.
    """

    content: str
    is_error: bool = False
    change: MemoryChange | None = None
    refusal: MemoryFull | None = None
    # A memory proposed to the user (propose_memory): the bot asks with buttons.
    proposal: Proposal | None = None
    found: tuple[FoundMemory, ...] = ()


@dataclass(frozen=True)
class ToolContext:
    """Who a tool call acts for, and what it acts on."""

    store: MemoryStore
    switch: MemorySwitch
    owner_id: int
    conversation_id: int | None = None
    memory_limit: int = DEFAULT_MEMORY_LIMIT
    zone: tzinfo = UTC
    conversations: PastConversations | None = None
    # The group member whose message is answered; None in a private chat.
    speaker: str | None = None
    # Where propose_memory keeps proposals (None: it cannot propose), and the stored turn of
    # the user's message being answered: one proposal per reply.
    proposals: ProposalStore | None = None
    turn_id: int | None = None


class ToolDefinition(TypedDict):
    """A tool as the Messages API takes it (the SDK's ToolParam; this layer does not import it)."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class Tool:
    """A tool the model can call."""

    name: str
    description: str
    args_model: type[BaseModel]
    run: Callable[[ToolContext, Any], Awaitable[ToolOutcome]]

    def definition(self) -> ToolDefinition:
        """Return the tool as the Messages API expects it."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": json_schema(self.args_model),
        }


def tool_definitions(tools: Sequence[Tool]) -> list[ToolDefinition]:
    """Return the tool definitions in their fixed order, as copies the caller may change."""
    return [tool.definition() for tool in tools]


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """Return the model's JSON schema, self-contained and without titles: a copy to change."""
    return copy.deepcopy(_json_schema(model))


@functools.cache
def _json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """Make the model's schema once: pydantic takes milliseconds a model, every Agent asks."""
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                target = definitions[node["$ref"].rsplit("/", 1)[-1]]
                merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
                return inline(merged)
            return {k: inline(v) for k, v in node.items() if k != "title"}
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    return {key: inline(value) for key, value in schema.items() if key != "title"}


def describe_validation_error(error: ValidationError) -> str:
    """Turn a validation error into one sentence per problem."""
    problems = []
    for detail in error.errors():
        where = ".".join(str(part) for part in detail["loc"]) or "input"
        problems.append(f"{where}: {detail['msg']}")
    return "; ".join(problems)


async def run_tool(
    ctx: ToolContext, name: str, tool_input: Any, tools: Sequence[Tool]
) -> ToolOutcome:
    """Validate and run one tool call; problems come back as error results, never raise."""
    tool = next((t for t in tools if t.name == name), None)
    if tool is None:
        known = ", ".join(t.name for t in tools)
        return ToolOutcome(f"Unknown tool '{name}'. Available tools: {known}.", is_error=True)
    if not await ctx.switch.is_on(ctx.owner_id):
        # Normally no tools are offered then; a stale or stubborn call still reads nothing.
        return ToolOutcome(
            "Memory is turned off by the user (/memory off): nothing was read or written. "
            "Answer without memory and do not call memory tools.",
            is_error=True,
        )
    try:
        args = tool.args_model.model_validate(tool_input)
    except ValidationError as error:
        return ToolOutcome(
            f"Invalid input for {name}: {describe_validation_error(error)}. "
            "Nothing was saved; fix the arguments and call the tool again.",
            is_error=True,
        )
    try:
        return await tool.run(ctx, args)
    except SQLAlchemyError:
        # The write and its undo entry roll back together, so nothing half-done remains.
        logger.exception("memory tool %s failed in the database", name)
        return ToolOutcome(
            f"{name} failed: the memory database had an error, so nothing was changed. "
            "Tell the user memory is unavailable right now; do not retry in this turn.",
            is_error=True,
        )
