"""Hand-built transcripts for the rule tests: tool calls, memories and replies as given."""

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from evals.transcript import Exchange, Transcript
from memory.categories import Category
from memory.items import MemoryItem, MemoryRecord

T0 = datetime(2026, 3, 11, 9, 30, tzinfo=UTC)
TOOLS = [{"name": "add_to_memory"}, {"name": "update_memory"}, {"name": "forget_memory"}]
USAGE = {"input_tokens": 100, "output_tokens": 10, "cache_read_input_tokens": 0}


def memory(
    memory_id: str,
    content: str,
    category: str = "person",
    subject: str | None = None,
    version: int = 1,
    forgotten: bool = False,
) -> MemoryRecord:
    """Return a memory as the store exports it (versions left out)."""
    item = MemoryItem(
        memory_id,
        1,
        Category(category),
        subject,
        content,
        version,
        T0,
        T0,
        T0 if forgotten else None,
    )
    return MemoryRecord(item, [])


def agent_call(turn: int, calls: list[tuple[str, dict, str, bool]], block: str = "") -> list:
    """Return the two exchanges of a turn whose model made these (name, input, result, error)."""
    system = [{"type": "text", "text": "instructions"}, {"type": "text", "text": block}]
    uses = [
        {"type": "tool_use", "id": f"toolu_{turn}_{i}", "name": name, "input": arguments}
        for i, (name, arguments, _, _) in enumerate(calls)
    ]
    results = [
        {"type": "tool_result", "tool_use_id": f"toolu_{turn}_{i}", "content": result}
        | ({"is_error": True} if error else {})
        for i, (_, _, result, error) in enumerate(calls)
    ]
    user = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    first = {"system": system, "tools": TOOLS, "messages": [user]}
    second = {
        **first,
        "messages": [
            user,
            {"role": "assistant", "content": uses},
            {"role": "user", "content": results},
        ],
    }
    return [
        Exchange(turn, first, {"content": uses, "usage": USAGE, "model": "m"}),
        Exchange(turn, second, {"content": [{"type": "text", "text": "ok"}], "usage": USAGE}),
    ]


def transcript(
    replies: list[str | None] | None = None,
    calls: dict[int, list[tuple[str, dict, str, bool]]] | None = None,
    memories: Sequence[MemoryRecord] = (),
    seeds: dict[str, str] | None = None,
    exchanges: Sequence[Exchange] = (),
    **extra: Any,
) -> Transcript:
    """Return a transcript with tool calls by turn, memories, seeds and replies."""
    made = [e for turn, turn_calls in (calls or {}).items() for e in agent_call(turn, turn_calls)]
    return Transcript(
        list(replies or ["ok"]), [*made, *exchanges], seeds or {}, list(memories), **extra
    )
