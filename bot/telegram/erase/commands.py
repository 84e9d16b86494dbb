"""/delete_my_data: delete everything the bot keeps for an owner, after one confirmed step.

Both the command and its buttons run in the chat's lane (bot/telegram/runtime/processing.py), like
every turn of the chat, holding its lease: a turn in progress ends before the deletion
starts, and the next one starts afresh after it, so none writes into what was deleted.
What does not wait in the lane cannot write after it either: an album waiting for its answer
is dropped, /memory off or on arriving meanwhile is not made (DataEraser.unless_deleted),
and a reminder the due loop took just before is sent but not stored
(bot/telegram/reminders/commands.py).
"""

import logging
import time

from telegram import ChatMember, Update
from telegram.constants import ChatType
from telegram.error import TelegramError
from telegram.ext import CommandHandler

from bot.telegram.chat.filters import NEW_MESSAGES
from bot.telegram.chat.handlers import say
from bot.telegram.chat.reading import chat_of, place_of, query_of
from bot.telegram.context import BotApplication, BotContext, owner_id
from bot.telegram.erase import texts
from bot.telegram.memories.commands import export_memories
from bot.telegram.ui import send_view, show_in_place

logger = logging.getLogger(__name__)

# A question older than this is answered as expired: an old message's button deletes nothing.
QUESTION_SECONDS = 15 * 60
ADMIN_STATUSES = frozenset({ChatMember.ADMINISTRATOR, ChatMember.OWNER})


def in_group(update: Update) -> bool:
    """Tell whether the update comes from a group, whose data its admins control."""
    return chat_of(update).type != ChatType.PRIVATE


async def is_admin(context: BotContext, chat_id: int, user_id: int) -> bool | None:
    """Tell whether a user is an admin of a group; None if Telegram could not say."""
    try:
        member = await context.bot.get_chat_member(chat_id, user_id)
    except TelegramError as error:
        logger.warning("could not check chat %s's admins: %s", chat_id, error)
        return None
    return member.status in ADMIN_STATUSES


async def delete_my_data(update: Update, context: BotContext) -> None:
    """Ask, with buttons and an export offered first, before deleting everything kept."""
    group, user = in_group(update), update.effective_user
    if user is None:
        return  # the guard lets no message without a sender through
    if group:
        admin = await is_admin(context, chat_of(update).id, user.id)
        if not admin:
            await say(update, context, texts.NOT_ADMIN if admin is False else texts.ADMIN_UNKNOWN)
            return
    held = await context.services.eraser.holdings(owner_id(update))
    if held.empty:
        await say(update, context, texts.NOTHING_KEPT_GROUP if group else texts.NOTHING_KEPT)
        return
    view = texts.question(held, group, user.id, int(time.time()))
    await send_view(context.bot, place_of(update), view)


async def _refusal(update: Update, context: BotContext, answer: texts.Answer) -> str | None:
    """Return why this press may not delete or cancel, or None if it may."""
    if query_of(update).from_user.id != answer.asker:
        return texts.NOT_ASKER_ALERT
    if not 0 <= time.time() - answer.asked_at <= QUESTION_SECONDS:
        await show_in_place(update, context.bot, texts.EXPIRED)
        return texts.EXPIRED_ALERT
    if answer.choice is texts.Choice.CONFIRM and in_group(update):
        if not await is_admin(context, chat_of(update).id, answer.asker):
            return texts.NOT_ADMIN_ALERT
    return None


async def run_button(update: Update, context: BotContext, answer: texts.Answer) -> None:
    """Export, delete everything, or cancel, as the pressed button of the question says."""
    query = query_of(update)
    if answer.choice is texts.Choice.EXPORT:
        await query.answer()
        await export_memories(update, context)  # the question stays, to answer after
        return
    if (refusal := await _refusal(update, context, answer)) is not None:
        await query.answer(refusal, show_alert=True)
        return
    if answer.choice is texts.Choice.CANCEL:
        await query.answer()
        await show_in_place(update, context.bot, texts.CANCELLED)
        return
    eraser = context.services.eraser
    # Held until the chat is told: /memory off or on sent meanwhile is not made after it.
    async with eraser.deleting(owner_id(update)):
        erased = await eraser.erase(owner_id(update))
        # An album stored before it would be answered from a conversation that is gone.
        if dropped := context.bot_data.albums.drop(chat_of(update).id):
            logger.info("dropped %d album(s) waiting for an answer: deleted with them", dropped)
        if erased.held.empty and not erased.files:
            await query.answer(texts.ALREADY_DELETED_ALERT, show_alert=True)
            return
        logger.info("deleted everything kept for owner %s", owner_id(update))
        await query.answer()
        await show_in_place(update, context.bot, texts.deleted(erased, in_group(update)))


def register(application: BotApplication) -> None:
    """Handle /delete_my_data (its buttons go through bot/telegram/buttons.py)."""
    application.add_handler(CommandHandler("delete_my_data", delete_my_data, NEW_MESSAGES))
