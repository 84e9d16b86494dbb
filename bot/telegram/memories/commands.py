"""The /memory command family: the user's direct control of memory, without the model."""

from functools import partial

from telegram import InputFile, Update
from telegram.constants import ParseMode
from telegram.ext import CommandHandler

from bot.telegram.chat.filters import NEW_MESSAGES
from bot.telegram.chat.handlers import say
from bot.telegram.chat.reading import place_of
from bot.telegram.context import BotApplication, BotContext, owner_id
from bot.telegram.erase import texts as delete_texts
from bot.telegram.imports.commands import import_memories
from bot.telegram.memories import texts
from bot.telegram.memories.markdown_export import MARKDOWN_WORDS, export_markdown
from bot.telegram.miniapp.button import with_open_button
from bot.telegram.tidy.commands import tidy_memories
from bot.telegram.tidy.texts import batch_notes
from bot.telegram.ui import View, send_view
from bot.telegram.views import clear_question, memory_page
from memory.items import MemoryAtLimit, MemoryNotDeleted, MemoryNotFound

SEARCH_RESULTS_SHOWN = 20


def _argument(context: BotContext) -> str | None:
    """Return the one argument after the subcommand, or None if there is not exactly one."""
    args = context.args or []
    return args[1] if len(args) == 2 else None


async def _memory_id(update: Update, context: BotContext, subcommand: str) -> str | None:
    """Return the one id after the subcommand, or ask for it and return None."""
    memory_id = _argument(context)
    if memory_id is None:
        await say(update, context, texts.id_usage(subcommand))
    return memory_id


async def page_view(update: Update, context: BotContext, page: int) -> View:
    """Render a page of the owner's memories as they are now, with the app's Open button."""
    view = memory_page(await context.services.memory_control.overview(owner_id(update)), page)
    return with_open_button(view, update, context.services.settings, "memories")


# A subcommand given an unknown id raises MemoryNotFound; memory_command answers it.


async def list_memories(update: Update, context: BotContext) -> None:
    """Show the first page of memories, with Delete buttons and paging."""
    await send_view(context.bot, place_of(update), await page_view(update, context, 1))


async def delete_memory(update: Update, context: BotContext) -> None:
    """Forget one memory by id."""
    if (memory_id := await _memory_id(update, context, "delete")) is None:
        return
    item = await context.services.memory_control.delete(owner_id(update), memory_id)
    await say(update, context, texts.deleted(item))


async def restore_memory(update: Update, context: BotContext) -> None:
    """Bring back a deleted memory by id, or list the recently deleted ones."""
    memory_id = _argument(context)
    control = context.services.memory_control
    if memory_id is None:
        deleted = await control.recently_deleted(owner_id(update))
        await say(update, context, texts.restore_usage(deleted))
        return
    try:
        item = await control.restore(owner_id(update), memory_id)
    except MemoryNotDeleted:
        await say(update, context, texts.not_deleted(memory_id))
    except MemoryAtLimit as full:
        await say(update, context, texts.restore_full(full.limit))
    else:
        await say(update, context, texts.restored(item))


async def pin_memory(update: Update, context: BotContext) -> None:
    """Keep a memory in the prompt before unpinned ones."""
    if (memory_id := await _memory_id(update, context, "pin")) is None:
        return
    item = await context.services.memory_control.pin(owner_id(update), memory_id, True)
    await say(update, context, texts.pinned(item))


async def unpin_memory(update: Update, context: BotContext) -> None:
    """Let a pinned memory take its turn with the others again."""
    if (memory_id := await _memory_id(update, context, "unpin")) is None:
        return
    item = await context.services.memory_control.pin(owner_id(update), memory_id, False)
    await say(update, context, texts.unpinned(item))


async def memory_history(update: Update, context: BotContext) -> None:
    """Show every version of a memory with its date, newest last."""
    if (memory_id := await _memory_id(update, context, "history")) is None:
        return
    found = await context.services.memory_control.history(owner_id(update), memory_id)
    zone = context.services.settings.zone
    # What tidy passes, imports and Undo all did to it, with their reasons.
    notes = batch_notes(await context.services.tidy.batches.notes(owner_id(update), memory_id))
    await say(update, context, texts.history(found.item, found.versions, zone) + notes)


async def search_memories(update: Update, context: BotContext) -> None:
    """Show the active memories matching some words, best first, with their ids."""
    query = " ".join((context.args or [])[1:])
    if not query.strip():
        await say(update, context, texts.SEARCH_USAGE)
        return
    found = await context.services.memory_control.search(owner_id(update), query)
    await say(update, context, texts.search_results(query, found, SEARCH_RESULTS_SHOWN))


async def clear_memories(update: Update, context: BotContext) -> None:
    """Ask, with buttons, before forgetting every memory."""
    count = len((await context.services.memory_control.overview(owner_id(update))).items)
    if count == 0:
        await say(update, context, texts.CLEAR_NOTHING)
        return
    await send_view(context.bot, place_of(update), clear_question(count))


async def export_memories(update: Update, context: BotContext) -> None:
    """Send every memory and all its versions as JSON: one file, or a few when it is large."""
    if (fmt := _argument(context)) is not None:
        await (export_markdown if fmt.lower() in MARKDOWN_WORDS else memory_usage)(update, context)
        return
    export = await context.services.memory_control.export(owner_id(update))
    if export is None:
        await say(update, context, texts.EXPORT_EMPTY)
        return
    place = place_of(update)
    count = len(export.parts)
    for number, part in enumerate(export.parts, 1):
        caption = texts.export_caption(export.total, export.deleted, count, number)
        await context.bot.send_document(
            place.chat_id,
            InputFile(part.data, filename=part.filename),
            caption=caption,
            parse_mode=ParseMode.HTML,
            message_thread_id=place.thread_id,
        )


async def _switch(update: Update, context: BotContext, enabled: bool) -> bool | None:
    """Turn memory on or off, unless /delete_my_data is deleting it meanwhile (None then)."""
    owner, control = owner_id(update), context.services.memory_control
    return await context.services.eraser.unless_deleted(
        owner, partial(control.set_enabled, owner, enabled)
    )


async def memory_off(update: Update, context: BotContext) -> None:
    """Stop using and saving memories; keep the stored ones."""
    if (changed := await _switch(update, context, False)) is None:
        await say(update, context, delete_texts.SWITCH_DURING_DELETION)
        return
    count = len((await context.services.memory_control.overview(owner_id(update))).items)
    await say(update, context, texts.memory_off(changed, count))


async def memory_on(update: Update, context: BotContext) -> None:
    """Use and save memories again."""
    if (changed := await _switch(update, context, True)) is None:
        await say(update, context, delete_texts.SWITCH_DURING_DELETION)
        return
    await say(update, context, texts.memory_on(changed))


async def memory_usage(update: Update, context: BotContext) -> None:
    """Explain the /memory subcommands."""
    await say(update, context, texts.MEMORY_USAGE)


# Subcommands with their argument count: None takes any number of words.
SUBCOMMANDS = {
    "list": (list_memories, 0),
    "delete": (delete_memory, None),
    "restore": (restore_memory, None),
    "history": (memory_history, None),
    "pin": (pin_memory, None),
    "unpin": (unpin_memory, None),
    "search": (search_memories, None),
    "clear": (clear_memories, 0),
    "export": (export_memories, 1),
    "off": (memory_off, 0),
    "on": (memory_on, 0),
    "tidy": (tidy_memories, 0),
    "import": (import_memories, None),
}


async def memory_command(update: Update, context: BotContext) -> None:
    """Run a /memory subcommand; a bare /memory lists."""
    args = context.args or []
    handler, arity = SUBCOMMANDS.get(args[0].lower() if args else "list", (memory_usage, None))
    if arity is not None and len(args) > 1 + arity:
        handler = memory_usage
    try:
        await handler(update, context)
    except MemoryNotFound as missing:
        await say(update, context, texts.unknown_memory(missing.memory_id))


def register(application: BotApplication) -> None:
    """Handle /memory (its buttons go through bot/telegram/buttons.py)."""
    application.add_handler(CommandHandler("memory", memory_command, NEW_MESSAGES))
