"""A user's message as the agent takes it in, and how it is written into the user's turn."""

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, tzinfo

from bot.conversations.blocks import Content, text_block
from bot.conversations.file_refs import FileRef
from bot.conversations.said_by import SaidBy
from bot.conversations.snapshot import MessageRef, StoredTurn
from bot.conversations.voice_refs import KIND_NAMES, VoiceRef
from bot.media.attachments import IncomingFile
from bot.media.voice import IncomingVoice, Transcript
from memory.text import clean_text

# A quoted message is context, not the point: a long one is cut to this many characters.
QUOTE_CLIP = 500
# What marks a transcript for the model: speech recognition mishears times and names.
TRANSCRIBED_NOTE = "[Transcribed from the user's {kind}; times and names may be misheard:]"


@dataclass(frozen=True)
class Forwarded:
    """Where a forwarded message came from: its author as a name, and when they sent it."""

    origin: str
    sent_at: datetime | None = None


@dataclass(frozen=True)
class Quote:
    """The message a user replied to (or the part of it they selected), and who wrote it."""

    text: str
    author: str | None = None
    from_assistant: bool = False


@dataclass(frozen=True)
class IncomingMessage:
    """What a user sent: its text (or caption), files, sender (in groups), forward or quote.

    A voice note or round video comes as voice; once transcribed, as transcript.
    """

    text: str
    sender_name: str | None = None
    forwarded: Forwarded | None = None
    quote: Quote | None = None
    ref: MessageRef = field(default_factory=MessageRef)
    files: tuple[IncomingFile, ...] = ()
    voice: IncomingVoice | None = None
    transcript: Transcript | None = None


def time_context(now: datetime, sender_name: str | None = None) -> str:
    """Return the bracketed line that gives the model the time (and speaker) of a message."""
    stamp = now.strftime("%A, %d %B %Y, %H:%M %Z").strip().rstrip(",")
    speaker = f"; from {clean_text(sender_name)}" if sender_name else ""
    return f"[{stamp}{speaker}]"


def _quoted(text: str) -> str:
    """Mark every line of text as quoted, so none of it can pass for a line of ours."""
    return "\n".join(f"> {line}" for line in text.split("\n"))


def _clip(text: str, limit: int) -> str:
    """Shorten text to limit characters, marking the cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _forward_note(forwarded: Forwarded, zone: tzinfo | None) -> str:
    """Say that the text below is someone else's words, shared by the user."""
    sent = forwarded.sent_at
    when = f", sent {sent.astimezone(zone):%d %B %Y, %H:%M}" if sent else ""
    origin = clean_text(forwarded.origin)
    return f"[Forwarded by the user: originally from {origin}{when}. Not the user's own words.]"


def _quote_text(quote: Quote) -> str:
    """Return the replied-to text as the turn quotes it: cleaned, clipped."""
    return _clip(clean_text(quote.text), QUOTE_CLIP)


def _quote_lines(quote: Quote) -> str:
    """Give the replied-to text as a quote, with whose it was."""
    if quote.from_assistant:
        whose = "your earlier message"
    else:
        whose = f"a message from {clean_text(quote.author)}" if quote.author else "a message"
    return f"[In reply to {whose}:]\n{_quoted(_quote_text(quote))}"


def _has_quote(message: IncomingMessage) -> bool:
    """Tell whether the turn quotes the message it replies to."""
    return message.quote is not None and bool(message.quote.text.strip())


def said_by(message: IncomingMessage) -> SaidBy:
    """Return whose words the message's turn holds, in step with user_turn_content."""
    quote = message.quote if _has_quote(message) else None
    return SaidBy(
        speaker=clean_text(message.sender_name) if message.sender_name else None,
        forwarded_from=clean_text(message.forwarded.origin) if message.forwarded else None,
        reply_to=None if quote is None else clean_text(quote.author or ""),
        reply_to_bot=quote is not None and quote.from_assistant,
        quote_lines=0 if quote is None else _quote_text(quote).count("\n") + 1,
    )


def _spoken(message: IncomingMessage) -> tuple[str, list[str]]:
    """Return the message's words (a transcript first, then any caption) and their mark."""
    text = clean_text(message.text)
    if message.transcript is None:
        return text, []
    kind = KIND_NAMES[message.transcript.ref.kind]
    spoken = clean_text(message.transcript.text)
    return "\n".join(t for t in (spoken, text) if t), [TRANSCRIBED_NOTE.format(kind=kind)]


def user_turn_content(
    message: IncomingMessage,
    now: datetime,
    files: Sequence[FileRef] = (),
    voice: VoiceRef | None = None,
) -> Content:
    """Return the content blocks of a user's message: its files or voice note, then its text.

    The text block starts with the time context. Files come first, as Anthropic advises
    for images and documents, and are stored as references, never as their bytes; so is
    a voice note (voice, or the transcript's), whose transcript is marked as one.
    """
    lines = [time_context(now, message.sender_name)]
    if message.quote is not None and _has_quote(message):
        lines.append(_quote_lines(message.quote))
    text, mark = _spoken(message)
    if message.forwarded is not None:
        lines.append(_forward_note(message.forwarded, now.tzinfo))
        lines += [*mark, _quoted(text)] if text else []
    elif text or not files:
        lines += [*mark, text]
    voice = message.transcript.ref if message.transcript is not None else voice
    refs: Content = [*(ref.block() for ref in files), *([voice.block()] if voice else [])]
    return [*refs, text_block("\n".join(lines))]


def message_turn(turns: list[StoredTurn]) -> StoredTurn | None:
    """Return the stored turn of the newest user's message (not tool results, not a note)."""
    for turn in reversed(turns):
        # Skip tool results and unstored notes: they are the bot's, not a member's, words.
        if (
            turn.role == "user"
            and turn.id
            and all(b["type"] != "tool_result" for b in turn.content)
        ):
            return turn
    return None


def speaker_of(turns: list[StoredTurn]) -> str | None:
    """Return the group member whose message the newest user's message is; None if private."""
    turn = message_turn(turns)
    return turn.said_by.speaker if turn is not None and turn.said_by else None
