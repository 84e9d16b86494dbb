"""The buttons of a plan: skip a line, Apply (or Import), Cancel; then Undo all and Redo all."""

from telegram import Message, Update

from bot.telegram.chat.reading import place_of, query_of
from bot.telegram.context import BotContext, owner_id
from bot.telegram.memories.buttons import stale_button
from bot.telegram.tidy import texts
from bot.telegram.tidy.callbacks import PlanAction, PlanTap
from bot.telegram.tidy.views import decided_view, plan_view, reverted_view
from bot.telegram.ui import View, send_view, show_in_place
from memory.batches.values import (
    BatchDecided,
    BatchKind,
    BatchNotFound,
    BatchStale,
    BatchTooBig,
)


async def _skip(update: Update, context: BotContext, action: PlanAction) -> None:
    """Skip a line of the plan, or take it back in."""
    batches = context.services.tidy.batches
    batch = await batches.toggle(owner_id(update), action.batch_id, action.line or 0)
    await query_of(update).answer()
    rich = context.services.settings.rich_messages
    await show_in_place(update, context.bot, plan_view(batch, rich=rich))


async def _cancel(update: Update, context: BotContext, action: PlanAction) -> None:
    """Drop the plan; nothing changes."""
    batch = await context.services.tidy.batches.cancel(owner_id(update), action.batch_id)
    await query_of(update).answer()
    await show_in_place(update, context.bot, decided_view(batch, texts.CANCELLED, undoable=False))


async def _apply(update: Update, context: BotContext, action: PlanAction) -> None:
    """Apply the plan's chosen lines as one batch, in one transaction."""
    owner, query = owner_id(update), query_of(update)
    batches = context.services.tidy.batches
    if not (await batches.find(owner, action.batch_id)).chosen:
        await query.answer(texts.NOTHING_CHOSEN, show_alert=True)
        return
    try:
        batch = await batches.apply(owner, action.batch_id)
    except (BatchStale, BatchTooBig) as refused:
        text = texts.too_full(refused.limit) if isinstance(refused, BatchTooBig) else None
        batch = await batches.cancel(owner, action.batch_id)
        await query.answer()
        outcome = text or texts.CHANGED_SINCE
        await show_in_place(update, context.bot, decided_view(batch, outcome, undoable=False))
        return
    await context.services.conversations.refresh_memory_block(owner)
    await query.answer()
    await show_in_place(
        update, context.bot, decided_view(batch, texts.applied(batch), undoable=True)
    )


async def _revert(update: Update, context: BotContext, action: PlanAction) -> None:
    """Undo all of a batch (Redo all of an Undo all), and take the pressed button away."""
    owner, query = owner_id(update), query_of(update)
    batches = context.services.tidy.batches
    redo = (await batches.find(owner, action.batch_id)).kind is BatchKind.REVERT
    try:
        result = await batches.revert(owner, action.batch_id)
    except BatchTooBig as full:
        await query.answer(texts.too_full(full.limit), show_alert=True)
        return
    await context.services.conversations.refresh_memory_block(owner)
    await query.answer()
    message = query.message
    if isinstance(message, Message) and message.is_accessible:
        await show_in_place(update, context.bot, View(message.text_html))
    await send_view(context.bot, place_of(update), reverted_view(result, redo))


HANDLERS = {
    PlanTap.SKIP: _skip,
    PlanTap.CANCEL: _cancel,
    PlanTap.APPLY: _apply,
    PlanTap.REVERT: _revert,
}


async def run_button(update: Update, context: BotContext, action: PlanAction) -> None:
    """Run the pressed plan button's action (bot/telegram/buttons.py parsed it)."""
    try:
        await HANDLERS[action.tap](update, context, action)
    except BatchNotFound:
        await stale_button(update, context)
    except BatchDecided:
        await query_of(update).answer(texts.STALE_PLAN, show_alert=True)
