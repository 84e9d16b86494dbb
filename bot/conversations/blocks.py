"""The content of a stored turn, as types: the API's own blocks, and references to files.

A turn stores what the Messages API takes back (text with its citations, tool calls, tool
results, and the web tools' server blocks: server_tool_use, web_search_tool_result,
web_fetch_tool_result), in the SDK's param types, plus FileBlock, a reference that request
assembly turns into the file's image or document block, and VoiceBlock, a voice note's
reference that it shows as a one-line note (the transcript is the turn's text). Code tells
them apart by their "type" key, which the types below make a checked tag.
"""

from enum import StrEnum
from typing import Literal, NotRequired, TypedDict

from anthropic.types import (
    ServerToolUseBlockParam,
    TextBlockParam,
    ToolResultBlockParam,
    ToolUseBlockParam,
    WebFetchToolResultBlockParam,
    WebSearchToolResultBlockParam,
)

Role = Literal["user", "assistant"]


class FileKind(StrEnum):
    """What a file is to the model: an image, or a document (a PDF). Stored as its value."""

    IMAGE = "image"
    DOCUMENT = "document"


class FileBlock(TypedDict):
    """A file reference as a turn's content stores it (file_refs shows one)."""

    type: Literal["file"]
    kind: str  # a FileKind's value
    media_type: str
    name: str
    file_id: str
    sha256: str
    size: int
    width: NotRequired[int]
    height: NotRequired[int]
    pages: NotRequired[int]


class VoiceKind(StrEnum):
    """What a spoken message came as: a voice note, or a round video. Stored as its value."""

    VOICE = "voice"
    VIDEO_NOTE = "video_note"


class VoiceBlock(TypedDict):
    """A voice note or round video as a turn stores it: a reference, never the audio.

    sha256 is there when it was downloaded; its transcript, if any, is in the turn's text.
    """

    type: Literal["voice"]
    kind: str  # a VoiceKind's value
    media_type: str
    file_id: str
    duration: int  # seconds, as Telegram gives it
    size: int | None
    transcribed: bool
    sha256: NotRequired[str]


# The blocks of the API's web tools, run on its side: stored as the API sent them.
WebBlock = ServerToolUseBlockParam | WebSearchToolResultBlockParam | WebFetchToolResultBlockParam
WEB_BLOCK_TYPES = frozenset({"server_tool_use", "web_search_tool_result", "web_fetch_tool_result"})
# One block of a stored turn.
Block = (
    TextBlockParam | ToolUseBlockParam | ToolResultBlockParam | FileBlock | VoiceBlock | WebBlock
)
# A stored turn's content: its blocks in order.
Content = list[Block]


def text_block(text: str) -> TextBlockParam:
    """Return a text block."""
    return {"type": "text", "text": text}
