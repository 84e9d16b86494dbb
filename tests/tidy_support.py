"""Seeded memories for tidy passes, and the fake model's plan tool calls over them."""

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from bot.upkeep.tidy_request import PLAN_TOOL
from memory.categories import Category
from memory.db import create_sessionmaker
from memory.items import MemoryItem
from memory.models import MemoryBatchChange
from tests.fakes.anthropic_server import Reply, tool_use


@dataclass(frozen=True)
class Seeded:
    """The memories a tidy test starts from."""

    tea: MemoryItem
    tea_again: MemoryItem
    oslo: MemoryItem
    lisbon: MemoryItem
    trip: MemoryItem
    alec: MemoryItem
    peanuts: MemoryItem


async def seed(store, owner: int) -> Seeded:
    """Save a duplicate pair, a contradiction, an expired trip, a keeper and a pinned memory."""
    tea = await store.add(owner, "The user likes green tea", Category.PREFERENCE)
    tea_again = await store.add(owner, "the user likes  green tea!", Category.PREFERENCE)
    oslo = await store.add(owner, "The user lives in Oslo", Category.CONTEXT, "home")
    lisbon = await store.add(owner, "The user moved to Lisbon in October 2026", Category.CONTEXT)
    trip = await store.add(owner, "The user flies to Rome on 12 March 2026", Category.CONTEXT)
    alec = await store.add(owner, "Alec is the user's boss", Category.PERSON, "Alec")
    peanuts = await store.add(owner, "The user is allergic to peanuts", Category.CONTEXT)
    peanuts = await store.pin(owner, peanuts.id, True)
    return Seeded(tea, tea_again, oslo, lisbon, trip, alec, peanuts)


def update_line(seeded: Seeded) -> dict[str, Any]:
    """Return the plan line where the newer home wins and the text keeps the change."""
    return {
        "action": "update",
        "memory_id": seeded.lisbon.id,
        "merged_ids": [seeded.oslo.id],
        "content": "The user moved from Oslo to Lisbon in October 2026",
        "reason": "Lisbon is newer than Oslo",
    }


def archive_line(seeded: Seeded) -> dict[str, Any]:
    """Return the plan line that archives the trip whose date passed."""
    return {"action": "archive", "memory_id": seeded.trip.id, "reason": "The trip was in March"}


def plan_reply(*lines: dict[str, Any]) -> Reply:
    """Answer like the model: one call of the plan tool with these lines."""
    return tool_use(PLAN_TOOL, {"changes": list(lines)})


def plan_of(seeded_lines: Callable[[], list[dict[str, Any]]]) -> Callable[[dict], Reply]:
    """Answer with lines built when the request comes (after the test changed memories)."""
    return lambda request: plan_reply(*seeded_lines())


def sent_memories(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the memories a tidy request showed the model."""
    text = request["messages"][0]["content"]
    return [json.loads(line) for line in text.splitlines()[1:]]


def active(items: list[MemoryItem]) -> list[tuple]:
    """Return what a user sees of active memories, byte for byte."""
    return sorted((i.id, i.category, i.subject, i.content, i.pinned) for i in items)


async def batch_changes(harness) -> list[tuple[int, str]]:
    """Return (batch id, memory id) of every change any batch made."""
    sessionmaker = create_sessionmaker(harness.services.engine)
    async with sessionmaker() as session:
        rows = await session.execute(
            select(MemoryBatchChange.batch_id, MemoryBatchChange.memory_id).order_by(
                MemoryBatchChange.id
            )
        )
        return [(row.batch_id, row.memory_id) for row in rows]
