"""Say in the owner's private chat what the Mini App changed, with Undo as the commands do."""

import logging
from html import escape

from telegram.error import TelegramError

from bot.conversations.snapshot import ChatThread
from bot.telegram.context import BotApplication
from bot.telegram.memories import texts
from bot.telegram.tidy.views import reverted_view
from bot.telegram.ui import View, send_view
from bot.telegram.views import change_notices
from bot.webapp.events import (
    BatchReverted,
    Changed,
    Event,
    Pinned,
    ReminderChanged,
    Restored,
    Undone,
)

logger = logging.getLogger(__name__)

FROM_APP = "<i>In the app:</i> "


def views_of(event: Event) -> list[View]:
    """Return the messages that announce one change, as the chat commands word it."""
    match event:
        case Changed(change):
            return change_notices([change])
        case Pinned(item, pinned):
            return [View(texts.pinned(item) if pinned else texts.unpinned(item))]
        case Restored(item):
            return [View(texts.restored(item))]
        case Undone(result):
            return [View(texts.undone(result))]
        case BatchReverted(result, redo):
            return [reverted_view(result, redo)]
        case ReminderChanged(reminder, cancelled):
            verb = "Cancelled" if cancelled else "Skipped its next time"
            return [View(f"{verb}: reminder '{escape(reminder.text)}'.")]


class TelegramAnnouncer:
    """Sends the app's changes to the owner's private chat (the owner's id is its chat id)."""

    def __init__(self, application: BotApplication):
        self._application = application

    async def tell(self, owner_id: int, event: Event) -> None:
        """Announce one change; a chat out of reach only costs the notice, not the change."""
        for view in views_of(event):
            shown = View(FROM_APP + view.text, view.buttons)
            try:
                await send_view(self._application.bot, ChatThread(owner_id, None), shown)
            except TelegramError as error:
                logger.warning("could not tell chat %s of a change in the app: %s", owner_id, error)
