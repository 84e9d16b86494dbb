"""Views and their buttons: markup, sending a view, showing it in place of a pressed one."""

import logging
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TypeGuard

from telegram import (
    Bot,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    MaybeInaccessibleMessage,
    Message,
    Update,
    WebAppInfo,
)
from telegram.constants import ParseMode
from telegram.error import BadRequest, EndPointNotFound, InvalidToken

from bot.conversations.snapshot import ChatThread
from bot.telegram import native
from bot.telegram.chat.reading import place_of, query_of
from bot.telegram.chat.sending import send_html, send_rich

logger = logging.getLogger(__name__)

# Telegram refuses callback data over 64 bytes.
MAX_CALLBACK_BYTES = 64


def callback_data(prefix: str, *fields: object) -> str:
    """Join a button's prefix and fields with colons, refusing data Telegram would refuse."""
    data = ":".join([prefix, *(str(field) for field in fields)])
    if len(data.encode("utf-8")) > MAX_CALLBACK_BYTES:
        raise ValueError(f"callback data over {MAX_CALLBACK_BYTES} bytes: {data!r}")
    return data


@dataclass(frozen=True)
class Button:
    """An inline button: its label and its callback data."""

    label: str
    data: str
    # A Mini App's URL: the button opens it (private chats only) instead of calling back.
    web_app: str | None = None


@dataclass(frozen=True)
class View:
    """A message to send or edit: HTML text and rows of inline buttons.

    rich: the same as Markdown for a Rich Message, where that reads better (a long list) and
    RICH_MESSAGES is on; None sends the HTML, as does Telegram refusing the rich one.
    """

    text: str
    buttons: tuple[tuple[Button, ...], ...] = ()
    rich: str | None = None


def markup(rows: tuple[tuple[Button, ...], ...]) -> InlineKeyboardMarkup | None:
    """Turn button rows into Telegram's inline keyboard, or None for no buttons."""
    if not rows:
        return None
    return InlineKeyboardMarkup([[_inline(button) for button in row] for row in rows])


def _inline(button: Button) -> InlineKeyboardButton:
    """Turn one button into Telegram's: a Mini App's, or one that calls back."""
    if button.web_app is not None:
        return InlineKeyboardButton(button.label, web_app=WebAppInfo(button.web_app))
    return InlineKeyboardButton(button.label, callback_data=button.data)


def editable(message: MaybeInaccessibleMessage | None) -> TypeGuard[Message]:
    """Tell whether the bot may still edit a button's message (Telegram says so by date 0)."""
    return isinstance(message, Message) and message.is_accessible


async def edit_unless_unchanged(edit: Awaitable[object]) -> None:
    """Make an edit; Telegram refusing it because nothing changes is fine."""
    try:
        await edit
    except BadRequest as error:
        # A second press that changes nothing is fine; anything else is a real failure.
        if "not modified" not in str(error).lower():
            raise


async def send_view(bot: Bot, place: ChatThread, view: View) -> None:
    """Send a view as one message (views are built to fit one): rich if it has that form."""
    keyboard = markup(view.buttons)
    if view.rich is not None and await send_rich(bot, place, view.rich, keyboard):
        return
    await send_html(bot, place.chat_id, view.text, thread_id=place.thread_id, reply_markup=keyboard)


async def _edit_rich(
    bot: Bot, message: Message, view: View, keyboard: InlineKeyboardMarkup | None
) -> bool:
    """Show the view's rich form in place of the message; False if Telegram refused it."""
    if view.rich is None:
        return False
    edit = native.edit_rich_message(
        bot, message.chat_id, message.message_id, view.rich, reply_markup=keyboard
    )
    try:
        await edit_unless_unchanged(edit)
    except (BadRequest, InvalidToken, EndPointNotFound) as error:
        logger.warning("Telegram refused a rich edit (%s); showing HTML", error)
        return False
    return True


async def show_in_place(update: Update, bot: Bot, view: View) -> None:
    """Show a view in place of the pressed button's message, or anew if that is out of reach."""
    message = query_of(update).message
    if not editable(message):
        await send_view(bot, place_of(update), view)
        return
    keyboard = markup(view.buttons)
    if await _edit_rich(bot, message, view, keyboard):
        return
    await edit_unless_unchanged(
        message.edit_text(view.text, parse_mode=ParseMode.HTML, reply_markup=keyboard)
    )
