"""What the user does to memory directly, without the model."""

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from memory.budget import BlockUsage
from memory.export import ExportPart, export_document, export_json, export_parts
from memory.export_markdown import markdown_export
from memory.ids import is_memory_id
from memory.items import (
    ForgetMemory,
    MemoryChange,
    MemoryItem,
    MemoryNotFound,
    MemoryRecord,
    UndoResult,
    UpdateMemory,
)
from memory.list_rows import ListStamp, MemoryList, load_list, load_stamp
from memory.models import utcnow
from memory.search_index import CANDIDATES
from memory.store import MemoryStore
from memory.switch import MemorySwitch
from memory.tokens import count_tokens
from memory.undo import UndoLog

RECENTLY_DELETED_SHOWN = 10


@dataclass(frozen=True)
class MemoryOverview:
    """The owner's active memories in block order, which are in the block, and the switch."""

    items: list[MemoryItem]
    usage: BlockUsage
    in_block: frozenset[str]
    enabled: bool


@dataclass(frozen=True)
class ExportFile:
    """The export of an owner's memories, ready to upload: one file, or a few parts."""

    parts: list[ExportPart]
    total: int
    deleted: int


class MemoryControl:
    """The owner's direct control of memory; each change is followed by on_change(owner_id)."""

    def __init__(
        self,
        store: MemoryStore,
        switch: MemorySwitch,
        undo_log: UndoLog,
        on_change: Callable[[int], Awaitable[None]],
    ):
        self._store = store
        self._switch = switch
        self._undo_log = undo_log
        # Direct changes show from the next turn (the caller re-renders open conversations'
        # blocks); the model's own writes reach it through its tool results instead.
        self._on_change = on_change

    async def changed(self, owner_id: int) -> None:
        """Show a change made beside this control (a batch's Undo all) from the next turn."""
        await self._on_change(owner_id)

    async def overview(self, owner_id: int) -> MemoryOverview:
        """Return what /memory shows: the memories, which are in the block, and the switch."""
        items = await self._store.list_active(owner_id)
        block = await self._store.block(owner_id)
        in_block = frozenset(block.memory_ids)
        tokens = count_tokens(block.text)
        usage = BlockUsage(len(items), len(in_block), tokens, self._store.block_budget)
        enabled = await self._switch.is_on(owner_id)
        return MemoryOverview(items, usage, in_block, enabled)

    async def delete(self, owner_id: int, memory_id: str) -> MemoryItem:
        """Forget one memory."""
        _check_id(memory_id)
        item = await self._store.delete(owner_id, memory_id)
        await self._on_change(owner_id)
        return item

    async def edit(self, owner_id: int, memory_id: str, content: str) -> MemoryChange:
        """Give a memory new content as a new version, logged for Undo (the Mini App's edit)."""
        _check_id(memory_id)
        change = await self._store.apply_undoable(owner_id, UpdateMemory(memory_id, content))
        await self._on_change(owner_id)
        return change

    async def forget(self, owner_id: int, memory_id: str) -> MemoryChange:
        """Forget one memory, logged for Undo (the Mini App's delete)."""
        _check_id(memory_id)
        change = await self._store.apply_undoable(owner_id, ForgetMemory(memory_id))
        await self._on_change(owner_id)
        return change

    async def restore(self, owner_id: int, memory_id: str) -> MemoryItem:
        """Bring back a deleted memory."""
        _check_id(memory_id)
        item = await self._store.restore(owner_id, memory_id)
        await self._on_change(owner_id)
        return item

    async def listing(self, owner_id: int) -> MemoryList:
        """Return what the Mini App lists: short rows, the block's ids, the switch, in one trip."""
        async with self._store.sessionmaker.begin() as session:
            return await load_list(
                session, owner_id, self._store.block_budget, RECENTLY_DELETED_SHOWN
            )

    async def list_stamp(self, owner_id: int) -> ListStamp | None:
        """Return what the owner's list is as of now (None: unknown), in one cheap read."""
        async with self._store.sessionmaker() as session:
            return await load_stamp(session, owner_id)

    async def recently_deleted(self, owner_id: int) -> list[MemoryItem]:
        """Return the memories deleted most recently, to restore from."""
        return await self._store.list_deleted(owner_id, RECENTLY_DELETED_SHOWN)

    async def history(self, owner_id: int, memory_id: str) -> MemoryRecord:
        """Return a memory, deleted or not, with every version."""
        _check_id(memory_id)
        item = await self._store.find(owner_id, memory_id)
        return MemoryRecord(item, await self._store.history(owner_id, memory_id))

    async def search(self, owner_id: int, query: str) -> list[MemoryItem]:
        """Return the active memories matching the words, best first, as the model finds them.

        All of them (the index ranks at most CANDIDATES): the caller shows a page and says how
        many more there are.
        """
        return await self._store.search(owner_id, query, CANDIDATES)

    async def pin(self, owner_id: int, memory_id: str, pinned: bool) -> MemoryItem:
        """Keep a memory in the block before unpinned ones (or stop), from the next turn."""
        _check_id(memory_id)
        item = await self._store.pin(owner_id, memory_id, pinned)
        await self._on_change(owner_id)
        return item

    async def clear(self, owner_id: int) -> int:
        """Forget every memory of the owner; return how many."""
        count = await self._store.clear(owner_id)
        if count:
            await self._on_change(owner_id)
        return count

    async def export(self, owner_id: int) -> ExportFile | None:
        """Return every memory with all versions as JSON files, or None if there are none."""
        records = await self._store.export(owner_id)
        if not records:
            return None
        enabled = await self._switch.is_on(owner_id)
        # Serialising and zipping thousands of memories takes seconds: not on the loop.
        parts = await asyncio.to_thread(export_parts, owner_id, records, utcnow(), enabled)
        return ExportFile(
            parts=parts,
            total=len(records),
            deleted=sum(record.item.deleted_at is not None for record in records),
        )

    async def export_download(self, owner_id: int, markdown: bool) -> bytes:
        """Return the whole export as one file: JSON with every version, or Markdown."""
        if markdown:
            return markdown_export(await self._store.list_active(owner_id), utcnow())
        records = await self._store.export(owner_id)
        enabled = await self._switch.is_on(owner_id)
        document = export_document(owner_id, records, utcnow(), enabled)
        return await asyncio.to_thread(export_json, document)

    async def set_enabled(self, owner_id: int, enabled: bool) -> bool:
        """Turn memory on or off for the owner; tell whether that changed anything."""
        changed = await self._switch.turn(owner_id, enabled)
        if changed:
            await self._on_change(owner_id)
        return changed

    async def undo(self, owner_id: int, change_id: int) -> UndoResult:
        """Undo one change the model made, once."""
        result = await self._undo_log.undo(owner_id, change_id)
        await self._on_change(owner_id)
        return result


def _check_id(memory_id: str) -> None:
    """Treat text that cannot be an id like an unknown id, without asking the database."""
    if not is_memory_id(memory_id):
        raise MemoryNotFound(memory_id)
