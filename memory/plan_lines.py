"""A batch's lines as the batch keeps them: a tidy change, or a memory an import adds.

The lines are stored as JSON in agent_memory_batches.plan; they are read into these models
once, where they come out of the database or are made, and written back in the same shape:
keys a line never had stay out, and keys these models do not know are kept.
"""

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, TypeAdapter

from memory.categories import Category
from memory.tidy.plan import TidyAction

# Frozen: a line changes by a copy (its skip flag). Extra keys of older rows survive.
_STORED = ConfigDict(frozen=True, extra="allow")


class TidyLine(BaseModel):
    """A merge, update or archive, with the versions and texts of the memories it saw."""

    model_config = _STORED

    action: TidyAction
    memory_id: str
    merged_ids: list[str] = []
    content: str | None = None
    reason: str
    versions: dict[str, int]
    texts: dict[str, str] = {}
    skip: bool = False


class ImportLine(BaseModel):
    """A memory an import saves."""

    model_config = _STORED

    action: Literal["add"]
    category: Category
    subject: str | None = None
    content: str
    reason: str
    skip: bool = False


BatchLine = TidyLine | ImportLine

_LINES = TypeAdapter(list[BatchLine])


def read_lines(plan: Sequence[BatchLine | dict[str, Any]] | None) -> list[BatchLine]:
    """Return a batch's lines from its stored JSON (lines already read pass as they are)."""
    return _LINES.validate_python(list(plan or []))


def stored_lines(lines: Sequence[BatchLine]) -> list[dict[str, Any]]:
    """Return lines as the batch keeps them: the JSON they were read from, or made as."""
    stored: list[dict[str, Any]] = _LINES.dump_python(list(lines), mode="json", exclude_unset=True)
    return stored
