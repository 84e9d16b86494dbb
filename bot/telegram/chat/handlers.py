"""Telegram handlers for chat and the simple commands: read the update, call a service, reply."""

import logging
from functools import partial

from telegram import Update
from telegram.error import Conflict, TelegramError
from telegram.ext import ApplicationHandlerStop

from bot.agent.user_turn import IncomingMessage
from bot.conversations.leases import Taken
from bot.conversations.snapshot import ChatThread, DuplicateUpdate
from bot.media.attachments import FileRefused
from bot.telegram import native, texts
from bot.telegram.chat import group_stop
from bot.telegram.chat.delivery import answer_if_unanswered, deliver_answer
from bot.telegram.chat.file_texts import refusal_text
from bot.telegram.chat.filters import ADDRESSED_TO_BOT
from bot.telegram.chat.reading import incoming_of, message_of, place_of, query_of
from bot.telegram.chat.sending import send_html, send_markdown
from bot.telegram.context import BotContext, owner_id
from bot.telegram.runtime.acks import acknowledge
from bot.telegram.runtime.cooldown import Cooldown
from bot.telegram.runtime.lifecycle import answer_left_over

logger = logging.getLogger(__name__)


async def say(update: Update, context: BotContext, html: str) -> None:
    """Send HTML we wrote to the update's chat, in its forum topic if it has one."""
    place = place_of(update)
    await send_html(context.bot, place.chat_id, html, thread_id=place.thread_id)


async def start(update: Update, context: BotContext) -> None:
    """Greet the user and say what the bot does."""
    await say(update, context, texts.START)


async def help_command(update: Update, context: BotContext) -> None:
    """Explain the commands and how memory works."""
    await say(update, context, texts.HELP)


async def new_conversation(update: Update, context: BotContext) -> None:
    """End the current conversation."""
    await context.services.conversations.end(place_of(update))
    await say(update, context, texts.NEW_CONVERSATION)


async def take_album_item(
    context: BotContext, place: ChatThread, owner_id: int, message: IncomingMessage
) -> None:
    """Store one item of an album now, and answer the album when it is complete."""
    try:
        snapshot = await context.services.chat.store_message(place, owner_id, message)
    except FileRefused as refused:
        await send_markdown(context.bot, place, refusal_text(refused.refusal))
        return
    except DuplicateUpdate:
        logger.info("album item %s was already stored", message.ref.message_key)
        return
    # A message after the album may have had it answered already.
    answer = partial(answer_if_unanswered, context.application, place, snapshot.conversation.id)
    context.bot_data.albums.answer_later(place, answer)


async def chat_message(update: Update, context: BotContext) -> None:
    """Answer a message through the agent; an album's items are answered together."""
    place = place_of(update)
    message = incoming_of(update, context.bot.id)
    if message_of(update).media_group_id:
        await take_album_item(context, place, owner_id(update), message)
        return
    await answer_incoming(update, context, message)


async def answer_incoming(update: Update, context: BotContext, message: IncomingMessage) -> None:
    """Store the message read from the update and deliver the agent's answer, once."""
    place = place_of(update)
    # Once stored, Telegram may have its answer: the chat's next update can go anywhere.
    stored = partial(acknowledge, context.application.update_queue, update)
    chat = context.services.chat
    answer = partial(chat.answer_message, place, owner_id(update), message, stored=stored)
    try:
        services = context.services
        asker = update.effective_user.id if update.effective_user else None
        await deliver_answer(
            context.bot, place, answer, services.drafts, services.account_notices, asker
        )
    except DuplicateUpdate:
        outage = context.bot_data.outage
        if outage is not None and update.update_id in outage.replaying:
            # Stored just before the database went away: answered now, if it still waits.
            await answer_left_over(context.application, place.chat_id, Taken())
            return
        logger.info("update %s was already handled; not answering twice", update.update_id)


async def file_message(update: Update, context: BotContext) -> None:
    """Answer a photo or document addressed to the bot, or from an album that was."""
    albums = context.bot_data.albums
    album_id = message_of(update).media_group_id
    if ADDRESSED_TO_BOT.check_update(update):
        if album_id:
            albums.mark_addressed(album_id)
    elif not albums.was_addressed(album_id):
        return  # group talk, not for the bot
    await chat_message(update, context)


async def generation_stopped(update: Update, context: BotContext) -> None:
    """Stop the reply whose draft the user stopped, if it is still being written."""
    stop = native.stopped_generation(update)
    # Only Telegram sends it, and only for the bot's own drafts; strangers have none.
    if stop is not None and stop.chat.id in context.services.settings.allowed_user_ids:
        if not context.services.drafts.stop(stop.chat.id, stop.draft_id):
            logger.info("chat %s: Stop pressed after the reply was finished", stop.chat.id)
    raise ApplicationHandlerStop  # no other handler knows this update


async def group_stop_pressed(update: Update, context: BotContext, token: int) -> None:
    """Stop the group answer a Stop button belongs to, if the member who asked pressed it."""
    query = query_of(update)
    said = context.services.drafts.groups.press(token, query.from_user.id)
    await query.answer(said, show_alert=said == group_stop.NOT_YOURS)


async def unsupported_message(update: Update, context: BotContext) -> None:
    """Say politely which kinds of messages are understood."""
    await say(update, context, texts.NOT_TEXT)


async def group_migrated(update: Update, context: BotContext) -> None:
    """Move a group's memories and conversations to the id of the supergroup it became."""
    message = message_of(update)
    if message.migrate_to_chat_id:
        old, new = message.chat_id, message.migrate_to_chat_id
    elif message.migrate_from_chat_id:
        old, new = message.migrate_from_chat_id, message.chat_id
    else:
        return  # the MIGRATE filter passes only messages that carry one of the two
    if not (old < 0 and new < 0 and old != new):
        # It runs before the allowlist: only a group becoming a supergroup moves anything,
        # never a user's private memories (whose owner id is positive) into a group or out.
        logger.warning("ignored a group migration that is not group to group: %s -> %s", old, new)
        return
    moved = await context.services.conversations.move_chat(old, new)
    logger.info("group %s became %s: moved %d memories", old, new, moved)


# Another process polling this bot (a deploy's overlap) gets 409 Conflict on every poll until
# one of them stops; PTB backs off (up to 30 s). Said once a minute, never as a traceback.
_CONFLICT_LINES = Cooldown(60, 1)


async def error_handler(update: object, context: BotContext) -> None:
    """Log any error a handler did not handle, and tell the user something went wrong."""
    if update is None and isinstance(context.error, Conflict):
        if _CONFLICT_LINES.take("conflict"):
            logger.warning(
                "another instance is polling this bot (Telegram: %s); backing off until it "
                "stops, as in a deploy's overlap",
                context.error.message,
            )
        return
    outage = context.bot_data.outage
    if isinstance(update, Update) and update.effective_chat is not None and outage is not None:
        if context.error is not None and await outage.keep(
            context.application, update, context.error
        ):
            return
    logger.error("unhandled error while processing an update", exc_info=context.error)
    if isinstance(update, Update) and update.effective_chat is not None:
        try:
            await context.bot.send_message(update.effective_chat.id, texts.SOMETHING_WENT_WRONG)
        except TelegramError:  # the chat may be unreachable; the error is logged above
            logger.debug("could not report the error to the chat", exc_info=True)
