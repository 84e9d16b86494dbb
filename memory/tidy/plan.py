"""A tidy plan as the model proposes it, and the rules that accept it whole or reject it whole."""

import math
import re
from collections.abc import Sequence
from enum import StrEnum

from pydantic import BaseModel, Field

from memory.facts import has_date, missing_facts
from memory.items import MemoryItem
from memory.secret_text import secret_in

# A pass may change at most this share of the memories (and always at least MIN_CHANGES),
# and never more than one message can show with a skip button each.
MAX_CHANGE_SHARE = 0.4
MIN_CHANGES = 3
MAX_CHANGES = 20
MAX_REASON_CHARS = 300
# What a tool call, a search result or an id looks like: never the text of a memory.
TOOL_TEXT = re.compile(
    r"\[id:|tool_(use|result)|</?[a-z_]+>|\bscore\s*[:=]|\brelevance\b|\bis_error\b|^\s*[{\[]",
    re.IGNORECASE,
)


class TidyAction(StrEnum):
    """What one line of a plan does."""

    MERGE = "merge"
    UPDATE = "update"
    ARCHIVE = "archive"


class PlanLine(BaseModel):
    """One change: merge others into a memory, update it to the newer fact, or archive it."""

    action: TidyAction
    memory_id: str = Field(description="The memory kept (merge, update) or archived (archive).")
    merged_ids: list[str] = Field(
        default_factory=list,
        description="merge/update: the other memories folded into memory_id, then archived.",
    )
    content: str | None = Field(
        default=None, description="merge/update: the new text of memory_id; archive: none."
    )
    reason: str = Field(description="One short sentence the user reads: why this change.")


class TidyPlan(BaseModel):
    """The whole plan; memories it leaves out stay as they are."""

    changes: list[PlanLine] = Field(default_factory=list)


class PlanRejected(ValueError):
    """The plan broke a rule; none of it is applied."""

    # The tokens the pass spent on the rejected plan.
    tokens: int = 0


def max_changes(count: int) -> int:
    """Return how many lines a plan over count memories may have."""
    return min(MAX_CHANGES, max(MIN_CHANGES, math.floor(count * MAX_CHANGE_SHARE)))


def validate_plan(plan: TidyPlan, items: Sequence[MemoryItem]) -> None:
    """Raise PlanRejected unless every line of the plan keeps every rule."""
    by_id = {item.id: item for item in items}
    if len(plan.changes) > max_changes(len(items)):
        raise PlanRejected(f"{len(plan.changes)} changes, at most {max_changes(len(items))}")
    seen: set[str] = set()
    for number, line in enumerate(plan.changes, 1):
        try:
            _check_line(line, by_id, seen)
        except PlanRejected as error:
            raise PlanRejected(f"change {number}: {error}") from None


def _check_line(line: PlanLine, by_id: dict[str, MemoryItem], seen: set[str]) -> None:
    """Raise PlanRejected unless one line keeps the rules (seen: ids of the lines before)."""
    ids = [line.memory_id, *line.merged_ids]
    for memory_id in ids:
        item = by_id.get(memory_id)
        if item is None:
            raise PlanRejected(f"{memory_id!r} is not one of the memories")
        if item.pinned:
            raise PlanRejected(f"{memory_id} is pinned")
        if memory_id in seen:
            raise PlanRejected(f"{memory_id} appears more than once")
        seen.add(memory_id)
    if not line.reason.strip() or len(line.reason) > MAX_REASON_CHARS:
        raise PlanRejected("a change needs a short reason")
    if line.action is TidyAction.ARCHIVE:
        _check_archive(line, by_id[line.memory_id])
    else:
        _check_new_text(line, [by_id[memory_id] for memory_id in ids])


def _check_archive(line: PlanLine, item: MemoryItem) -> None:
    """Archive only dated facts, alone: a contradiction is resolved by an update, not this."""
    if line.merged_ids or line.content is not None:
        raise PlanRejected("an archive takes one memory and no text")
    if not has_date(item.content):
        raise PlanRejected(f"{item.id} holds no date that could have passed")


def _check_new_text(line: PlanLine, sources: list[MemoryItem]) -> None:
    """A merge or update writes clean text that keeps every source's key facts."""
    content = (line.content or "").strip()
    if not 5 <= len(content) <= 500:
        raise PlanRejected("the new text must be 5 to 500 characters")
    if TOOL_TEXT.search(content):
        raise PlanRejected("the new text holds tool or score text")
    if (secret := secret_in(content)) is not None:
        raise PlanRejected(f"the new text looks like {secret}: secrets are never saved")
    if line.action is TidyAction.MERGE and not line.merged_ids:
        raise PlanRejected("a merge needs the memories it merges")
    for source in sources:
        if lost := missing_facts(source.content, content):
            raise PlanRejected(f"the new text drops {', '.join(lost)} of {source.id}")
