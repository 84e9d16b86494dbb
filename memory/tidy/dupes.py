"""Find exact and normalised duplicates by code, before any model sees the memories."""

import re
import unicodedata
from collections.abc import Sequence

from memory.items import MemoryItem, subject_key
from memory.tidy.plan import PlanLine, TidyAction

_NOT_WORD = re.compile(r"[^\w]+")


def normalised(content: str) -> str:
    """Return a text as compared for duplicates: case, spacing and punctuation folded."""
    folded = unicodedata.normalize("NFKC", content).casefold()
    return " ".join(_NOT_WORD.sub(" ", folded).split())


def duplicate_lines(items: Sequence[MemoryItem]) -> list[PlanLine]:
    """Return one merge per group of unpinned memories with the same normalised text.

    The oldest of a group is kept as it is; the others go to the archive.
    """
    groups: dict[tuple[str, str, str], list[MemoryItem]] = {}
    for item in items:
        if not item.pinned:
            key = (item.category.value, subject_key(item.subject) or "", normalised(item.content))
            groups.setdefault(key, []).append(item)
    lines = []
    for group in groups.values():
        if len(group) < 2:
            continue
        kept, *others = sorted(group, key=lambda i: (i.created_at, i.id))
        reason = "Same text saved more than once"
        if any(other.content != kept.content for other in others):
            reason = "Same text, differing only in case, spacing or punctuation"
        lines.append(
            PlanLine(
                action=TidyAction.MERGE,
                memory_id=kept.id,
                merged_ids=[other.id for other in others],
                content=kept.content,
                reason=reason,
            )
        )
    return lines
