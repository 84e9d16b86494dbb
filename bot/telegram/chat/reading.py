"""Read a Telegram message into what the agent takes in: where it is, who sent what."""

from collections.abc import Sequence
from datetime import timedelta

from telegram import (
    CallbackQuery,
    Chat,
    Message,
    MessageOrigin,
    MessageOriginChannel,
    MessageOriginChat,
    MessageOriginHiddenUser,
    MessageOriginUser,
    PhotoSize,
    Update,
)
from telegram.constants import ChatType

from bot.agent.user_turn import Forwarded, IncomingMessage, Quote
from bot.conversations.blocks import VoiceKind
from bot.conversations.snapshot import ChatThread, MessageRef
from bot.media.attachments import MAX_IMAGE_BYTES, IncomingFile
from bot.media.media import JPEG
from bot.media.voice import IncomingVoice
from bot.telegram.format import visible_text
from memory.text import clean_text

# A file name longer than this is cut: it only labels the file.
MAX_FILE_NAME = 100
# Telegram sends photos as JPEG and gives them no name.
PHOTO_NAME = "photo.jpg"


def thread_of(message: Message | None) -> int | None:
    """Return the forum topic a message is in, or None (replies in plain groups have ids too)."""
    if message is None or not message.is_topic_message:
        return None
    return message.message_thread_id


def message_of(update: Update) -> Message:
    """Return the update's message; message handlers only see updates that have one."""
    if update.effective_message is None:
        raise ValueError(f"update {update.update_id} has no message")
    return update.effective_message


def chat_of(update: Update) -> Chat:
    """Return the update's chat; handlers that need one only see updates that have one."""
    if update.effective_chat is None:
        raise ValueError(f"update {update.update_id} has no chat")
    return update.effective_chat


def query_of(update: Update) -> CallbackQuery:
    """Return the update's button press; button handlers only see updates that have one."""
    if update.callback_query is None:
        raise ValueError(f"update {update.update_id} has no callback query")
    return update.callback_query


def place_of(update: Update) -> ChatThread:
    """Return the chat and forum topic an update belongs to."""
    return ChatThread(chat_of(update).id, thread_of(update.effective_message))


def origin_name(origin: MessageOrigin) -> str:
    """Name who originally sent a forwarded message."""
    if isinstance(origin, MessageOriginUser):
        return origin.sender_user.full_name
    if isinstance(origin, MessageOriginHiddenUser):
        return origin.sender_user_name
    if isinstance(origin, MessageOriginChat | MessageOriginChannel):
        chat = origin.sender_chat if isinstance(origin, MessageOriginChat) else origin.chat
        author = f" ({origin.author_signature})" if origin.author_signature else ""
        return f"the chat '{chat.title or chat.username or chat.id}'{author}"
    return "someone"


def message_key(message: Message) -> str:
    """Return a key of the message that never repeats: chat, message id and date."""
    return f"{message.chat_id}:{message.message_id}:{int(message.date.timestamp())}"


def _quote(message: Message, bot_id: int) -> Quote | None:
    """Return what the message replies to: the part the user selected, or the whole text."""
    replied = message.reply_to_message
    if replied is None:
        return None
    text = message.quote.text if message.quote else (replied.text or replied.caption or "")
    author = replied.from_user
    return Quote(
        text=text,
        author=author.full_name if author else None,
        from_assistant=author is not None and author.id == bot_id,
    )


def best_photo(sizes: Sequence[PhotoSize]) -> PhotoSize:
    """Return the largest size of a photo the API takes, else the smallest (to be refused)."""
    fitting = [size for size in sizes if (size.file_size or 0) <= MAX_IMAGE_BYTES]
    return max(fitting or [min(sizes, key=_area)], key=_area)


def _area(size: PhotoSize) -> int:
    """Return a photo size's pixels."""
    return size.width * size.height


def file_name(given: str) -> str:
    """Return a file's name fit for a label: one line, no format characters, not too long."""
    # Newlines would fake lines of the user's turn; bidi overrides and other format
    # characters (Unicode Cf) make a name read otherwise than it is.
    visible = visible_text(clean_text(given))
    name = " ".join(visible.split())
    return (name[: MAX_FILE_NAME - 1] + "…" if len(name) > MAX_FILE_NAME else name) or "file"


def files_of(message: Message) -> tuple[IncomingFile, ...]:
    """Return the photo or document a message carries, as the sender describes it."""
    if message.photo:
        photo = best_photo(message.photo)
        return (IncomingFile(photo.file_id, PHOTO_NAME, JPEG, photo.file_size),)
    document = message.document
    if document is None:
        return ()
    name = file_name(document.file_name or "")
    return (IncomingFile(document.file_id, name, document.mime_type, document.file_size),)


def _seconds(duration: int | timedelta) -> int:
    """Return a media duration in seconds, whichever way PTB gives it."""
    return int(duration.total_seconds()) if isinstance(duration, timedelta) else duration


def voice_of(message: Message) -> IncomingVoice | None:
    """Return the voice note or round video a message carries, as Telegram describes it."""
    if message.voice is not None:
        voice, kind = message.voice, VoiceKind.VOICE
        return IncomingVoice(
            kind, voice.file_id, _seconds(voice.duration), voice.file_size, voice.mime_type
        )
    if message.video_note is not None:
        note, kind = message.video_note, VoiceKind.VIDEO_NOTE
        return IncomingVoice(kind, note.file_id, _seconds(note.duration), note.file_size)
    return None


def incoming_of(update: Update, bot_id: int) -> IncomingMessage:
    """Read the update's message: its text or caption, files, sender, forward or quote, key."""
    message = message_of(update)
    user = update.effective_user
    group = chat_of(update).type != ChatType.PRIVATE
    origin = message.forward_origin
    return IncomingMessage(
        text=message.text or message.caption or "",
        sender_name=user.full_name if group and user else None,
        forwarded=Forwarded(origin_name(origin), origin.date) if origin else None,
        quote=_quote(message, bot_id),
        ref=MessageRef(message_key(message), update.update_id, user.id if user else None),
        files=files_of(message),
        voice=voice_of(message),
    )
