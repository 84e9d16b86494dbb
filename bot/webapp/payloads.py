"""The API's JSON: memories, versions, reminders and batches as plain data."""

import functools
import json
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.reminders.records import ReminderRecord
from bot.webapp.services import CitingReply
from memory.batches.listing import BatchSummary
from memory.batches.values import BatchNote
from memory.items import MemoryItem, MemoryVersionItem
from memory.list_rows import ListedMemory, MemoryList, short, utc_text

# No spaces after separators: the list of 1,000 memories is ~10% smaller for it.
dumps = functools.partial(json.dumps, separators=(",", ":"))


def iso(moment: datetime | None) -> str | None:
    """Return an instant as ISO 8601 text, or None."""
    return moment.isoformat() if moment is not None else None


def memory(item: MemoryItem, in_block: bool = True) -> dict[str, Any]:
    """Return a memory as the page shows it."""
    return {
        "id": item.id,
        "category": item.category.value,
        "subject": item.subject,
        "content": item.content,
        "version": item.version,
        "pinned": item.pinned,
        "in_block": in_block,
        "created_at": iso(item.created_at),
        "updated_at": iso(item.updated_at),
        "deleted_at": iso(item.deleted_at),
    }


def listed(row: ListedMemory, in_block: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Return a memory as a list shows it: short content, no version, no sources."""
    memory_id, category, subject, content, pinned, created_at, updated_at = row
    return {
        "id": memory_id,
        "category": category,
        "subject": subject,
        "content": short(content),
        "pinned": pinned,
        "in_block": memory_id in in_block,
        "created_at": utc_text(created_at),
        "updated_at": utc_text(updated_at),
    }


def listing(memories: MemoryList) -> str:
    """Return the list's JSON: the active memories, the recently deleted and the switch."""
    in_block = memories.in_block
    return dumps(
        {
            "memories": [listed(row, in_block) for row in memories.memories],
            "deleted": [listed(row) for row in memories.deleted],
            "enabled": memories.enabled,
        }
    )


def version(entry: MemoryVersionItem, notes: dict[int, BatchNote]) -> dict[str, Any]:
    """Return one version with its date and what made it: you, the model, a tidy pass..."""
    note = notes.get(entry.version_number)
    if note is not None:
        made_by = note.kind.value
    elif entry.source_conversation_id is not None:
        made_by = "model"
    else:
        made_by = "you"
    return {
        "number": entry.version_number,
        "content": entry.content,
        "created_at": iso(entry.created_at),
        "made_by": made_by,
        "reason": note.reason if note is not None else None,
        "batch_id": note.batch_id if note is not None else None,
    }


def citing(reply: CitingReply) -> dict[str, Any]:
    """Return a reply that drew on a memory: when, and its first words."""
    return {"at": iso(reply.created_at), "excerpt": reply.excerpt}


def reminder(record: ReminderRecord, zone: ZoneInfo) -> dict[str, Any]:
    """Return a reminder with its next time in the owner's zone."""
    upcoming = record.next_fire_at.astimezone(zone) if record.next_fire_at else None
    return {
        "id": record.id,
        "text": record.text,
        "repeats": record.repeats,
        "next_at": iso(record.next_fire_at),
        "next_local": upcoming.strftime("%a %d %b %Y, %H:%M") if upcoming else None,
        "state": record.state.value,
    }


def batch(summary: BatchSummary) -> dict[str, Any]:
    """Return an applied batch with its lines."""
    return {
        "id": summary.id,
        "kind": summary.kind.value,
        "created_at": iso(summary.created_at),
        "undone": summary.undone,
        "reverts_id": summary.reverts_id,
        "lines": [
            {"memory_id": line.memory_id, "effect": line.effect.value, "reason": line.reason}
            for line in summary.lines
        ],
    }
