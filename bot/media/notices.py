"""What the agent tells the user about their files, as values: the Telegram layer words them.

A file the bot does not take (Refusal), files it took but had to leave out of a request
(FilesLeftOut, FilesOverBudget), and a conversation too long for the model even without
them (ConversationTooLong). The agent decides; bot/telegram/chat/file_texts.py says it.
"""

from dataclasses import dataclass
from enum import StrEnum


class RefusalKind(StrEnum):
    """Why a file is not taken."""

    NOT_SUPPORTED = "not an image or PDF by its type or name"
    TOO_BIG_TO_DOWNLOAD = "over what Telegram lets the bot download"
    DOWNLOAD_FAILED = "the download failed"
    NOT_READABLE_INSIDE = "its bytes are not an image or PDF"
    IMAGE_TOO_BIG = "an image over the API's size limit"
    IMAGE_TOO_LARGE = "an image over the API's pixels a side"
    TOO_MANY_PAGES = "a PDF over the API's pages"


@dataclass(frozen=True)
class Refusal:
    """A file the bot does not take, why, and the figures that say it.

    size is the file's bytes when known; limit is the bound it passed (bytes, pixels a
    side or pages, by kind); pages, width and height are what the file has.
    """

    kind: RefusalKind
    name: str
    size: int | None = None
    limit: int = 0
    pages: int = 0
    width: int = 0
    height: int = 0


class LeftOutWhy(StrEnum):
    """Why files the bot took were left out of the conversation."""

    UNREADABLE = "the model could not read them"
    TOO_LONG = "they made the prompt too long"


@dataclass(frozen=True)
class LeftOutFile:
    """A file left out: its name, and its place among the files sent when others share it."""

    name: str
    place: int | None = None  # 1-based, among the files of the user's newest messages
    sent: int = 0  # how many files those messages had


@dataclass(frozen=True)
class FilesLeftOut:
    """Files replaced by a note in the conversation, with the API's reason."""

    why: LeftOutWhy
    files: tuple[LeftOutFile, ...]
    reason: str


@dataclass(frozen=True)
class ConversationTooLong:
    """The conversation alone is over the model's context window."""

    reason: str


@dataclass(frozen=True)
class FilesOverBudget:
    """Of the files sent together, only the newest fit one request."""

    left_out: int
    total: int


FileNotice = Refusal | FilesLeftOut | ConversationTooLong | FilesOverBudget
