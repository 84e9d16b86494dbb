"""The one handler of every button: its callback data's prefix picks the parser and action."""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from telegram import Update
from telegram.ext import CallbackQueryHandler

from bot.telegram import callbacks
from bot.telegram.chat import group_stop
from bot.telegram.chat.handlers import group_stop_pressed
from bot.telegram.chat.reading import query_of
from bot.telegram.context import BotApplication, BotContext
from bot.telegram.erase import commands as delete_data
from bot.telegram.erase import texts as delete_texts
from bot.telegram.memories import buttons as memory_buttons
from bot.telegram.memories.texts import STALE_BUTTON
from bot.telegram.reminders import commands as reminders
from bot.telegram.reminders import views as reminder_views
from bot.telegram.sources import buttons as source_buttons
from bot.telegram.sources import views as source_views
from bot.telegram.tidy import buttons as tidy_buttons
from bot.telegram.tidy import callbacks as tidy_callbacks

Action = TypeVar("Action")


@dataclass(frozen=True)
class Route(Generic[Action]):
    """A feature's buttons: the prefixes of their data, its parser, its action, its stale text."""

    prefixes: tuple[str, ...]
    parse: Callable[[str | None], Action | None]  # None: malformed
    run: Callable[[Update, BotContext, Action], Awaitable[None]]
    stale: str = STALE_BUTTON  # the answer to malformed data under these prefixes


# The callback data already sent stay as they are: buttons in chats must keep working.
ROUTES: tuple[Route[Any], ...] = (
    Route(callbacks.PREFIXES, callbacks.parse_callback, memory_buttons.run_button),
    Route((source_views.PREFIX,), source_views.parse, source_buttons.run_button),
    Route((delete_texts.PREFIX,), delete_texts.parse, delete_data.run_button),
    Route(
        (reminder_views.PREFIX,),
        reminder_views.parse_press,
        reminders.run_button,
        reminder_views.GONE,
    ),
    Route((tidy_callbacks.PREFIX,), tidy_callbacks.parse_plan, tidy_buttons.run_button),
    Route((group_stop.PREFIX,), group_stop.parse, group_stop_pressed, group_stop.FINISHED),
)


def route_of(data: str | None) -> Route[Any] | None:
    """Return the route of a button's callback data, or None if no feature wrote it."""
    return next((route for route in ROUTES if (data or "").startswith(route.prefixes)), None)


async def on_button(update: Update, context: BotContext) -> None:
    """Run the pressed button's action, or say the button no longer works."""
    query = query_of(update)
    route = route_of(query.data)
    action = route.parse(query.data) if route is not None else None
    # Our buttons only sit on chat messages; an inline message has no chat and so no owner.
    if route is None or action is None or update.effective_chat is None:
        await query.answer(route.stale if route is not None else STALE_BUTTON, show_alert=True)
        return
    await route.run(update, context, action)


def register(application: BotApplication) -> None:
    """Handle every button press, ours or from an older version of the bot."""
    application.add_handler(CallbackQueryHandler(on_button))
