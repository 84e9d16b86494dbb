"""The chat service: store the user's message, then let the agent answer it."""

from collections.abc import Callable
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.agent.compaction import Compactor
from bot.agent.loop import Agent, Answer
from bot.agent.request import user_turn_content
from bot.conversations.snapshot import Snapshot
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
        chat_id: int,
        owner_id: int,
        text: str,
        sender_name: str | None = None,
        update_id: int | None = None,
    ) -> Answer:
        """Store the message before calling the model, so a failed call loses nothing.

        Raises DuplicateUpdate when this update was stored before (a redelivery).
        """
        now = self._clock().astimezone(self._zone)
        snapshot = await self._conversations.store_user_message(
            chat_id, owner_id, user_turn_content(text, now, sender_name), update_id
        )
        return await self.answer(snapshot)

    async def answer(self, snapshot: Snapshot) -> Answer:
        """Compact the history if it is over budget, then let the agent answer."""
        return await self._agent.run(await self._compactor.compact_if_needed(snapshot))
