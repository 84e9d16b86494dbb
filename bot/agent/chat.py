"""The chat service: store the user's message, then let the agent answer it."""

from collections.abc import Callable
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.agent.compaction import Compactor
from bot.agent.incoming import IncomingMessage, user_turn_content
from bot.agent.loop import Agent, Answer
from bot.agent.stream import Progress
from bot.conversations.snapshot import ChatThread, Snapshot
from bot.conversations.store import ConversationStore
from memory.models import utcnow


class ChatService:
    """Turns a chat message into a stored user turn and the agent's answer."""

    def __init__(
        self,
        conversations: ConversationStore,
        agent: Agent,
        compactor: Compactor,
        zone: ZoneInfo,
        clock: Callable[[], datetime] = utcnow,
    ):
        self._conversations = conversations
        self._agent = agent
        self._compactor = compactor
        self._zone = zone
        self._clock = clock

    async def answer_message(
        self,
        place: ChatThread,
        owner_id: int,
        message: IncomingMessage,
        progress: Progress | None = None,
    ) -> Answer:
        """Store the message before calling the model, so a failed call loses nothing.

        Raises DuplicateUpdate when this message was stored before (a redelivery).
        """
        now = self._clock().astimezone(self._zone)
        snapshot = await self._conversations.store_user_message(
            place, owner_id, user_turn_content(message, now), message.ref
        )
        return await self.answer(snapshot, progress)

    async def answer(self, snapshot: Snapshot, progress: Progress | None = None) -> Answer:
        """Compact the history if over budget, then let the agent answer, reporting to progress."""
        return await self._agent.run(await self._compactor.compact_if_needed(snapshot), progress)
