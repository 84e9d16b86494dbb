"""The edits a store makes inside a transaction: each keeps counts, keys and the index in step."""

from sqlalchemy import Select, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from memory.block import line_tokens
from memory.categories import Category
from memory.ids import new_memory_id
from memory.items import (
    AddMemory,
    ChangeKind,
    Edit,
    ForgetMemory,
    MemoryAtLimit,
    MemoryChange,
    UpdateMemory,
    normalize_subject,
    subject_key,
)
from memory.models import Memory, MemoryVersion, utcnow
from memory.queries import count_active, item_of, load_active_with_current, lock_memory
from memory.retry import KeyTaken
from memory.search_index import index_items, unindex


def new_version(memory: Memory, number: int, content: str, source: int | None) -> MemoryVersion:
    """Return a memory's next version, counting its line's tokens and marking it changed."""
    now = utcnow()
    memory.tokens = line_tokens(memory.id, memory.subject, content)
    memory.changed_at = now
    return MemoryVersion(
        memory_id=memory.id,
        version_number=number,
        content=content,
        source_conversation_id=source,
        created_at=now,
    )


async def insert(
    session: AsyncSession, owner_id: int, edit: AddMemory, source: int | None
) -> MemoryChange:
    """Insert a memory under a fresh id, and its first version."""
    subject = normalize_subject(edit.subject)
    memory = Memory(
        id=new_memory_id(),
        owner_id=owner_id,
        category=Category(edit.category).value,
        subject=subject,
        subject_key=subject_key(subject),
        created_at=utcnow(),
    )
    version = new_version(memory, 1, edit.content, source)
    session.add(memory)
    await _take_key(session, select(Memory.id).where(Memory.id == memory.id))
    session.add(version)
    item = item_of(memory, version)
    await index_items(session, [item])
    return MemoryChange(ChangeKind.ADDED, item)


async def append_version(
    session: AsyncSession, owner_id: int, edit: UpdateMemory, source: int | None
) -> MemoryChange:
    """Append a version with new content to an active memory."""
    await lock_memory(session, owner_id, edit.memory_id)
    memory, current = await load_active_with_current(session, owner_id, edit.memory_id)
    before = item_of(memory, current)
    version = new_version(memory, current.version_number + 1, edit.content, source)
    session.add(version)
    await _take_key(session, _version_claim(memory.id, version.version_number))
    after = item_of(memory, version)
    await index_items(session, [after])
    return MemoryChange(ChangeKind.UPDATED, after, before)


async def _take_key(session: AsyncSession, holder: Select[str] | Select[int]) -> None:
    """Write the pending row that takes a unique key; holder selects the key if it is taken."""
    try:
        await session.flush()
    except IntegrityError as error:
        raise KeyTaken(error, holder) from error


def _version_claim(memory_id: str, number: int) -> Select[int]:
    """Select the version a writer claims, to tell whether a concurrent one took it."""
    return select(MemoryVersion.id).where(
        MemoryVersion.memory_id == memory_id, MemoryVersion.version_number == number
    )


async def soft_delete(session: AsyncSession, owner_id: int, edit: ForgetMemory) -> MemoryChange:
    """Mark an active memory deleted; the change carries it as it was."""
    memory, current = await load_active_with_current(session, owner_id, edit.memory_id)
    before = item_of(memory, current)
    memory.deleted_at = utcnow()
    await unindex(session, [memory.id])
    return MemoryChange(ChangeKind.FORGOTTEN, before)


async def make(
    session: AsyncSession, owner_id: int, edit: Edit, source: int | None
) -> MemoryChange:
    """Make one edit inside the caller's transaction.

    Raises KeyTaken when the new id or version number is taken, a lost race if it is still.
    """
    if isinstance(edit, AddMemory):
        return await insert(session, owner_id, edit, source)
    if isinstance(edit, UpdateMemory):
        return await append_version(session, owner_id, edit, source)
    return await soft_delete(session, owner_id, edit)


async def bring_back(
    session: AsyncSession, memory: Memory, current: MemoryVersion, limit: int
) -> None:
    """Make a deleted memory active again, as recent as a new save, and index it.

    Raises MemoryAtLimit when the owner already has limit active memories: a restore or an
    undo must not get round the cap a save keeps to.
    """
    if await count_active(session, memory.owner_id) >= limit:
        raise MemoryAtLimit(limit)
    memory.deleted_at = None
    memory.changed_at = utcnow()
    await index_items(session, [item_of(memory, current)])
