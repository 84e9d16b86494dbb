"""The chat service: store the user's message, then let the agent answer it."""

import asyncio
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.agent.history.compaction import Compactor
from bot.agent.loop import Agent, Answer
from bot.agent.stream import Progress
from bot.agent.user_turn import IncomingMessage, said_by, user_turn_content
from bot.conversations.blocks import text_block
from bot.conversations.snapshot import ChatThread, Snapshot
from bot.conversations.store import ConversationStore
from bot.media.attachments import FileRefused, Files
from bot.media.voice import VoiceNotRead
from memory.models import utcnow


class ChatService:
    """Turns a chat message into a stored user turn and the agent's answer."""

    def __init__(
        self,
        conversations: ConversationStore,
        agent: Agent,
        compactor: Compactor,
        zone: ZoneInfo,
        files: Files,
        clock: Callable[[], datetime] = utcnow,
        turn_seconds: float | None = None,
    ):
        self._turn_seconds = turn_seconds  # None: no deadline
        self._conversations = conversations
        self._agent = agent
        self.sources = agent.sources  # what each reply cited: its "Based on" button reads them
        self._compactor = compactor
        self._zone = zone
        self._files = files
        self._clock = clock

    async def answer_message(
        self,
        place: ChatThread,
        owner_id: int,
        message: IncomingMessage,
        progress: Progress | None = None,
        stored: Callable[[], None] = lambda: None,
    ) -> Answer:
        """Store the message before calling the model, so a failed call loses nothing.

        stored is told once the message is stored, before the model is called.
        A file the bot does not read is answered with why (a notice), and nothing is stored.
        Raises DuplicateUpdate when this message was stored before (a redelivery).
        """
        try:
            snapshot = await self.store_message(place, owner_id, message)
        except FileRefused as refused:
            return Answer(text="", notices=[refused.refusal])
        stored()
        return await self.answer(snapshot, progress)

    async def store_message(
        self, place: ChatThread, owner_id: int, message: IncomingMessage
    ) -> Snapshot:
        """Check and fetch the message's files, then store it; return its conversation.

        Raises FileRefused for a file the bot does not read, DuplicateUpdate for a redelivery.
        """
        refs = [await self._files.prepare(file) for file in message.files]
        now = self._clock().astimezone(self._zone)
        ref = replace(message.ref, said_by=said_by(message))
        # The web budget's count of the day rides along (Snapshot.web): a session less.
        return await self._conversations.store_user_message(
            place, owner_id, user_turn_content(message, now, refs), ref, web_day=now.date()
        )

    async def keep_unread_voice(
        self,
        place: ChatThread,
        owner_id: int,
        message: IncomingMessage,
        unread: VoiceNotRead,
        reply: str,
    ) -> None:
        """Store a note that was not transcribed, by reference, with the reply the user got.

        Nothing is lost: its file id stays with the turn. The model is not called; the reply
        is stored as the assistant's, so the turn is answered, also after a restart.
        Raises DuplicateUpdate for a redelivery.
        """
        now = self._clock().astimezone(self._zone)
        ref = replace(message.ref, said_by=said_by(message))
        content = user_turn_content(message, now, voice=unread.ref)
        snapshot = await self._conversations.store_user_message(place, owner_id, content, ref)
        await self._conversations.append(snapshot.conversation, "assistant", [text_block(reply)])

    async def answer(self, snapshot: Snapshot, progress: Progress | None = None) -> Answer:
        """Compact the history if over budget, then let the agent answer, reporting to progress.

        Both wait on the model within one deadline; the agent raises TurnFailed past it.
        """
        deadline = None
        if self._turn_seconds is not None:
            deadline = asyncio.get_running_loop().time() + self._turn_seconds
        snapshot = await self._compactor.compact_if_needed(snapshot, deadline)
        return await self._agent.run(snapshot, progress, deadline)
