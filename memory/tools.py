"""The memory tools the model may call: each is data (name, description, schema) plus a function."""

import copy
import functools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
)
from sqlalchemy.exc import SQLAlchemyError

from memory.budget import DEFAULT_TOKEN_BUDGET, MemoryFull, new_memory_tokens, usage_of
from memory.categories import Category
from memory.ids import ID_PATTERN
from memory.items import (
    AddMemory,
    ForgetMemory,
    MemoryChange,
    MemoryNotFound,
    UpdateMemory,
    find_by_subject,
    normalize_subject,
)
from memory.store import MemoryStore
from memory.switch import MemorySwitch
from memory.text import storable

logger = logging.getLogger(__name__)

MemoryContent = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=5, max_length=500),
    AfterValidator(storable),
    Field(
        description=(
            "The fact as one self-contained sentence in the third person, "
            "e.g. 'Alec is the user's boss at TechCorp'. 5 to 500 characters."
        )
    ),
]


class AddToMemoryArgs(BaseModel):
    """Arguments of add_to_memory."""

    model_config = ConfigDict(extra="forbid")

    content: MemoryContent
    category: Category = Field(
        description=(
            "person: someone in the user's life; preference: how the user likes things done; "
            "context: facts about the user's life, work or situation; project: ongoing work."
        )
    )
    subject: str | None = Field(
        default=None,
        max_length=200,
        description=(
            "Optional short key the memory is about, such as a person's name ('Alec') or a "
            "project name. One memory per subject: if one exists, update it instead."
        ),
    )

    @field_validator("subject")
    @classmethod
    def _blank_subject_is_none(cls, subject: str | None) -> str | None:
        """Refuse control characters, fold the spacing; a blank subject is no subject."""
        return normalize_subject(storable(subject) if subject else subject)


MemoryId = Annotated[
    str,
    Field(
        pattern=ID_PATTERN.pattern,
        description="The 8-character id shown as [id:...] in the memory block.",
    ),
]


class UpdateMemoryArgs(BaseModel):
    """Arguments of update_memory."""

    model_config = ConfigDict(extra="forbid")

    memory_id: MemoryId
    content: MemoryContent


class ForgetMemoryArgs(BaseModel):
    """Arguments of forget_memory."""

    model_config = ConfigDict(extra="forbid")

    memory_id: MemoryId


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool call returns to the model, and what it changed or refused."""

    content: str
    is_error: bool = False
    change: MemoryChange | None = None
    refusal: MemoryFull | None = None


@dataclass(frozen=True)
class ToolContext:
    """Who a tool call acts for, and the stores it acts on."""

    store: MemoryStore
    switch: MemorySwitch
    owner_id: int
    conversation_id: int | None = None
    token_budget: int = DEFAULT_TOKEN_BUDGET


async def add_to_memory(ctx: ToolContext, args: AddToMemoryArgs) -> ToolOutcome:
    """Save a new memory unless one with the same subject exists."""
    active = await ctx.store.list_active(ctx.owner_id)
    if args.subject:
        existing = find_by_subject(active, args.subject)
        if existing is not None:
            return ToolOutcome(
                f"Not saved: memory {existing.id} already has the subject '{existing.subject}' "
                f"('{existing.content}'). Call update_memory with memory_id '{existing.id}' "
                "and the full new content instead."
            )
    usage = usage_of(active, ctx.token_budget)
    needed = new_memory_tokens(args.content, args.subject)
    if not usage.fits(needed):
        return ToolOutcome(
            f"Not saved: memory is full ({usage.tokens} of {usage.budget} tokens used; this "
            f"memory needs about {needed} more). Consolidate first: merge related or outdated "
            "memories into one with update_memory, or remove obsolete ones with forget_memory, "
            "then call add_to_memory again. Tell the user their memory is full.",
            is_error=True,
            refusal=MemoryFull(args.content, usage),
        )
    edit = AddMemory(args.content, args.category, args.subject)
    change = await ctx.store.apply(ctx.owner_id, edit, ctx.conversation_id, journal=True)
    return ToolOutcome(f"Saved as {change.item.id}", change=change)


async def update_memory(ctx: ToolContext, args: UpdateMemoryArgs) -> ToolOutcome:
    """Append a new version to an existing memory."""
    edit = UpdateMemory(args.memory_id, args.content)
    try:
        change = await ctx.store.apply(ctx.owner_id, edit, ctx.conversation_id, journal=True)
    except MemoryNotFound:
        return ToolOutcome(
            f"No memory with id '{args.memory_id}' exists. Use an id shown in the memory block, "
            "or call add_to_memory to save a new memory.",
            is_error=True,
        )
    before, after = change.previous, change.item
    return ToolOutcome(
        f"Updated {after.id} (version {after.version}). "
        f"Old: '{before.content}'. New: '{after.content}'.",
        change=change,
    )


async def forget_memory(ctx: ToolContext, args: ForgetMemoryArgs) -> ToolOutcome:
    """Soft-delete a memory; the user can undo it or restore it."""
    edit = ForgetMemory(args.memory_id)
    try:
        change = await ctx.store.apply(ctx.owner_id, edit, ctx.conversation_id, journal=True)
    except MemoryNotFound:
        return ToolOutcome(
            f"No memory with id '{args.memory_id}' exists. Use an id shown in the memory block.",
            is_error=True,
        )
    item = change.item
    return ToolOutcome(
        f"Forgot {item.id} ('{item.content}'). The user can undo this from the chat.",
        change=change,
    )


@dataclass(frozen=True)
class Tool:
    """A tool the model can call."""

    name: str
    description: str
    args_model: type[BaseModel]
    run: Callable[[ToolContext, Any], Awaitable[ToolOutcome]]

    def definition(self) -> dict[str, Any]:
        """Return the tool as the Messages API expects it."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": json_schema(self.args_model),
        }


MEMORY_TOOLS: tuple[Tool, ...] = (
    Tool(
        name="add_to_memory",
        description=(
            "Save a new long-term memory about the user, kept across conversations and shown "
            "to you in the memory block. Use it when the user explicitly asks you to remember "
            "something, or after the user agreed when you asked. Never for one-off task "
            "details, secrets, passwords or sensitive data the user did not ask to keep. If a "
            "memory about the same subject exists, use update_memory instead. Returns the new "
            "memory's id."
        ),
        args_model=AddToMemoryArgs,
        run=add_to_memory,
    ),
    Tool(
        name="update_memory",
        description=(
            "Replace the content of an existing memory when a fact has changed (e.g. someone "
            "moved teams) or should be corrected. Keeps the same id and records a new version. "
            "Give the complete new content, not a diff."
        ),
        args_model=UpdateMemoryArgs,
        run=update_memory,
    ),
    Tool(
        name="forget_memory",
        description=(
            'Forget an existing memory when the user asks you to forget it ("forget that Alec '
            'is my boss") or says it no longer applies at all. Use update_memory instead when '
            "the fact changed. The user can undo this."
        ),
        args_model=ForgetMemoryArgs,
        run=forget_memory,
    ),
)


@functools.cache
def _definition(tool: Tool) -> dict[str, Any]:
    """Build a tool's definition once; generating the schemas costs milliseconds per turn."""
    return tool.definition()


def tool_definitions(tools: tuple[Tool, ...] = MEMORY_TOOLS) -> list[dict[str, Any]]:
    """Return the tool definitions in their fixed order, as copies the caller may change."""
    return [copy.deepcopy(_definition(tool)) for tool in tools]


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """Return the model's JSON schema, self-contained and without titles."""
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

    return inline(schema)


def _describe_validation_error(error: ValidationError) -> str:
    """Turn a validation error into one sentence per problem."""
    problems = []
    for detail in error.errors():
        where = ".".join(str(part) for part in detail["loc"]) or "input"
        problems.append(f"{where}: {detail['msg']}")
    return "; ".join(problems)


async def run_tool(
    ctx: ToolContext,
    name: str,
    tool_input: Any,
    tools: tuple[Tool, ...] = MEMORY_TOOLS,
) -> ToolOutcome:
    """Validate and run one tool call; problems come back as error results, never raise."""
    tool = next((t for t in tools if t.name == name), None)
    if tool is None:
        known = ", ".join(t.name for t in tools)
        return ToolOutcome(f"Unknown tool '{name}'. Available tools: {known}.", is_error=True)
    if not await ctx.switch.is_on(ctx.owner_id):
        # Normally no tools are offered then; a stale or stubborn call still writes nothing.
        return ToolOutcome(
            "Memory is turned off by the user (/memory off): nothing was read or written. "
            "Answer without memory and do not call memory tools.",
            is_error=True,
        )
    try:
        args = tool.args_model.model_validate(tool_input)
    except ValidationError as error:
        return ToolOutcome(
            f"Invalid input for {name}: {_describe_validation_error(error)}. "
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
