"""Owner-scoped memory storage: append-only versions, soft delete and restore, search, export.

Every read and write is scoped by owner: another owner's id is simply not found.
"""

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memory.block import MemoryBlock
from memory.budget import DEFAULT_MEMORY_LIMIT, DEFAULT_TOKEN_BUDGET
from memory.categories import Category
from memory.export_rows import export_records
from memory.items import (
    AddMemory,
    Edit,
    ForgetMemory,
    MemoryChange,
    MemoryItem,
    MemoryNotDeleted,
    MemoryNotFound,
    MemoryRecord,
    MemoryVersionItem,
    UpdateMemory,
    subject_key,
)
from memory.models import Memory, MemoryVersion, utcnow
from memory.queries import (
    ITEM_COLUMNS,
    count_active,
    item_from_row,
    item_of,
    load_active_memories,
    load_active_with_current,
    load_items,
    load_with_current,
    version_item,
    with_current_version,
)
from memory.retry import KeyTaken, retry_lost_races
from memory.search_index import search_ids, unindex
from memory.stored_block import block_ids, memory_change, owner_block
from memory.undo import record_change
from memory.writes import bring_back, make

# 62**8 ids make a collision rare; five tries make a failure from one unheard of.
ID_ATTEMPTS = 5
# Every failed attempt means another writer's version went in, so this many attempts let
# that many writers race on one memory without anyone failing.
VERSION_ATTEMPTS = 64


class MemoryStore:
    """Memories and their versions, each owner's apart from every other's."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        block_budget: int = DEFAULT_TOKEN_BUDGET,
        limit: int = DEFAULT_MEMORY_LIMIT,
    ):
        self._sessionmaker = sessionmaker
        self.block_budget = block_budget
        self.limit = limit

    async def apply_undoable(
        self, owner_id: int, edit: Edit, source: int | None = None
    ) -> MemoryChange:
        """Make the model's edit in one transaction, logged for Undo, with what it archived."""

        async def logged(session: AsyncSession) -> MemoryChange:
            in_block = await block_ids(session, owner_id, self.block_budget)
            change = await make(session, owner_id, edit, source)
            await session.flush()
            item = change.item
            change_id = await record_change(session, owner_id, item.id, change.kind, item.version)
            still = set(await block_ids(session, owner_id, self.block_budget))
            left = [i for i in in_block if i not in still and i != item.id]
            archived = tuple(await load_items(session, owner_id, left))
            return replace(change, change_id=change_id, archived=archived)

        return await self._write(owner_id, edit, logged)

    async def _apply(self, owner_id: int, edit: Edit, source: int | None = None) -> MemoryChange:
        """Make an edit the user asked for in one transaction."""
        return await self._write(
            owner_id, edit, lambda session: make(session, owner_id, edit, source)
        )

    async def _write(
        self, owner_id: int, edit: Edit, write: Callable[[AsyncSession], Awaitable[MemoryChange]]
    ) -> MemoryChange:
        """Run a write in a transaction of its own, again while it loses races for its key."""

        async def attempt() -> MemoryChange:
            async with memory_change(self._sessionmaker, owner_id) as session:
                return await write(session)

        attempts = ID_ATTEMPTS if isinstance(edit, AddMemory) else VERSION_ATTEMPTS
        return await retry_lost_races(attempt, self._lost_race, attempts)

    async def _lost_race(self, error: IntegrityError) -> bool:
        """Tell whether a conflict was on a key that a concurrent writer holds now."""
        if not isinstance(error, KeyTaken):
            return False
        async with self._sessionmaker() as session:
            return await session.scalar(error.holder) is not None

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
        return (await self._apply(owner_id, edit, source_conversation_id)).item

    async def update(
        self,
        owner_id: int,
        memory_id: str,
        content: str,
        source_conversation_id: int | None = None,
    ) -> tuple[MemoryItem, MemoryItem]:
        """Append a version with new content; return the memory before and after."""
        change = await self._apply(
            owner_id, UpdateMemory(memory_id, content), source_conversation_id
        )
        if change.previous is None:
            # An update always replaces a version; without one it was no update.
            raise LookupError(f"update of {memory_id} replaced no version")
        return change.previous, change.item

    async def delete(self, owner_id: int, memory_id: str) -> MemoryItem:
        """Soft-delete an active memory and return it as it was."""
        return (await self._apply(owner_id, ForgetMemory(memory_id))).item

    async def pin(self, owner_id: int, memory_id: str, pinned: bool) -> MemoryItem:
        """Keep an active memory in the block before unpinned ones, or stop keeping it."""
        async with memory_change(self._sessionmaker, owner_id) as session:
            memory, current = await load_active_with_current(session, owner_id, memory_id)
            memory.pinned = pinned
            return item_of(memory, current)

    async def list_active(self, owner_id: int) -> list[MemoryItem]:
        """Return the owner's active memories in block order."""
        async with self._sessionmaker() as session:
            return await load_active_memories(session, owner_id)

    async def count_active(self, owner_id: int) -> int:
        """Return how many active memories the owner has."""
        async with self._sessionmaker() as session:
            return await count_active(session, owner_id)

    async def find(self, owner_id: int, memory_id: str) -> MemoryItem:
        """Return one memory of this owner, deleted or not."""
        async with self._sessionmaker() as session:
            return item_of(*await load_with_current(session, owner_id, memory_id))

    @property
    def sessionmaker(self) -> async_sessionmaker[AsyncSession]:
        """Return the sessions the store works in (the database other stores of it share)."""
        return self._sessionmaker

    async def items(self, owner_id: int, memory_ids: Sequence[str]) -> list[MemoryItem]:
        """Return the owner's memories with these ids, forgotten ones too, in block order."""
        async with self._sessionmaker() as session:
            return await load_items(session, owner_id, list(memory_ids))

    async def find_subject(self, owner_id: int, subject: str) -> MemoryItem | None:
        """Return the owner's active memory with this subject (in any case), if there is one."""
        query = (
            with_current_version(*ITEM_COLUMNS)
            .where(
                Memory.owner_id == owner_id,
                Memory.subject_key == subject_key(subject),
                Memory.deleted_at.is_(None),
            )
            .limit(1)
        )
        async with self._sessionmaker() as session:
            row = (await session.execute(query)).first()
        return None if row is None else item_from_row(row)

    async def search(self, owner_id: int, query: str, limit: int) -> list[MemoryItem]:
        """Return the owner's active memories matching the words, best first."""
        async with self._sessionmaker() as session:
            ids = await search_ids(session, owner_id, query, limit)
            by_id = {item.id: item for item in await load_items(session, owner_id, ids)}
        return [by_id[memory_id] for memory_id in ids if memory_id in by_id]

    async def block(self, owner_id: int) -> MemoryBlock:
        """Return the owner's memory block as a new conversation would get it now."""
        async with self._sessionmaker.begin() as session:
            return await owner_block(session, owner_id, self.block_budget)

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
            memory, current = await load_with_current(session, owner_id, memory_id)
            if memory.deleted_at is not None:
                await bring_back(session, memory, current, self.limit)
                return item_of(memory, current)
        raise MemoryNotDeleted(memory_id)

    async def clear(self, owner_id: int) -> int:
        """Soft-delete every active memory of this owner; return how many."""
        active = (Memory.owner_id == owner_id, Memory.deleted_at.is_(None))
        async with memory_change(self._sessionmaker, owner_id) as session:
            ids = (await session.scalars(select(Memory.id).where(*active))).all()
            await session.execute(update(Memory).where(*active).values(deleted_at=utcnow()))
            await unindex(session, ids)
            return len(ids)

    async def export(self, owner_id: int) -> list[MemoryRecord]:
        """Return every memory of this owner, deleted ones too, with all their versions."""
        return await export_records(self._sessionmaker, owner_id)
