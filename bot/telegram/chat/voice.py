"""Voice notes and round videos: transcribed, shown collapsed for checking, answered as typed.

A note that is not transcribed (transcription off, too long or big, a failure, no words)
gets one line saying why, and is stored by reference with that line as the answer, so
nothing is lost and the model is not called.
"""

import html
import logging
from dataclasses import replace

from telegram import Update

from bot.agent.user_turn import IncomingMessage
from bot.conversations.leases import LeaseLost, Taken
from bot.conversations.snapshot import DuplicateUpdate
from bot.conversations.voice_refs import KIND_NAMES, clock_time
from bot.media.voice import Transcript, VoiceNotRead, VoiceProblem
from bot.telegram.chat.delivery import taken_over
from bot.telegram.chat.handlers import answer_incoming
from bot.telegram.chat.reading import incoming_of, place_of
from bot.telegram.chat.sending import send_html
from bot.telegram.chat.typing_indicator import typing_indicator
from bot.telegram.context import BotContext, owner_id
from bot.telegram.format import visible_text
from bot.telegram.runtime.lifecycle import answer_left_over

logger = logging.getLogger(__name__)

MB = 1024 * 1024
# Shown above the collapsed transcript, so the user can check what was heard.
HEARD = "<i>Your {kind}, as I heard it:</i>\n<blockquote expandable>{text}</blockquote>"
OFF = (
    "I can't listen to {kind}s here: the bot's owner can turn them on by setting "
    "TRANSCRIPTION_BASE_URL, TRANSCRIPTION_API_KEY and TRANSCRIPTION_MODEL. Please type it "
    "for now."
)
TOO_LONG = "Your {kind} is {length} long; I can transcribe up to {limit}. Please {instead}."
TOO_BIG = "Your {kind} is {size}; I can transcribe up to {limit}. Please {instead}."
DOWNLOAD_FAILED = "I couldn't download your {kind} from Telegram just now; please send it again."
FAILED = "I couldn't transcribe your {kind} just now; please send it again, or type it."
EMPTY = "I couldn't make out any words in your {kind}; please send it again, or type it."
INSTEAD = "send a shorter one, or type it"


def heard_html(transcript: Transcript) -> str:
    """Return the message that shows a transcript, collapsed (Telegram's expandable quote)."""
    kind = KIND_NAMES[transcript.ref.kind]
    shown = visible_text(transcript.text)  # a server's answer: nothing in it reads otherwise
    return HEARD.format(kind=kind, text=html.escape(shown, quote=False))


def _megabytes(size: int) -> str:
    """Return a size in MB as a reply shows it."""
    return f"{size / MB:.1f} MB"


def unread_text(unread: VoiceNotRead) -> str:
    """Say in one line why a note was not transcribed, and what to do."""
    kind, ref, problem = KIND_NAMES[unread.ref.kind], unread.ref, unread.problem
    if problem == VoiceProblem.OFF:
        return OFF.format(kind=kind)
    if problem == VoiceProblem.TOO_LONG:
        length, limit = clock_time(ref.duration), clock_time(unread.limit)
        return TOO_LONG.format(kind=kind, length=length, limit=limit, instead=INSTEAD)
    if problem == VoiceProblem.TOO_BIG:
        size = _megabytes(ref.size) if ref.size is not None else "too big"
        limit = f"{unread.limit / MB:.0f} MB"
        return TOO_BIG.format(kind=kind, size=size, limit=limit, instead=INSTEAD)
    if problem == VoiceProblem.DOWNLOAD_FAILED:
        return DOWNLOAD_FAILED.format(kind=kind)
    return (FAILED if problem == VoiceProblem.TRANSCRIPTION_FAILED else EMPTY).format(kind=kind)


async def _seen_before(update: Update, context: BotContext, message: IncomingMessage) -> bool:
    """Tell whether the note's turn was stored before (a redelivery); answer it if it waits."""
    key = message.ref.message_key
    if key is None or not await context.services.conversations.message_seen(key):
        return False
    outage = context.bot_data.outage
    if outage is not None and update.update_id in outage.replaying:
        # Stored just before the database went away: answered now, if it still waits.
        await answer_left_over(context.application, place_of(update).chat_id, Taken())
    else:
        logger.info("update %s was already handled; not transcribing again", update.update_id)
    return True


async def _keep_unread(
    update: Update, context: BotContext, message: IncomingMessage, unread: VoiceNotRead
) -> None:
    """Store the note by reference with its one-line answer, then send that line."""
    place, reply = place_of(update), unread_text(unread)
    try:
        await context.services.chat.keep_unread_voice(
            place, owner_id(update), message, unread, reply
        )
    except DuplicateUpdate:
        logger.info("update %s was already handled; not answering twice", update.update_id)
        return
    except LeaseLost:
        taken_over(place.chat_id)
        return
    await send_html(context.bot, place.chat_id, html.escape(reply), thread_id=place.thread_id)


async def voice_message(update: Update, context: BotContext) -> None:
    """Transcribe a voice note or round video, show the transcript, and answer it as typed."""
    message = incoming_of(update, context.bot.id)
    if message.voice is None or await _seen_before(update, context, message):
        return  # the filter passes only notes; a redelivered one is not transcribed again
    place = place_of(update)
    try:
        async with typing_indicator(context.bot, place):
            transcript = await context.services.voice.transcribe(message.voice)
    except VoiceNotRead as unread:
        await _keep_unread(update, context, message, unread)
        return
    await send_html(context.bot, place.chat_id, heard_html(transcript), thread_id=place.thread_id)
    await answer_incoming(update, context, replace(message, voice=None, transcript=transcript))
