"""Voice notes and round videos: the limits they must keep, and their transcripts.

A note is checked against VOICE_MAX_SECONDS and VOICE_MAX_MB by what Telegram says of it
before it is downloaded, and by its bytes after. Its bytes go to the local file cache by
hash, like photos and PDFs, and its turn keeps a VoiceRef (the file id and the hash). It is
transcribed once, before its turn is stored: the transcript is the turn's text, so neither a
follow-up nor a restart transcribes it again.

A transcript is untrusted (a server's answer), so it is bounded before the chat or the model
sees it: by what the note's length can hold, and absolutely; past that it is cut, marked.
"""

import hashlib
import logging
from dataclasses import dataclass, replace
from enum import StrEnum

from bot.conversations.blocks import VoiceKind
from bot.conversations.voice_refs import KIND_NAMES, VoiceRef, clock_time
from bot.media.attachments import FileSource, FileTooBig, FileUnavailable
from bot.media.file_cache import FileCache
from bot.media.transcription import Transcriber, TranscriptionFailed

logger = logging.getLogger(__name__)

# What each kind is sent to the transcription API as: its name gives the format.
UPLOAD_NAMES = {VoiceKind.VOICE: "voice.ogg", VoiceKind.VIDEO_NOTE: "video_note.mp4"}
# Telegram's voice notes are OGG/Opus; round videos are MP4 and come without a type.
DEFAULT_TYPES = {VoiceKind.VOICE: "audio/ogg", VoiceKind.VIDEO_NOTE: "video/mp4"}
# Fast speech is about 17 characters a second; twice that, plus a floor for very short notes
# (Telegram rounds durations down, to 0 for a blink), is more than any real note says.
TRANSCRIPT_CHARS_PER_SECOND = 35
TRANSCRIPT_MIN_CHARS = 300
# Whatever the length: about 2,000 tokens for the model and two messages' worth in the chat.
TRANSCRIPT_MAX_CHARS = 6_000
# A cut never ends mid-word when a space is this close to the bound.
_WORD_SLACK = 40
CUT_MARK = "… [transcript cut: longer than a {length} note can say]"


class VoiceProblem(StrEnum):
    """Why a note was not transcribed."""

    OFF = "transcription is not set up"
    TOO_LONG = "longer than VOICE_MAX_SECONDS"
    TOO_BIG = "bigger than VOICE_MAX_MB"
    DOWNLOAD_FAILED = "the download failed"
    TRANSCRIPTION_FAILED = "the transcription failed"
    EMPTY = "no words were heard"


@dataclass(frozen=True)
class IncomingVoice:
    """A voice note or round video as a message names it, before it is downloaded."""

    kind: VoiceKind
    file_id: str
    duration: int
    size: int | None = None
    media_type: str | None = None

    def ref(self) -> VoiceRef:
        """Return its reference, before download: no hash, not transcribed."""
        media_type = self.media_type or DEFAULT_TYPES[self.kind]
        return VoiceRef(self.kind, media_type, self.file_id, self.duration, self.size)


class VoiceNotRead(Exception):
    """A note that was not transcribed: why, its reference (kept), and the limit it passed."""

    def __init__(self, problem: VoiceProblem, ref: VoiceRef, limit: int = 0):
        super().__init__(f"{KIND_NAMES[ref.kind]}: {problem}")
        self.problem, self.ref, self.limit = problem, ref, limit


@dataclass(frozen=True)
class Transcript:
    """What a note said, and its reference (downloaded and transcribed)."""

    ref: VoiceRef
    text: str


def transcript_limit(duration: int) -> int:
    """Return the most characters a transcript of a note this many seconds long may keep."""
    by_length = TRANSCRIPT_MIN_CHARS + TRANSCRIPT_CHARS_PER_SECOND * max(duration, 0)
    return min(by_length, TRANSCRIPT_MAX_CHARS)


def bounded(text: str, duration: int) -> str:
    """Return the transcript within its note's limit: whole, or cut at a word and marked."""
    limit = transcript_limit(duration)
    if len(text) <= limit:
        return text
    kept = text[:limit]
    space = kept.rfind(" ", limit - _WORD_SLACK)
    logger.warning("a transcript of %d characters for a %d s note was cut", len(text), duration)
    return kept[: space if space > 0 else limit].rstrip() + CUT_MARK.format(
        length=clock_time(duration)
    )


class VoiceNotes:
    """Checks, downloads, caches and transcribes notes; without a transcriber, refuses them."""

    def __init__(
        self,
        source: FileSource,
        cache: FileCache,
        transcriber: Transcriber | None,
        max_seconds: int,
        max_bytes: int,
    ):
        self._source = source
        self._cache = cache
        self._transcriber = transcriber
        self.max_seconds = max_seconds
        self.max_bytes = min(max_bytes, source.max_bytes)

    async def transcribe(self, voice: IncomingVoice) -> Transcript:
        """Return what the note says; raise VoiceNotRead with why it was not transcribed."""
        ref = voice.ref()
        if self._transcriber is None:
            raise VoiceNotRead(VoiceProblem.OFF, ref)
        if voice.duration > self.max_seconds:
            raise VoiceNotRead(VoiceProblem.TOO_LONG, ref, self.max_seconds)
        if voice.size is not None and voice.size > self.max_bytes:
            raise VoiceNotRead(VoiceProblem.TOO_BIG, ref, self.max_bytes)
        data = await self._download(ref)
        sha256 = hashlib.sha256(data).hexdigest()
        ref = replace(ref, sha256=sha256, size=len(data))
        if len(data) > self.max_bytes:  # Telegram did not say, or said less
            raise VoiceNotRead(VoiceProblem.TOO_BIG, ref, self.max_bytes)
        await self._cache.put(sha256, data)
        try:
            text = await self._transcriber.transcribe(data, UPLOAD_NAMES[ref.kind], ref.media_type)
        except TranscriptionFailed as error:
            logger.warning("could not transcribe a %s: %s", KIND_NAMES[ref.kind], error)
            raise VoiceNotRead(VoiceProblem.TRANSCRIPTION_FAILED, ref) from None
        if not text:
            raise VoiceNotRead(VoiceProblem.EMPTY, ref)
        return Transcript(replace(ref, transcribed=True), bounded(text, ref.duration))

    async def _download(self, ref: VoiceRef) -> bytes:
        """Fetch the note's bytes; raise VoiceNotRead when Telegram will not give them."""
        try:
            return await self._source.fetch(ref.file_id)
        except FileTooBig:
            raise VoiceNotRead(VoiceProblem.TOO_BIG, ref, self.max_bytes) from None
        except FileUnavailable as error:
            logger.warning("could not download a %s: %s", KIND_NAMES[ref.kind], error)
            raise VoiceNotRead(VoiceProblem.DOWNLOAD_FAILED, ref) from None

    async def close(self) -> None:
        """Close the transcriber's connections."""
        if self._transcriber is not None:
            await self._transcriber.close()
