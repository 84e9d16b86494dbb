"""The one model call of a tidy pass: the memories in, a plan out through a forced tool call."""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from anthropic import AsyncAnthropic
from anthropic.types import ToolParam
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from pydantic import ValidationError

from memory.items import MemoryItem
from memory.tidy.plan import PlanRejected, TidyPlan
from memory.tokens import count_tokens

PLAN_TOOL = "propose_tidy_plan"
# Output tokens per pass: a quarter of the cap, and never more than this.
MAX_OUTPUT_TOKENS = 8192
# Tokens counted locally are an estimate of the API's: keep this much of the cap spare.
ESTIMATE_MARGIN = 0.8

TIDY_INSTRUCTIONS = """\
You tidy the long-term memory a personal assistant keeps about its user. You get the \
memories as JSON lines (id, category, subject, content, created, changed, pinned) and today's \
date, and you call propose_tidy_plan once with the changes worth making. Every memory you \
leave out stays exactly as it is: when in doubt, leave it out.

- merge: near-duplicates that state the same fact. memory_id is the one kept, merged_ids the \
others (they go to the archive), content the merged text. The merged text must keep every \
name, number and significant word of each source; never merge two different facts (two \
different favourite colours are two facts, or one changed fact: see update).
- update: a contradiction. The newer fact wins and the text keeps the change, e.g. "Moved \
from Oslo to Lisbon in October 2026". memory_id is the memory kept, merged_ids the older \
contradicting ones, content keeps the key words of both. Never resolve a contradiction by \
archiving alone.
- archive: a dated fact whose date has passed (an event, a trip, a deadline): memory_id only, \
no content, no merged_ids. Facts without a date are never archived.

Never touch a pinned memory. Each id at most once in the whole plan. At most {limit} changes. \
Texts are plain sentences about the user: no ids, tool names, scores or JSON. Each change has \
a short reason the user will read."""


@dataclass(frozen=True)
class ModelPlan:
    """The plan the model proposed and what the call cost."""

    plan: TidyPlan
    tokens: int
    covered: int


def plan_tool() -> ToolParam:
    """Return the tool whose input is the plan, with the plan's JSON schema."""
    return {
        "name": PLAN_TOOL,
        "description": "Propose the tidy plan: merges, updates and archives, each with a reason.",
        "input_schema": TidyPlan.model_json_schema(),
    }


def memory_lines(items: Sequence[MemoryItem]) -> list[str]:
    """Return each memory as one JSON line the model reads."""
    return [
        json.dumps(
            {
                "id": item.id,
                "category": item.category.value,
                "subject": item.subject,
                "content": item.content,
                "created": item.created_at.date().isoformat(),
                "changed": item.updated_at.date().isoformat(),
                "pinned": item.pinned,
            },
            ensure_ascii=False,
        )
        for item in items
    ]


def fitting(lines: list[str], budget: int) -> list[str]:
    """Return the first lines whose tokens fit the budget."""
    kept, used = [], 0
    for line in lines:
        used += count_tokens(line) + 1
        if used > budget:
            break
        kept.append(line)
    return kept


def plan_request(
    model: str, items: Sequence[MemoryItem], today: date, cap: int, room: int
) -> tuple[MessageCreateParamsNonStreaming, int]:
    """Return the messages.create arguments for a pass of at most room changes within cap
    tokens, and how many memories it covers."""
    output = min(MAX_OUTPUT_TOKENS, cap // 4)
    system = TIDY_INSTRUCTIONS.format(limit=room)
    tool = plan_tool()
    fixed = count_tokens(system) + count_tokens(json.dumps(tool)) + 50
    lines = fitting(memory_lines(items), int((cap - output) * ESTIMATE_MARGIN) - fixed)
    text = f"Today is {today.isoformat()}. The memories:\n" + "\n".join(lines)
    request: MessageCreateParamsNonStreaming = {
        "model": model,
        "max_tokens": output,
        "system": system,
        "tools": [tool],
        "tool_choice": {"type": "tool", "name": PLAN_TOOL},
        "messages": [{"role": "user", "content": text}],
    }
    return request, len(lines)


async def ask_for_plan(
    client: AsyncAnthropic, request: MessageCreateParamsNonStreaming, covered: int
) -> ModelPlan:
    """Call the model once; raise PlanRejected if it did not call the tool with a valid plan."""
    response = await client.messages.create(**request)
    tokens = response.usage.input_tokens + response.usage.output_tokens
    calls = [b for b in response.content if b.type == "tool_use" and b.name == PLAN_TOOL]
    try:
        if len(calls) != 1:
            raise PlanRejected("the model did not call the plan tool once")
        try:
            plan = TidyPlan.model_validate(calls[0].input)
        except ValidationError as error:
            raise PlanRejected(
                f"the plan's shape is wrong ({error.error_count()} errors)"
            ) from None
    except PlanRejected as rejected:
        rejected.tokens = tokens
        raise
    return ModelPlan(plan, tokens, covered)
