"""The buttons of /memory and of the change notices: paging, Delete, clear, Undo."""

from telegram import Message, Update

from bot.telegram.callbacks import (
    Action,
    AnswerClear,
    AnswerProposal,
    DeleteFromPage,
    PinFromPage,
    ShowPage,
    ToggleFact,
    Undo,
)
from bot.telegram.chat.handlers import say
from bot.telegram.chat.reading import place_of, query_of
from bot.telegram.context import BotContext, owner_id
from bot.telegram.memories import texts
from bot.telegram.memories.commands import page_view
from bot.telegram.proposals.buttons import proposal_button, toggle_button
from bot.telegram.ui import Button, View, editable, show_in_place
from bot.telegram.views import without_button
from memory.items import AlreadyUndone, CannotUndo, ChangeNotFound, MemoryNotFound


def buttons_of(message: Message) -> tuple[tuple[Button, ...], ...]:
    """Read the callback buttons of a message we sent."""
    keyboard = message.reply_markup.inline_keyboard if message.reply_markup else ()
    return tuple(
        tuple(Button(b.text, b.callback_data) for b in row if isinstance(b.callback_data, str))
        for row in keyboard
    )


async def show_page(update: Update, context: BotContext, action: ShowPage) -> None:
    """Show another page of the memory list in the same message."""
    await query_of(update).answer()
    await show_in_place(update, context.bot, await page_view(update, context, action.page))


async def delete_button(update: Update, context: BotContext, action: DeleteFromPage) -> None:
    """Forget the memory of a page's Delete button, then refresh the page."""
    query = query_of(update)
    try:
        item = await context.services.memory_control.delete(owner_id(update), action.memory_id)
    except MemoryNotFound:
        await query.answer(texts.MEMORY_GONE, show_alert=True)
    else:
        await query.answer()
        await say(update, context, texts.deleted(item))
    await show_in_place(update, context.bot, await page_view(update, context, action.page))


async def pin_button(update: Update, context: BotContext, action: PinFromPage) -> None:
    """Pin or unpin the memory of a page's button, then refresh the page."""
    query = query_of(update)
    control = context.services.memory_control
    try:
        item = await control.pin(owner_id(update), action.memory_id, action.pinned)
    except MemoryNotFound:
        await query.answer(texts.MEMORY_GONE, show_alert=True)
    else:
        await query.answer(texts.PINNED_ALERT if item.pinned else texts.UNPINNED_ALERT)
    await show_in_place(update, context.bot, await page_view(update, context, action.page))


async def clear_answer(update: Update, context: BotContext, action: AnswerClear) -> None:
    """Forget everything on Yes, or nothing on Cancel, and say which."""
    await query_of(update).answer()
    if action.confirmed:
        count = await context.services.memory_control.clear(owner_id(update))
        await show_in_place(update, context.bot, View(texts.cleared(count)))
    else:
        await show_in_place(update, context.bot, View(texts.CLEAR_CANCELLED))


async def undo_button(update: Update, context: BotContext, action: Undo) -> None:
    """Undo a change the model made, once, and take its Undo button away."""
    query = query_of(update)
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
        await say(update, context, texts.undone(result))
        # The model learns of it with the user's next message.
        await context.services.proposal_answers.undone(place_of(update), owner_id(update), result)
    await _drop_pressed_button(update, context)


async def run_button(update: Update, context: BotContext, action: Action) -> None:
    """Run the pressed button's action (bot/telegram/buttons.py parsed it)."""
    match action:
        case ShowPage():
            await show_page(update, context, action)
        case DeleteFromPage():
            await delete_button(update, context, action)
        case PinFromPage():
            await pin_button(update, context, action)
        case AnswerClear():
            await clear_answer(update, context, action)
        case Undo():
            await undo_button(update, context, action)
        case AnswerProposal():
            await proposal_button(update, context, action)
        case ToggleFact():
            await toggle_button(update, context, action)


async def _drop_pressed_button(update: Update, context: BotContext) -> None:
    """Take the pressed button off its message, keeping the text and the other buttons."""
    query = query_of(update)
    if editable(query.message) and query.data is not None:
        rows = without_button(buttons_of(query.message), query.data)
        await show_in_place(update, context.bot, View(query.message.text_html, rows))


async def stale_button(update: Update, context: BotContext) -> None:
    """Say a button no longer works (malformed, or from another owner's message)."""
    await query_of(update).answer(texts.STALE_BUTTON, show_alert=True)
