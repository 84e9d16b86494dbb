"""The chat service: store the user's message, then let the agent answer it."""

from collections.abc import Callable
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.agent import Agent, AgentReply
from bot.compaction import Compactor
from bot.conversations import ConversationState, ConversationStore, Snapshot
from bot.prompt import user_turn_content
from memory.models import utcnow


class ChatService:
    """Turns a chat message into a stored user turn and the agent's reply."""

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

    async def reply(
        self,
        chat_id: int,
        owner_id: int,
        text: str,
        sender_name: str | None = None,
        update_id: int | None = None,
    ) -> AgentReply:
        """Store the message before calling the model, so a failed call loses nothing.

        Raises DuplicateUpdate when this update was stored before (a redelivery).
        """
        now = self._clock().astimezone(self._zone)
        snapshot = await self._conversations.store_user_message(
            chat_id, owner_id, user_turn_content(text, now, sender_name), update_id
        )
        return await self.answer(snapshot)

    async def answer(self, snapshot: Snapshot) -> AgentReply:
        """Compact the history if it is over budget, then let the agent answer."""
        return await self._agent.respond(await self._compactor.compact_if_needed(snapshot))

    async def snapshot(self, conversation_id: int) -> Snapshot:
        """Return a conversation as stored now, to answer it again after a restart."""
        return await self._conversations.snapshot(conversation_id)

    async def unanswered(self) -> list[ConversationState]:
        """Return conversations left with an unanswered message by a crash or a stop."""
        return await self._conversations.unanswered()

    async def new_conversation(self, chat_id: int) -> bool:
        """End the chat's conversation so the next message starts afresh."""
        return await self._conversations.end(chat_id)
