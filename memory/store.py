"""Owner-scoped memory storage: append-only versions, soft delete and restore, export.

Every read and write is scoped by owner: another owner's id is simply not found.
"""

from collections.abc import Sequence
from dataclasses import replace

from sqlalchemy import Select, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memory.categories import Category
from memory.ids import new_memory_id
from memory.items import (
    AddMemory,
    ChangeKind,
    Edit,
    ForgetMemory,
    MemoryChange,
    MemoryItem,
    MemoryNotDeleted,
    MemoryNotFound,
    MemoryRecord,
    MemoryVersionItem,
    UpdateMemory,
    normalize_subject,
)
from memory.models import Memory, MemoryVersion, utcnow
from memory.queries import (
    ITEM_COLUMNS,
    item_from_row,
    item_of,
    load_active_memories,
    load_with_current,
    lock_memory,
    version_item,
    with_current_version,
)
from memory.retry import retry_lost_races
from memory.stored_block import memory_change
from memory.undo import record_change

# 62**8 ids make a collision rare; five tries make a failure from one unheard of.
ID_ATTEMPTS = 5
# Every failed attempt means another writer's version went in, so this many attempts let
# that many writers race on one memory without anyone failing.
VERSION_ATTEMPTS = 64


async def _insert(
    session: AsyncSession, owner_id: int, edit: AddMemory, source: int | None, claims: list
) -> MemoryChange:
    """Insert a memory under a fresh id, and its first version."""
    now = utcnow()
    memory = Memory(
        id=new_memory_id(),
        owner_id=owner_id,
        category=Category(edit.category).value,
        subject=normalize_subject(edit.subject),
        created_at=now,
    )
    claims.append(select(Memory.id).where(Memory.id == memory.id))
    session.add(memory)
    await session.flush()
    version = MemoryVersion(
        memory_id=memory.id,
        version_number=1,
        content=edit.content,
        source_conversation_id=source,
        created_at=now,
    )
    session.add(version)
    return MemoryChange(ChangeKind.ADDED, item_of(memory, version))


async def _append_version(
    session: AsyncSession, owner_id: int, edit: UpdateMemory, source: int | None, claims: list
) -> MemoryChange:
    """Append a version with new content to an active memory."""
    await lock_memory(session, owner_id, edit.memory_id)
    memory, current = await load_with_current(session, owner_id, edit.memory_id, active=True)
    version = MemoryVersion(
        memory_id=memory.id,
        version_number=current.version_number + 1,
        content=edit.content,
        source_conversation_id=source,
        created_at=utcnow(),
    )
    claims.append(
        select(MemoryVersion.id).where(
            MemoryVersion.memory_id == memory.id,
            MemoryVersion.version_number == version.version_number,
        )
    )
    session.add(version)
    return MemoryChange(ChangeKind.UPDATED, item_of(memory, version), item_of(memory, current))


async def _soft_delete(session: AsyncSession, owner_id: int, edit: ForgetMemory) -> MemoryChange:
    """Mark an active memory deleted; the change carries it as it was."""
    memory, current = await load_with_current(session, owner_id, edit.memory_id, active=True)
    before = item_of(memory, current)
    memory.deleted_at = utcnow()
    return MemoryChange(ChangeKind.FORGOTTEN, before)


async def _make(
    session: AsyncSession, owner_id: int, edit: Edit, source: int | None, claims: list
) -> MemoryChange:
    """Make one edit inside the caller's transaction."""
    if isinstance(edit, AddMemory):
        return await _insert(session, owner_id, edit, source, claims)
    if isinstance(edit, UpdateMemory):
        return await _append_version(session, owner_id, edit, source, claims)
    return await _soft_delete(session, owner_id, edit)


class MemoryStore:
    """Memories and their versions, each owner's apart from every other's."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession]):
        self._sessionmaker = sessionmaker

    async def apply(
        self, owner_id: int, edit: Edit, source: int | None = None, *, journal: bool = False
    ) -> MemoryChange:
        """Make one edit in one transaction, with its undo-log entry when journal is set."""
        # Each attempt claims a unique key (a new id, or the next version number); a
        # conflict is a lost race only if a concurrent writer holds that key now.
        claims: list[Select] = []

        async def attempt() -> MemoryChange:
            async with memory_change(self._sessionmaker, owner_id) as session:
                change = await _make(session, owner_id, edit, source, claims)
                if not journal:
                    return change
                item = change.item
                change_id = await record_change(
                    session, owner_id, item.id, change.kind, item.version
                )
                return replace(change, change_id=change_id)

        async def lost_race() -> bool:
            async with self._sessionmaker() as session:
                return bool(claims) and await session.scalar(claims[-1]) is not None

        attempts = ID_ATTEMPTS if isinstance(edit, AddMemory) else VERSION_ATTEMPTS
        return await retry_lost_races(attempt, lost_race, attempts)

    async def add(
        self,
        owner_id: int,
        content: str,
        category: Category,
        subject: str | None = None,
        source_conversation_id: int | None = None,
    ) -> MemoryItem:
        """Store a new memory and its first version in one transaction."""
        edit = AddMemory(content, category, subject)
        return (await self.apply(owner_id, edit, source_conversation_id)).item

    async def update(
        self,
        owner_id: int,
        memory_id: str,
        content: str,
        source_conversation_id: int | None = None,
    ) -> tuple[MemoryItem, MemoryItem]:
        """Append a version with new content; return the memory before and after."""
        change = await self.apply(
            owner_id, UpdateMemory(memory_id, content), source_conversation_id
        )
        return change.previous, change.item

    async def delete(self, owner_id: int, memory_id: str) -> MemoryItem:
        """Soft-delete an active memory and return it as it was."""
        return (await self.apply(owner_id, ForgetMemory(memory_id))).item

    async def list_active(self, owner_id: int) -> list[MemoryItem]:
        """Return the owner's active memories in block order."""
        async with self._sessionmaker() as session:
            return await load_active_memories(session, owner_id)

    async def find(self, owner_id: int, memory_id: str) -> MemoryItem:
        """Return one memory of this owner, deleted or not."""
        async with self._sessionmaker() as session:
            return item_of(*await load_with_current(session, owner_id, memory_id, active=False))

    async def history(self, owner_id: int, memory_id: str) -> list[MemoryVersionItem]:
        """Return every version of one of the owner's memories, oldest first."""
        query = (
            select(MemoryVersion)
            .join(Memory, Memory.id == MemoryVersion.memory_id)
            .where(Memory.id == memory_id, Memory.owner_id == owner_id)
            .order_by(MemoryVersion.version_number)
        )
        async with self._sessionmaker() as session:
            versions: Sequence[MemoryVersion] = (await session.scalars(query)).all()
        if not versions:
            raise MemoryNotFound(memory_id)
        return [version_item(v) for v in versions]

    async def list_deleted(self, owner_id: int, limit: int) -> list[MemoryItem]:
        """Return the owner's deleted memories, most recently deleted first."""
        query = (
            with_current_version(*ITEM_COLUMNS)
            .where(Memory.owner_id == owner_id, Memory.deleted_at.is_not(None))
            .order_by(Memory.deleted_at.desc(), Memory.id)
            .limit(limit)
        )
        async with self._sessionmaker() as session:
            return [item_from_row(row) for row in await session.execute(query)]

    async def restore(self, owner_id: int, memory_id: str) -> MemoryItem:
        """Bring back a soft-deleted memory of this owner."""
        async with memory_change(self._sessionmaker, owner_id) as session:
            memory, current = await load_with_current(session, owner_id, memory_id, active=False)
            if memory.deleted_at is None:
                raise MemoryNotDeleted(memory_id)
            memory.deleted_at = None
            return item_of(memory, current)

    async def clear(self, owner_id: int) -> int:
        """Soft-delete every active memory of this owner; return how many."""
        async with memory_change(self._sessionmaker, owner_id) as session:
            result = await session.execute(
                update(Memory)
                .where(Memory.owner_id == owner_id, Memory.deleted_at.is_(None))
                .values(deleted_at=utcnow())
            )
            return result.rowcount

    async def export(self, owner_id: int) -> list[MemoryRecord]:
        """Return every memory of this owner, deleted ones too, with all their versions."""
        versions_query = (
            select(Memory, MemoryVersion)
            .join(MemoryVersion, MemoryVersion.memory_id == Memory.id)
            .where(Memory.owner_id == owner_id)
            .order_by(Memory.created_at, Memory.id, MemoryVersion.version_number)
        )
        async with self._sessionmaker() as session:
            rows = (await session.execute(versions_query)).all()
        records: dict[str, tuple[Memory, list[MemoryVersion]]] = {}
        for memory, version in rows:
            records.setdefault(memory.id, (memory, []))[1].append(version)
        return [
            MemoryRecord(item_of(memory, versions[-1]), [version_item(v) for v in versions])
            for memory, versions in records.values()
        ]
