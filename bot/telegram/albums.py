"""Albums: Telegram sends each photo of an album as a message of its own; answer them once.

Each item is stored as it comes; the answer waits until no item came for a moment, and
then covers them all (consecutive user turns are one message to the model). In a group
only the item with the caption mentions the bot; the others of its album are taken too.
"""

import asyncio
import logging
import time
from functools import partial

from telegram.ext import Application

from bot.agent.attachments import FileRefused
from bot.agent.user_turn import IncomingMessage
from bot.conversations.snapshot import ChatThread, DuplicateUpdate
from bot.telegram.context import BotContext, Services
from bot.telegram.delivery import deliver_answer, send_markdown
from bot.telegram.processing import lanes

logger = logging.getLogger(__name__)

# Telegram delivers an album's items together; a second without one means it is complete.
ALBUM_QUIET_SECONDS = 1.0
# How long an album that addressed the bot in a group takes its other items in.
ADDRESSED_FOR_SECONDS = 60.0


class Albums:
    """The albums being collected: a timer per chat topic, and albums that addressed the bot."""

    def __init__(self) -> None:
        self._timers: dict[ChatThread, asyncio.Task] = {}
        self._addressed: dict[str, float] = {}

    def mark_addressed(self, album_id: str) -> None:
        """Remember that an album's item addressed the bot, so its other items count too."""
        now = time.monotonic()
        self._addressed = {k: t for k, t in self._addressed.items() if t > now}
        self._addressed[album_id] = now + ADDRESSED_FOR_SECONDS

    def was_addressed(self, album_id: str | None) -> bool:
        """Tell whether an item of this album addressed the bot a moment ago."""
        return album_id is not None and self._addressed.get(album_id, 0.0) > time.monotonic()

    def answer_later(
        self, application: Application, place: ChatThread, conversation_id: int
    ) -> None:
        """Answer the topic's conversation once no album item came for a moment."""
        if (waiting := self._timers.pop(place, None)) is not None:
            waiting.cancel()
        task = asyncio.create_task(
            self._answer_when_quiet(application, place, conversation_id), name=f"album {place}"
        )
        task.add_done_callback(_log_failure)
        self._timers[place] = task

    async def _answer_when_quiet(
        self, application: Application, place: ChatThread, conversation_id: int
    ) -> None:
        """Wait for quiet, then answer in the chat's turn, after what came before."""
        await asyncio.sleep(ALBUM_QUIET_SECONDS)
        # From here on a new item waits for this answer rather than cancel it.
        if self._timers.get(place) is asyncio.current_task():
            del self._timers[place]
        services: Services = application.bot_data["services"]

        async def answer() -> None:
            # A message after the album may have had it answered already.
            snapshot = await services.conversations.snapshot(conversation_id)
            if snapshot.unanswered:
                answer = partial(services.chat.answer, snapshot)
                await deliver_answer(application.bot, place, answer, services.drafts)

        await lanes(application).run_exclusive(place.chat_id, answer())

    def cancel(self) -> None:
        """Drop the timers at shutdown; the stored items are answered after the restart."""
        for task in self._timers.values():
            task.cancel()
        self._timers.clear()


def _log_failure(task: asyncio.Task) -> None:
    """Log an album answer that failed: no handler's error path sees it."""
    if not task.cancelled() and task.exception() is not None:
        logger.error("answering an album failed", exc_info=task.exception())


def albums_of(application: Application) -> Albums:
    """Return the application's albums in collection."""
    return application.bot_data.setdefault("albums", Albums())


async def take_album_item(
    context: BotContext, place: ChatThread, owner_id: int, message: IncomingMessage
) -> None:
    """Store one item of an album now, and answer the album when it is complete."""
    try:
        snapshot = await context.services.chat.store_message(place, owner_id, message)
    except FileRefused as refused:
        await send_markdown(context.bot, place, refused.note)
        return
    except DuplicateUpdate:
        logger.info("album item %s was already stored", message.ref.message_key)
        return
    albums_of(context.application).answer_later(
        context.application, place, snapshot.conversation.id
    )
