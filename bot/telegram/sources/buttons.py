"""The buttons of a reply's sources: open the list, and Forget or Pin a memory from it.

Forget and Pin take the paths of /memory's own buttons (MemoryControl.delete and pin). Every
press is checked against the stored turn: it must be the owner's, and the memory one it cited.
"""

from telegram import Update

from bot.telegram.chat.handlers import say
from bot.telegram.chat.reading import place_of, query_of
from bot.telegram.context import BotContext, owner_id
from bot.telegram.memories import texts
from bot.telegram.memories.buttons import stale_button
from bot.telegram.sources.views import (
    ForgetSource,
    PinSource,
    ShowSources,
    SourceAction,
    sources_list,
)
from bot.telegram.ui import View, send_view, show_in_place
from memory.items import MemoryNotFound


async def _cited(update: Update, context: BotContext, turn_id: int) -> list[str] | None:
    """Return the memory ids the owner's stored turn cited, or None if it is not theirs."""
    return await context.services.chat.sources.of_turn(owner_id(update), turn_id)


async def _list(update: Update, context: BotContext, turn_id: int, cited: list[str]) -> View:
    """Render the turn's sources as they are now."""
    by_id = {
        item.id: item for item in await context.services.memories.items(owner_id(update), cited)
    }
    items = [by_id[memory_id] for memory_id in cited if memory_id in by_id]
    settings = context.services.settings
    return sources_list(turn_id, items, settings.zone, rich=settings.rich_messages)


async def show_sources(update: Update, context: BotContext, action: ShowSources) -> None:
    """Send the list of the memories a reply drew on, as a message of its own."""
    cited = await _cited(update, context, action.turn_id)
    if cited is None:
        await stale_button(update, context)
        return
    await query_of(update).answer()
    view = await _list(update, context, action.turn_id, cited)
    await send_view(context.bot, place_of(update), view)


async def forget_source(update: Update, context: BotContext, action: ForgetSource) -> None:
    """Forget one of a reply's sources, say so as /memory delete does, and refresh the list."""
    cited = await _cited(update, context, action.turn_id)
    if cited is None or action.memory_id not in cited:
        await stale_button(update, context)
        return
    query = query_of(update)
    try:
        item = await context.services.memory_control.delete(owner_id(update), action.memory_id)
    except MemoryNotFound:
        await query.answer(texts.MEMORY_GONE, show_alert=True)
    else:
        await query.answer()
        await say(update, context, texts.deleted(item))
    await show_in_place(update, context.bot, await _list(update, context, action.turn_id, cited))


async def pin_source(update: Update, context: BotContext, action: PinSource) -> None:
    """Pin or unpin one of a reply's sources, as /memory's Pin does, and refresh the list."""
    cited = await _cited(update, context, action.turn_id)
    if cited is None or action.memory_id not in cited:
        await stale_button(update, context)
        return
    query = query_of(update)
    control = context.services.memory_control
    try:
        item = await control.pin(owner_id(update), action.memory_id, action.pinned)
    except MemoryNotFound:
        await query.answer(texts.MEMORY_GONE, show_alert=True)
    else:
        await query.answer(texts.PINNED_ALERT if item.pinned else texts.UNPINNED_ALERT)
    await show_in_place(update, context.bot, await _list(update, context, action.turn_id, cited))


async def run_button(update: Update, context: BotContext, action: SourceAction) -> None:
    """Run a sources button (bot/telegram/buttons.py parsed it)."""
    match action:
        case ShowSources():
            await show_sources(update, context, action)
        case ForgetSource():
            await forget_source(update, context, action)
        case PinSource():
            await pin_source(update, context, action)
