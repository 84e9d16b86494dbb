"""Owner-scoped memory storage: add, update as a new version, soft delete, list, history."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import aliased

from memory.categories import Category
from memory.ids import new_memory_id
from memory.models import Memory, MemoryVersion, utcnow

ID_ATTEMPTS = 5


class MemoryNotFound(LookupError):
    """No active memory with that id belongs to this owner."""

    def __init__(self, memory_id: str):
        super().__init__(memory_id)
        self.memory_id = memory_id


@dataclass(frozen=True)
class MemoryItem:
    """A memory as callers see it: its current content and where it stands."""

    id: str
    owner_id: int
    category: Category
    subject: str | None
    content: str
    version: int
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None = None


@dataclass(frozen=True)
class MemoryVersionItem:
    """One stored version of a memory's content."""

    version_number: int
    content: str
    created_at: datetime
    source_conversation_id: int | None


def _item(memory: Memory, version: MemoryVersion) -> MemoryItem:
    """Combine a memory row with its current version."""
    return MemoryItem(
        id=memory.id,
        owner_id=memory.owner_id,
        category=Category(memory.category),
        subject=memory.subject,
        content=version.content,
        version=version.version_number,
        created_at=memory.created_at,
        updated_at=version.created_at,
        deleted_at=memory.deleted_at,
    )


def _latest_version_number():
    """Return a correlated subquery for a memory's highest version number."""
    other = aliased(MemoryVersion)
    return (
        select(func.max(other.version_number))
        .where(other.memory_id == Memory.id)
        .correlate(Memory)
        .scalar_subquery()
    )


def _with_current_version():
    """Select memories joined to their current version."""
    return select(Memory, MemoryVersion).join(
        MemoryVersion,
        (MemoryVersion.memory_id == Memory.id)
        & (MemoryVersion.version_number == _latest_version_number()),
    )


class MemoryStore:
    """Every read and write is scoped by owner; another owner's id is simply not found."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession]):
        self._sessionmaker = sessionmaker

    async def add(
        self,
        owner_id: int,
        content: str,
        category: Category,
        subject: str | None = None,
        source_conversation_id: int | None = None,
    ) -> MemoryItem:
        """Store a new memory and its first version in one transaction."""
        for attempt in range(ID_ATTEMPTS):
            now = utcnow()
            memory = Memory(
                id=new_memory_id(),
                owner_id=owner_id,
                category=Category(category).value,
                subject=subject,
                created_at=now,
            )
            version = MemoryVersion(
                memory_id=memory.id,
                version_number=1,
                content=content,
                source_conversation_id=source_conversation_id,
                created_at=now,
            )
            try:
                async with self._sessionmaker.begin() as session:
                    session.add(memory)
                    await session.flush()
                    session.add(version)
            except IntegrityError:
                # Only an id collision is worth another try; 62**8 makes it rare.
                if attempt == ID_ATTEMPTS - 1 or not await self._id_taken(memory.id):
                    raise
                continue
            return _item(memory, version)
        raise AssertionError("unreachable")

    async def _id_taken(self, memory_id: str) -> bool:
        """Tell whether any owner already has this id."""
        async with self._sessionmaker() as session:
            return await session.get(Memory, memory_id) is not None

    async def find_by_subject(self, owner_id: int, subject: str) -> MemoryItem | None:
        """Return the owner's active memory with this subject, ignoring case and spacing."""
        wanted = " ".join(subject.split()).casefold()
        for item in await self.list_active(owner_id):
            if item.subject and " ".join(item.subject.split()).casefold() == wanted:
                return item
        return None

    async def update(
        self,
        owner_id: int,
        memory_id: str,
        content: str,
        source_conversation_id: int | None = None,
    ) -> tuple[MemoryItem, MemoryItem]:
        """Append a version with new content; return the memory before and after."""
        async with self._sessionmaker.begin() as session:
            memory, current = await self._active_with_current(session, owner_id, memory_id)
            before = _item(memory, current)
            version = MemoryVersion(
                memory_id=memory.id,
                version_number=current.version_number + 1,
                content=content,
                source_conversation_id=source_conversation_id,
                created_at=utcnow(),
            )
            session.add(version)
            after = _item(memory, version)
        return before, after

    async def delete(self, owner_id: int, memory_id: str) -> MemoryItem:
        """Soft-delete an active memory and return it as it was."""
        async with self._sessionmaker.begin() as session:
            memory, current = await self._active_with_current(session, owner_id, memory_id)
            memory.deleted_at = utcnow()
            return _item(memory, current)

    async def get(self, owner_id: int, memory_id: str) -> MemoryItem:
        """Return one active memory of this owner."""
        async with self._sessionmaker() as session:
            memory, current = await self._active_with_current(session, owner_id, memory_id)
            return _item(memory, current)

    async def list_active(self, owner_id: int) -> list[MemoryItem]:
        """Return the owner's active memories in block order."""
        query = (
            _with_current_version()
            .where(Memory.owner_id == owner_id, Memory.deleted_at.is_(None))
            .order_by(Memory.category, Memory.created_at, Memory.id)
        )
        async with self._sessionmaker() as session:
            rows = (await session.execute(query)).all()
        return [_item(memory, version) for memory, version in rows]

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
        return [
            MemoryVersionItem(
                version_number=v.version_number,
                content=v.content,
                created_at=v.created_at,
                source_conversation_id=v.source_conversation_id,
            )
            for v in versions
        ]

    @staticmethod
    async def _active_with_current(
        session: AsyncSession, owner_id: int, memory_id: str
    ) -> tuple[Memory, MemoryVersion]:
        """Load an active memory of this owner with its current version, or raise."""
        query = _with_current_version().where(
            Memory.id == memory_id,
            Memory.owner_id == owner_id,
            Memory.deleted_at.is_(None),
        )
        row = (await session.execute(query)).first()
        if row is None:
            raise MemoryNotFound(memory_id)
        return row[0], row[1]
