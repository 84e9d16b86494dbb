"""A voice note or round video in a user's turn: a reference to fetch it again, and its note.

A turn's content holds it as a block of its own, for example {"type": "voice", "kind":
"voice", "media_type": "audio/ogg", "file_id": "AwAC...", "duration": 4, "size": 9120,
"transcribed": true, "sha256": "..."}. The model sees it as a note ("[voice note, 0:04]"):
the transcript, when there is one, is the turn's text.
"""

from dataclasses import dataclass

from bot.conversations.blocks import VoiceBlock, VoiceKind

# How a note names each kind, for the model and for transcripts.
KIND_NAMES = {VoiceKind.VOICE: "voice note", VoiceKind.VIDEO_NOTE: "round video"}


def clock_time(seconds: int) -> str:
    """Return a duration as a player shows it: 0:04, 12:30, 1:02:03."""
    hours, rest = divmod(max(seconds, 0), 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


@dataclass(frozen=True)
class VoiceRef:
    """A spoken message a user sent: what it is, where to fetch it, and whether it was read."""

    kind: VoiceKind
    media_type: str
    file_id: str  # the source's id to fetch it by (a Telegram file id)
    duration: int
    size: int | None = None
    sha256: str | None = None  # known once downloaded
    transcribed: bool = False

    def block(self) -> VoiceBlock:
        """Return the reference as a content block to store in a turn."""
        block = VoiceBlock(
            type="voice",
            kind=self.kind.value,
            media_type=self.media_type,
            file_id=self.file_id,
            duration=self.duration,
            size=self.size,
            transcribed=self.transcribed,
        )
        if self.sha256 is not None:
            block["sha256"] = self.sha256
        return block

    @property
    def label(self) -> str:
        """Name the note as the model and transcripts see it: "[voice note, 0:04]"."""
        unread = "" if self.transcribed else "; not transcribed"
        return f"[{KIND_NAMES[self.kind]}, {clock_time(self.duration)}{unread}]"


def voice_ref(block: VoiceBlock) -> VoiceRef:
    """Read a stored voice block back."""
    return VoiceRef(
        VoiceKind(block["kind"]),
        block["media_type"],
        block["file_id"],
        block["duration"],
        block.get("size"),
        block.get("sha256"),
        block.get("transcribed", False),
    )
