"""Files on the fake Bot API: what getFile answers, the download route, and media objects.

Telegram lets bots download files of at most 20 MB: getFile refuses bigger ones with
"Bad Request: file is too big". A file's path is served at /file/bot<token>/<file_path>.
"""

from __future__ import annotations

import itertools
import mimetypes
from dataclasses import dataclass
from typing import Any

from tests.fakes.media import image_size

MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024

# Folders Telegram's file paths use per kind of file, e.g. "photos/file_3.jpg".
_FOLDERS = {
    "photo": "photos", "document": "documents", "voice": "voice", "video": "videos",
    "audio": "music", "sticker": "stickers", "video_note": "video_notes",
    "animation": "animations",
}  # fmt: skip
# Leading bytes of real file ids per kind; the rest only needs to be unique here.
_ID_PREFIXES = {
    "photo": "AgACAgIAAxkBAAI", "document": "BQACAgIAAxkBAAI", "voice": "AwACAgIAAxkBAAI",
    "video": "BAACAgIAAxkBAAI", "audio": "CQACAgIAAxkBAAI", "sticker": "CAACAgIAAxkBAAI",
    "video_note": "DQACAgIAAxkBAAI", "animation": "CgACAgIAAxkBAAI",
}  # fmt: skip
# The box sizes Telegram scales photos into (longest side); the Bot API lists those smaller
# than the original, then the original itself (at most 2560).
PHOTO_BOXES = (90, 320, 800, 1280, 2560)
DEFAULT_PHOTO_SIZE = (1280, 960)

# What a media object carries besides the file fields, when a test gives nothing else.
MEDIA_DEFAULTS: dict[str, dict[str, Any]] = {
    "voice": {"duration": 2, "mime_type": "audio/ogg"},
    "audio": {"duration": 180, "mime_type": "audio/mpeg", "title": "Song"},
    "video": {"width": 1280, "height": 720, "duration": 10, "mime_type": "video/mp4"},
    "video_note": {"length": 384, "duration": 5},
    "animation": {"width": 320, "height": 240, "duration": 3, "mime_type": "video/mp4"},
    "sticker": {
        "type": "regular",
        "width": 512,
        "height": 512,
        "is_animated": False,
        "is_video": False,
        "emoji": "👍",
    },
}


@dataclass
class StoredFile:
    """A file the fake server can describe and serve."""

    file_id: str
    file_unique_id: str
    size: int
    file_path: str
    data: bytes | None  # None: only zeros of `size` bytes stand in for it

    def fields(self) -> dict[str, Any]:
        """Return the fields every Bot API file object carries."""
        return {
            "file_id": self.file_id,
            "file_unique_id": self.file_unique_id,
            "file_size": self.size,
        }

    def content(self) -> bytes:
        """Return the bytes a download serves."""
        return self.data if self.data is not None else bytes(self.size)


class FileStore:
    """The files a FakeTelegram knows, by id and by path."""

    def __init__(self) -> None:
        self._serial = itertools.count(1)
        self.by_id: dict[str, StoredFile] = {}
        self.by_path: dict[str, StoredFile] = {}

    def add(
        self,
        data: bytes | None,
        *,
        kind: str = "document",
        size: int | None = None,
        file_name: str | None = None,
        mime_type: str | None = None,
    ) -> StoredFile:
        """Register content (or only a size) and return the stored file."""
        serial = next(self._serial)
        extension = _extension(file_name, mime_type, kind)
        stored = StoredFile(
            file_id=f"{_ID_PREFIXES.get(kind, 'BQACAgIAAxkBAAI')}{serial:06d}",
            file_unique_id=f"AgAD{serial:06d}",
            size=len(data) if data is not None else size or 0,
            file_path=f"{_FOLDERS.get(kind, 'documents')}/file_{serial}{extension}",
            data=data,
        )
        self.by_id[stored.file_id] = stored
        self.by_path[stored.file_path] = stored
        return stored


def _extension(file_name: str | None, mime_type: str | None, kind: str) -> str:
    if file_name and "." in file_name:
        return "." + file_name.rsplit(".", 1)[1].lower()
    if kind == "photo":
        return ".jpg"
    if kind == "voice":
        return ".oga"
    if kind == "video_note":
        return ".mp4"  # round videos are MP4; Telegram sends no mime_type for them
    return (mimetypes.guess_extension(mime_type) if mime_type else None) or ""


def photo_sizes(data: bytes, width: int | None, height: int | None) -> list[tuple[int, int]]:
    """Return the (width, height) of each PhotoSize Telegram lists for a photo, smallest first."""
    if width is None or height is None:
        width, height = image_size(data) or DEFAULT_PHOTO_SIZE
    longest = max(width, height)
    scale = min(1.0, PHOTO_BOXES[-1] / longest)
    original = (max(1, round(width * scale)), max(1, round(height * scale)))
    sizes = [
        (max(1, round(width * box / longest)), max(1, round(height * box / longest)))
        for box in PHOTO_BOXES
        if box < max(original)
    ]
    return [*sizes, original]
