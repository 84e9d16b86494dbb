"""Apply a batch's chosen lines inside one transaction, each change an ordinary version."""

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from memory.batches.values import BatchStale
from memory.items import AddMemory, ForgetMemory, MemoryNotFound, UpdateMemory
from memory.models import MemoryBatchChange
from memory.plan_lines import BatchLine, ImportLine, TidyLine
from memory.queries import load_active_with_current
from memory.tidy.plan import TidyAction
from memory.writes import make


@dataclass(frozen=True)
class Step:
    """Where one memory stood before and after a batch changed it."""

    memory_id: str
    before_version: int | None
    before_deleted: bool
    after_version: int
    after_deleted: bool


async def _current(session: AsyncSession, owner_id: int, memory_id: str, seen: int) -> int:
    """Return a memory's current version, or raise BatchStale if it is not the one seen."""
    try:
        _, current = await load_active_with_current(session, owner_id, memory_id)
    except MemoryNotFound:
        raise BatchStale(memory_id) from None
    if current.version_number != seen:
        raise BatchStale(memory_id)
    return current.version_number


async def _archive(session: AsyncSession, owner_id: int, memory_id: str, version: int) -> Step:
    """Move a memory to the archive (a soft delete, never a deletion)."""
    await make(session, owner_id, ForgetMemory(memory_id), None)
    return Step(memory_id, version, False, version, True)


async def _rewrite(session: AsyncSession, owner_id: int, line: TidyLine) -> list[Step]:
    """Give the kept memory its new text (unless it has it), then archive the merged ones."""
    versions = line.versions
    kept = line.memory_id
    seen = {mid: await _current(session, owner_id, mid, versions[mid]) for mid in versions}
    _, current = await load_active_with_current(session, owner_id, kept)
    steps = []
    # A merge or update always has its new text (tidy_plan's rules); without it, none is set.
    if line.content is not None and current.content != line.content:
        change = await make(session, owner_id, UpdateMemory(kept, line.content), None)
        steps.append(Step(kept, seen[kept], False, change.item.version, False))
    for merged in line.merged_ids:
        steps.append(await _archive(session, owner_id, merged, seen[merged]))
    return steps


async def _add(session: AsyncSession, owner_id: int, line: ImportLine) -> Step:
    """Save an imported memory."""
    edit = AddMemory(line.content, line.category, line.subject)
    change = await make(session, owner_id, edit, None)
    return Step(change.item.id, None, True, change.item.version, False)


async def apply_line(session: AsyncSession, owner_id: int, line: BatchLine) -> list[Step]:
    """Make one line's changes; raise BatchStale if a memory changed since the plan."""
    if isinstance(line, ImportLine):
        return [await _add(session, owner_id, line)]
    if line.action is TidyAction.ARCHIVE:
        memory_id = line.memory_id
        version = await _current(session, owner_id, memory_id, line.versions[memory_id])
        return [await _archive(session, owner_id, memory_id, version)]
    return await _rewrite(session, owner_id, line)


def record_steps(batch_id: int, steps: list[Step], reason: str | None) -> list[MemoryBatchChange]:
    """Return the rows that tag a line's changes with their batch and reason."""
    return [
        MemoryBatchChange(
            batch_id=batch_id,
            memory_id=step.memory_id,
            before_version=step.before_version,
            before_deleted=step.before_deleted,
            after_version=step.after_version,
            after_deleted=step.after_deleted,
            reason=reason,
        )
        for step in steps
    ]
