"""Handlers of the /memory command family and its buttons: the user's direct control of memory."""

from typing import TypeGuard

from telegram import (
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InputFile,
    MaybeInaccessibleMessage,
    Message,
    Update,
)
from telegram.constants import ParseMode
from telegram.error import BadRequest
from telegram.ext import Application, CallbackQueryHandler, CommandHandler

from bot import texts
from bot.context import BotContext
from bot.filters import NEW_MESSAGES
from bot.memory_views import (
    AnswerClear,
    Button,
    DeleteFromPage,
    ShowPage,
    Undo,
    View,
    change_notices,
    clear_question,
    memory_page,
    parse_callback,
    without_button,
)
from bot.owners import owner_id
from bot.replies import send_html
from memory.store import (
    AlreadyUndone,
    CannotUndo,
    ChangeNotFound,
    MemoryNotDeleted,
    MemoryNotFound,
)
from memory.tools import MemoryChange

SEARCH_RESULTS_SHOWN = 20


def markup(rows: tuple[tuple[Button, ...], ...]) -> InlineKeyboardMarkup | None:
    """Turn button rows into Telegram's inline keyboard, or None for no buttons."""
    if not rows:
        return None
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton(b.label, callback_data=b.data) for b in row] for row in rows]
    )


def buttons_of(message: Message) -> tuple[tuple[Button, ...], ...]:
    """Read the callback buttons of a message we sent."""
    keyboard = message.reply_markup.inline_keyboard if message.reply_markup else ()
    return tuple(
        tuple(Button(b.text, b.callback_data) for b in row if isinstance(b.callback_data, str))
        for row in keyboard
    )


def _argument(context: BotContext) -> str | None:
    """Return the one argument after the subcommand, or None if there is not exactly one."""
    args = context.args or []
    return args[1] if len(args) == 2 else None


def _editable(message: MaybeInaccessibleMessage | None) -> TypeGuard[Message]:
    """Tell whether the bot may still edit a button's message (Telegram says so by date 0)."""
    return isinstance(message, Message) and message.is_accessible


async def _send(context: BotContext, chat_id: int, view: View) -> None:
    """Send a view as one message (views are built to fit one)."""
    await send_html(context.bot, chat_id, view.text, reply_markup=markup(view.buttons))


async def _edit(update: Update, context: BotContext, view: View) -> None:
    """Show a view in place of the pressed button's message, or anew if that is out of reach."""
    message = update.callback_query.message
    if not _editable(message):
        await _send(context, update.effective_chat.id, view)
        return
    try:
        await message.edit_text(
            view.text, parse_mode=ParseMode.HTML, reply_markup=markup(view.buttons)
        )
    except BadRequest as error:
        # A second press that changes nothing is fine; anything else is a real failure.
        if "not modified" not in str(error).lower():
            raise


async def _page(update: Update, context: BotContext, page: int) -> View:
    """Render a page of the owner's memories as they are now."""
    overview = await context.services.memory_control.overview(owner_id(update))
    view, _ = memory_page(overview.items, overview.usage, overview.enabled, page)
    return view


async def _say(update: Update, context: BotContext, html: str) -> None:
    """Send HTML we wrote to the update's chat."""
    await send_html(context.bot, update.effective_chat.id, html)


# --- /memory subcommands ---------------------------------------------------------------
# A subcommand given an unknown id raises MemoryNotFound; memory_command answers it.


async def list_memories(update: Update, context: BotContext) -> None:
    """Show the first page of memories, with Delete buttons and paging."""
    await _send(context, update.effective_chat.id, await _page(update, context, 1))


async def delete_memory(update: Update, context: BotContext) -> None:
    """Forget one memory by id."""
    memory_id = _argument(context)
    if memory_id is None:
        await _say(update, context, texts.id_usage("delete"))
        return
    item = await context.services.memory_control.delete(owner_id(update), memory_id)
    await _say(update, context, texts.deleted(item))


async def restore_memory(update: Update, context: BotContext) -> None:
    """Bring back a deleted memory by id, or list the recently deleted ones."""
    memory_id = _argument(context)
    control = context.services.memory_control
    if memory_id is None:
        deleted = await control.recently_deleted(owner_id(update))
        await _say(update, context, texts.restore_usage(deleted))
        return
    try:
        item = await control.restore(owner_id(update), memory_id)
    except MemoryNotDeleted:
        await _say(update, context, texts.not_deleted(memory_id))
    else:
        await _say(update, context, texts.restored(item))


async def memory_history(update: Update, context: BotContext) -> None:
    """Show every version of a memory with its date, newest last."""
    memory_id = _argument(context)
    if memory_id is None:
        await _say(update, context, texts.id_usage("history"))
        return
    found = await context.services.memory_control.history(owner_id(update), memory_id)
    zone = context.services.settings.zone
    await _say(update, context, texts.history(found.item, found.versions, zone))


async def search_memories(update: Update, context: BotContext) -> None:
    """Show the active memories matching some words, best first, with their ids."""
    query = " ".join((context.args or [])[1:])
    if not query.strip():
        await _say(update, context, texts.SEARCH_USAGE)
        return
    found = await context.services.memory_control.search(owner_id(update), query)
    await _say(update, context, texts.search_results(query, found, SEARCH_RESULTS_SHOWN))


async def clear_memories(update: Update, context: BotContext) -> None:
    """Ask, with buttons, before forgetting every memory."""
    count = len(await context.services.memory_control.list(owner_id(update)))
    if count == 0:
        await _say(update, context, texts.CLEAR_NOTHING)
        return
    await _send(context, update.effective_chat.id, clear_question(count))


async def export_memories(update: Update, context: BotContext) -> None:
    """Send a JSON file with every memory and all its versions."""
    export = await context.services.memory_control.export(owner_id(update))
    if export is None:
        await _say(update, context, texts.EXPORT_EMPTY)
        return
    await context.bot.send_document(
        update.effective_chat.id,
        InputFile(export.data, filename=export.filename),
        caption=texts.export_caption(export.total, export.deleted),
        parse_mode=ParseMode.HTML,
    )


async def memory_off(update: Update, context: BotContext) -> None:
    """Stop using and saving memories; keep the stored ones."""
    control = context.services.memory_control
    changed = await control.set_enabled(owner_id(update), False)
    count = len(await control.list(owner_id(update)))
    await _say(update, context, texts.memory_off(changed, count))


async def memory_on(update: Update, context: BotContext) -> None:
    """Use and save memories again."""
    changed = await context.services.memory_control.set_enabled(owner_id(update), True)
    await _say(update, context, texts.memory_on(changed))


async def memory_usage(update: Update, context: BotContext) -> None:
    """Explain the /memory subcommands."""
    await _say(update, context, texts.MEMORY_USAGE)


# Subcommands with their argument count: None takes any number of words.
SUBCOMMANDS = {
    "list": (list_memories, 0),
    "delete": (delete_memory, None),
    "restore": (restore_memory, None),
    "history": (memory_history, None),
    "search": (search_memories, None),
    "clear": (clear_memories, 0),
    "export": (export_memories, 0),
    "off": (memory_off, 0),
    "on": (memory_on, 0),
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
        await _say(update, context, texts.unknown_memory(missing.memory_id))


# --- buttons ---------------------------------------------------------------------------


async def show_page(update: Update, context: BotContext, action: ShowPage) -> None:
    """Show another page of the memory list in the same message."""
    await update.callback_query.answer()
    await _edit(update, context, await _page(update, context, action.page))


async def delete_button(update: Update, context: BotContext, action: DeleteFromPage) -> None:
    """Forget the memory of a page's Delete button, then refresh the page."""
    query = update.callback_query
    try:
        item = await context.services.memory_control.delete(owner_id(update), action.memory_id)
    except MemoryNotFound:
        await query.answer(texts.MEMORY_GONE, show_alert=True)
    else:
        await query.answer()
        await _say(update, context, texts.deleted(item))
    await _edit(update, context, await _page(update, context, action.page))


async def clear_answer(update: Update, context: BotContext, action: AnswerClear) -> None:
    """Forget everything on Yes, or nothing on Cancel, and say which."""
    await update.callback_query.answer()
    if action.confirmed:
        count = await context.services.memory_control.clear(owner_id(update))
        await _edit(update, context, View(texts.cleared(count)))
    else:
        await _edit(update, context, View(texts.CLEAR_CANCELLED))


async def undo_button(update: Update, context: BotContext, action: Undo) -> None:
    """Undo a change the agent made, once, and take its Undo button away."""
    query = update.callback_query
    try:
        result = await context.services.memory_control.undo(owner_id(update), action.change_id)
    except ChangeNotFound:
        await stale_button(update, context)
        return
    except AlreadyUndone:
        await query.answer(texts.ALREADY_UNDONE, show_alert=True)
    except CannotUndo as refusal:
        await query.answer(texts.CANNOT_UNDO[refusal.reason], show_alert=True)
        return
    else:
        await query.answer(texts.UNDONE_ALERT)
        await _say(update, context, texts.undone(result))
    await _drop_pressed_button(update, context)


BUTTONS = {
    ShowPage: show_page,
    DeleteFromPage: delete_button,
    AnswerClear: clear_answer,
    Undo: undo_button,
}


async def on_button(update: Update, context: BotContext) -> None:
    """Run the pressed button's action, or say the button no longer works."""
    action = parse_callback(update.callback_query.data)
    # Our buttons only sit on chat messages; an inline message has no chat and so no owner.
    if action is None or update.effective_chat is None:
        await stale_button(update, context)
        return
    await BUTTONS[type(action)](update, context, action)


async def _drop_pressed_button(update: Update, context: BotContext) -> None:
    """Take the pressed button off its message, keeping the text and the other buttons."""
    query = update.callback_query
    if _editable(query.message):
        rows = without_button(buttons_of(query.message), query.data)
        await _edit(update, context, View(query.message.text_html, rows))


async def stale_button(update: Update, context: BotContext) -> None:
    """Say a button no longer works (malformed, or from another owner's message)."""
    await update.callback_query.answer(texts.STALE_BUTTON, show_alert=True)


async def send_change_notice(
    context: BotContext, chat_id: int, changes: list[MemoryChange]
) -> None:
    """Tell the user what the agent saved, updated or forgot this turn, with Undo buttons."""
    for view in change_notices(changes):
        await _send(context, chat_id, view)


def add_memory_handlers(application: Application) -> None:
    """Register the /memory command and its buttons."""
    application.add_handler(CommandHandler("memory", memory_command, NEW_MESSAGES))
    # Malformed data in our namespaces, or from an older version of the bot, is a stale button.
    application.add_handler(CallbackQueryHandler(on_button, pattern=r"^(m|u):"))
