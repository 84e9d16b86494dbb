"""What the user does to memory directly, without the model."""

from bot.conversations import ConversationStore
from memory.ids import is_memory_id
from memory.store import MemoryItem, MemoryNotFound, MemoryStore


class MemoryControl:
    """List and delete an owner's memories, keeping open conversations' blocks current."""

    def __init__(self, memories: MemoryStore, conversations: ConversationStore):
        self._memories = memories
        self._conversations = conversations

    async def list(self, owner_id: int) -> list[MemoryItem]:
        """Return the owner's active memories in block order."""
        return await self._memories.list_active(owner_id)

    async def delete(self, owner_id: int, memory_id: str) -> MemoryItem:
        """Forget one memory and re-render the block for the next turn."""
        if not is_memory_id(memory_id):
            raise MemoryNotFound(memory_id)
        item = await self._memories.delete(owner_id, memory_id)
        await self._conversations.refresh_memory_block(owner_id)
        return item
