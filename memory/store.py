"""Owner-scoped memory storage: versions, soft delete and restore, export, settings, undo log."""

import contextlib
import functools
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import (
    ColumnElement,
    Delete,
    Row,
    Select,
    bindparam,
    delete,
    func,
    select,
    text,
    true,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import aliased

from memory.categories import Category
from memory.ids import new_memory_id
from memory.models import (
    Memory,
    MemoryChangeRecord,
    MemoryVersion,
    OwnerSettings,
    RenderedMemoryBlock,
    utcnow,
)

ID_ATTEMPTS = 5
DEFAULT_TOKEN_BUDGET = 2000


class MemoryNotFound(LookupError):
    """No active memory with that id belongs to this owner."""

    def __init__(self, memory_id: str):
        super().__init__(memory_id)
        self.memory_id = memory_id


class MemoryNotDeleted(Exception):
    """The memory to restore is not deleted."""

    def __init__(self, memory_id: str):
        super().__init__(memory_id)
        self.memory_id = memory_id


class ChangeNotFound(LookupError):
    """No recorded change with that id belongs to this owner."""


class AlreadyUndone(Exception):
    """The change was undone before; undo works once."""


class CannotUndo(Exception):
    """The memory changed after the change was made, so undoing it would lose something."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason  # "deleted", "changed" or "restored"


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


@dataclass(frozen=True)
class MemoryRecord:
    """A memory with every version of its content, oldest first."""

    item: MemoryItem
    versions: list[MemoryVersionItem]


@dataclass(frozen=True)
class UndoResult:
    """What an undo did: the kind of change undone and the memory before and after."""

    kind: str
    before: MemoryItem
    after: MemoryItem


def _version_item(version: MemoryVersion) -> MemoryVersionItem:
    """Copy a version row into a plain value."""
    return MemoryVersionItem(
        version_number=version.version_number,
        content=version.content,
        created_at=version.created_at,
        source_conversation_id=version.source_conversation_id,
    )


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


# Plain columns, not ORM objects: building 2,000 objects for the block took most of a turn.
_ITEM_COLUMNS = (
    Memory.id,
    Memory.owner_id,
    Memory.category,
    Memory.subject,
    MemoryVersion.content,
    MemoryVersion.version_number,
    Memory.created_at,
    MemoryVersion.created_at,
    Memory.deleted_at,
)


def normalize_subject(subject: str | None) -> str | None:
    """Fold a subject's spacing to single spaces; a blank subject is no subject."""
    return " ".join(subject.split()) or None if subject else None


def find_by_subject(items: Iterable[MemoryItem], subject: str) -> MemoryItem | None:
    """Return the memory with this subject, ignoring spacing and case in any script."""
    wanted = " ".join(subject.split()).casefold()
    return next(
        (i for i in items if i.subject and " ".join(i.subject.split()).casefold() == wanted),
        None,
    )


def _item_from_row(row: Row) -> MemoryItem:
    """Build an item from a row of _ITEM_COLUMNS."""
    memory_id, owner_id, category, *rest = row
    return MemoryItem(memory_id, owner_id, Category(category), *rest)


def _latest_version_number():
    """Return a correlated subquery for a memory's highest version number."""
    other = aliased(MemoryVersion)
    return (
        select(func.max(other.version_number))
        .where(other.memory_id == Memory.id)
        .correlate(Memory)
        .scalar_subquery()
    )


def _with_current_version(*columns):
    """Select memories joined to their current version (both rows, or the given columns)."""
    return select(*(columns or (Memory, MemoryVersion))).join(
        MemoryVersion,
        (MemoryVersion.memory_id == Memory.id)
        & (MemoryVersion.version_number == _latest_version_number()),
    )


@functools.cache
def _active_memories_statement() -> Select:
    """Select an owner's active memories with their current content, in block order."""
    return (
        _with_current_version(*_ITEM_COLUMNS)
        .where(Memory.owner_id == bindparam("owner"), Memory.deleted_at.is_(None))
        .order_by(Memory.category, Memory.created_at, Memory.id)
    )


async def load_active_memories(session: AsyncSession, owner_id: int) -> list[MemoryItem]:
    """Return the owner's active memories in block order, inside the caller's session."""
    connection = await session.connection()
    rows = await connection.execute(_active_memories_statement(), {"owner": owner_id})
    return [_item_from_row(row) for row in rows]


def memory_enabled_expression(owner_id: int | ColumnElement[int]) -> ColumnElement[bool]:
    """Return SQL telling whether an owner (an id or a column) has memory on (the default)."""
    setting = (
        select(OwnerSettings.memory_enabled)
        .where(OwnerSettings.owner_id == owner_id)
        .scalar_subquery()
    )
    return func.coalesce(setting, true())


async def load_memory_enabled(session: AsyncSession, owner_id: int) -> bool:
    """Tell whether this owner has memory on (the default), inside the caller's session."""
    return bool(await session.scalar(select(memory_enabled_expression(owner_id))))


# pg_advisory_xact_lock's two-key space for "an owner's memories" ("mblk" in ASCII); the
# migration lock uses the one-key space, which never overlaps it.
MEMORY_LOCK_SPACE = 0x6D626C6B


async def lock_owner_memories(session: AsyncSession, owner_id: int, *, shared: bool) -> None:
    """On Postgres, queue changes to an owner's memories against renderings of their block.

    Changes take the lock alone, renderings share it, so a block is never rendered from
    memories a concurrent change is replacing. SQLite needs none: it has one writer at a time,
    and the bot one connection.
    """
    connection = await session.connection()
    if connection.dialect.name != "postgresql":
        return
    function = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
    await connection.execute(
        text(f"SELECT {function}(:space, :key)"),
        {"space": MEMORY_LOCK_SPACE, "key": owner_id % 2**31},
    )


async def _lock_memory(session: AsyncSession, owner_id: int, memory_id: str) -> None:
    """Queue behind other writers of this memory (a row lock on Postgres).

    FOR NO KEY UPDATE leaves inserts that reference the row alone. SQLite has no row locks;
    the unique (memory_id, version_number) turns its race into a retry.
    """
    await session.execute(
        select(Memory.id)
        .where(Memory.id == memory_id, Memory.owner_id == owner_id)
        .with_for_update(key_share=True)
    )


@functools.cache
def _forget_block_statement() -> Delete:
    """Delete the owner's kept memory block."""
    return delete(RenderedMemoryBlock).where(RenderedMemoryBlock.owner_id == bindparam("owner"))


class MemoryStore:
    """Every read and write is scoped by owner; another owner's id is simply not found."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        token_budget: int = DEFAULT_TOKEN_BUDGET,
    ):
        self._sessionmaker = sessionmaker
        self.token_budget = token_budget

    @contextlib.asynccontextmanager
    async def _changing(self, owner_id: int) -> AsyncIterator[AsyncSession]:
        """Open a transaction that changes the owner's memories and drops their kept block."""
        async with self._sessionmaker.begin() as session:
            await lock_owner_memories(session, owner_id, shared=False)
            connection = await session.connection()
            await connection.execute(_forget_block_statement(), {"owner": owner_id})
            yield session

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
                subject=normalize_subject(subject),
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
                async with self._changing(owner_id) as session:
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

    async def update(
        self,
        owner_id: int,
        memory_id: str,
        content: str,
        source_conversation_id: int | None = None,
    ) -> tuple[MemoryItem, MemoryItem]:
        """Append a version with new content; return the memory before and after."""
        # Every failed attempt means another writer's version went in, so this many
        # attempts let that many writers race on one memory without anyone failing.
        attempts = 64
        for attempt in range(1, attempts + 1):
            version = None
            try:
                async with self._changing(owner_id) as session:
                    await _lock_memory(session, owner_id, memory_id)
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
            except IntegrityError:
                taken = version is not None and await self._version_taken(
                    memory_id, version.version_number
                )
                if not taken or attempt == attempts:
                    raise
        raise AssertionError("unreachable")

    async def _version_taken(self, memory_id: str, version_number: int) -> bool:
        """Tell whether a concurrent writer already stored this version number."""
        async with self._sessionmaker() as session:
            found = await session.scalar(
                select(MemoryVersion.id).where(
                    MemoryVersion.memory_id == memory_id,
                    MemoryVersion.version_number == version_number,
                )
            )
        return found is not None

    async def delete(self, owner_id: int, memory_id: str) -> MemoryItem:
        """Soft-delete an active memory and return it as it was."""
        async with self._changing(owner_id) as session:
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
        async with self._sessionmaker() as session:
            return await load_active_memories(session, owner_id)

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
        return [_version_item(v) for v in versions]

    @staticmethod
    async def _active_with_current(
        session: AsyncSession, owner_id: int, memory_id: str
    ) -> tuple[Memory, MemoryVersion]:
        """Load an active memory of this owner with its current version, or raise."""
        return await MemoryStore._any_with_current(
            session, owner_id, memory_id, Memory.deleted_at.is_(None)
        )

    async def find(self, owner_id: int, memory_id: str) -> MemoryItem:
        """Return one memory of this owner, deleted or not."""
        async with self._sessionmaker() as session:
            memory, current = await self._any_with_current(session, owner_id, memory_id)
            return _item(memory, current)

    async def list_deleted(self, owner_id: int, limit: int) -> list[MemoryItem]:
        """Return the owner's deleted memories, most recently deleted first."""
        query = (
            _with_current_version(*_ITEM_COLUMNS)
            .where(Memory.owner_id == owner_id, Memory.deleted_at.is_not(None))
            .order_by(Memory.deleted_at.desc(), Memory.id)
            .limit(limit)
        )
        async with self._sessionmaker() as session:
            return [_item_from_row(row) for row in await session.execute(query)]

    async def restore(self, owner_id: int, memory_id: str) -> MemoryItem:
        """Bring back a soft-deleted memory of this owner."""
        async with self._changing(owner_id) as session:
            memory, current = await self._any_with_current(session, owner_id, memory_id)
            if memory.deleted_at is None:
                raise MemoryNotDeleted(memory_id)
            memory.deleted_at = None
            return _item(memory, current)

    async def clear(self, owner_id: int) -> int:
        """Soft-delete every active memory of this owner; return how many."""
        async with self._changing(owner_id) as session:
            result = await session.execute(
                update(Memory)
                .where(Memory.owner_id == owner_id, Memory.deleted_at.is_(None))
                .values(deleted_at=utcnow())
            )
            return result.rowcount

    async def export(self, owner_id: int) -> list[MemoryRecord]:
        """Return every memory of this owner, deleted ones too, with all their versions."""
        async with self._sessionmaker() as session:
            rows = (
                await session.execute(
                    _with_current_version()
                    .where(Memory.owner_id == owner_id)
                    .order_by(Memory.created_at, Memory.id)
                )
            ).all()
            versions: Sequence[MemoryVersion] = (
                await session.scalars(
                    select(MemoryVersion)
                    .join(Memory, Memory.id == MemoryVersion.memory_id)
                    .where(Memory.owner_id == owner_id)
                    .order_by(MemoryVersion.memory_id, MemoryVersion.version_number)
                )
            ).all()
        by_memory: dict[str, list[MemoryVersionItem]] = {}
        for version in versions:
            by_memory.setdefault(version.memory_id, []).append(_version_item(version))
        return [
            MemoryRecord(_item(memory, current), by_memory[memory.id]) for memory, current in rows
        ]

    async def memory_enabled(self, owner_id: int) -> bool:
        """Tell whether this owner has memory on (the default)."""
        async with self._sessionmaker() as session:
            return await load_memory_enabled(session, owner_id)

    async def set_memory_enabled(self, owner_id: int, enabled: bool) -> bool:
        """Turn this owner's memory on or off; tell whether that changed anything."""
        for attempt in range(2):
            try:
                async with self._sessionmaker.begin() as session:
                    row = await session.get(OwnerSettings, owner_id)
                    if row is None:
                        session.add(
                            OwnerSettings(
                                owner_id=owner_id, memory_enabled=enabled, updated_at=utcnow()
                            )
                        )
                        return not enabled
                    if row.memory_enabled == enabled:
                        return False
                    row.memory_enabled = enabled
                    row.updated_at = utcnow()
                    return True
            except IntegrityError:
                # Another writer created the row first; the second pass updates it.
                if attempt:
                    raise
        raise AssertionError("unreachable")

    async def record_change(
        self, owner_id: int, memory_id: str, kind: str, version_number: int
    ) -> int:
        """Log a write the agent made so the user can undo it; return the log entry's id."""
        async with self._sessionmaker.begin() as session:
            record = MemoryChangeRecord(
                owner_id=owner_id,
                memory_id=memory_id,
                kind=kind,
                version_number=version_number,
                created_at=utcnow(),
            )
            session.add(record)
            await session.flush()
            return record.id

    async def undo(self, owner_id: int, change_id: int) -> UndoResult:
        """Undo a logged change once, unless the memory has changed since."""
        now = utcnow()
        async with self._changing(owner_id) as session:
            change = await session.scalar(
                select(MemoryChangeRecord).where(
                    MemoryChangeRecord.id == change_id, MemoryChangeRecord.owner_id == owner_id
                )
            )
            if change is None:
                raise ChangeNotFound(change_id)
            # Claiming the entry first makes a second, concurrent undo find nothing to claim.
            claimed = await session.execute(
                update(MemoryChangeRecord)
                .where(MemoryChangeRecord.id == change.id, MemoryChangeRecord.undone_at.is_(None))
                .values(undone_at=now)
            )
            if claimed.rowcount == 0:
                raise AlreadyUndone(change_id)
            await _lock_memory(session, owner_id, change.memory_id)
            memory, current = await self._any_with_current(session, owner_id, change.memory_id)
            before = _item(memory, current)
            if change.kind == "forgotten":
                if memory.deleted_at is None:
                    raise CannotUndo("restored")
                memory.deleted_at = None
                return UndoResult(change.kind, before, _item(memory, current))
            if memory.deleted_at is not None:
                raise CannotUndo("deleted")
            if change.kind == "added":
                memory.deleted_at = now
                return UndoResult(change.kind, before, _item(memory, current))
            if current.version_number != change.version_number:
                raise CannotUndo("changed")
            previous = await session.scalar(
                select(MemoryVersion).where(
                    MemoryVersion.memory_id == memory.id,
                    MemoryVersion.version_number == change.version_number - 1,
                )
            )
            restored = MemoryVersion(
                memory_id=memory.id,
                version_number=current.version_number + 1,
                content=previous.content,
                created_at=now,
            )
            session.add(restored)
            return UndoResult(change.kind, before, _item(memory, restored))

    @staticmethod
    async def _any_with_current(
        session: AsyncSession, owner_id: int, memory_id: str, *conditions
    ) -> tuple[Memory, MemoryVersion]:
        """Load a memory of this owner, deleted or not, with its current version, or raise."""
        query = _with_current_version().where(
            Memory.id == memory_id, Memory.owner_id == owner_id, *conditions
        )
        row = (await session.execute(query)).first()
        if row is None:
            raise MemoryNotFound(memory_id)
        return row[0], row[1]
