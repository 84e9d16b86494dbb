"""A file in a user's turn: a reference to fetch it again, never the file itself.

A turn's content holds the reference as a block of its own type, for example
{"type": "file", "kind": "image", "media_type": "image/jpeg", "name": "photo.jpg",
"file_id": "AgAC...", "sha256": "...", "size": 183204, "width": 1280, "height": 960};
a PDF has "kind": "document" and "pages" instead of the dimensions. Request assembly turns
it into the API's image or document block from the file's bytes.
"""

import math
from collections.abc import Iterable
from dataclasses import dataclass

from bot.conversations.blocks import Block, FileBlock, FileKind

# Anthropic's vision docs: an image is scaled down until its long edge is at most 1568 px
# and it costs at most about 1,600 tokens; then it costs width * height / 750 tokens.
IMAGE_MAX_LONG_EDGE = 1568
IMAGE_MAX_TOKENS = 1600
# Anthropic's PDF docs: each page is read as text (1,500-3,000 tokens) and as an image.
# The low end of the text plus a full page image; an estimate, not the API's count.
PDF_PAGE_TOKENS = 1500 + IMAGE_MAX_TOKENS


@dataclass(frozen=True)
class FileRef:
    """A file a user sent: what it is, where to fetch it, and the hash its bytes must have."""

    kind: FileKind
    media_type: str
    name: str
    file_id: str  # the source's id to fetch it by (a Telegram file id)
    sha256: str
    size: int
    width: int | None = None
    height: int | None = None
    pages: int | None = None

    def block(self) -> FileBlock:
        """Return the reference as a content block to store in a turn."""
        block = FileBlock(
            type="file",
            kind=self.kind.value,
            media_type=self.media_type,
            name=self.name,
            file_id=self.file_id,
            sha256=self.sha256,
            size=self.size,
        )
        if self.width is not None and self.height is not None:
            block["width"], block["height"] = self.width, self.height
        if self.pages is not None:
            block["pages"] = self.pages
        return block

    @property
    def label(self) -> str:
        """Name the file as a transcript shows it: "[image: receipt.jpg]"."""
        return f"[{self.kind}: {self.name}]"

    @property
    def tokens(self) -> int:
        """Estimate the input tokens the file costs the model, by Anthropic's rules."""
        if self.kind == FileKind.DOCUMENT:
            return (self.pages or 1) * PDF_PAGE_TOKENS
        if self.width is None or self.height is None:
            return IMAGE_MAX_TOKENS
        return image_tokens(self.width, self.height)


def image_tokens(width: int, height: int) -> int:
    """Return an image's documented cost: scaled down to the limits, then w * h / 750."""
    scale = min(
        1.0,
        IMAGE_MAX_LONG_EDGE / max(width, height, 1),
        math.sqrt(IMAGE_MAX_TOKENS * 750 / max(width * height, 1)),
    )
    return max(1, math.ceil(int(width * scale) * int(height * scale) / 750))


def file_ref(block: FileBlock) -> FileRef:
    """Read a stored file reference block back."""
    return FileRef(
        FileKind(block["kind"]),
        block["media_type"],
        block["name"],
        block["file_id"],
        block["sha256"],
        block["size"],
        block.get("width"),
        block.get("height"),
        block.get("pages"),
    )


def file_refs(content: Iterable[Block]) -> list[FileRef]:
    """Return the file references in a turn's content, in order."""
    return [file_ref(block) for block in content if block["type"] == "file"]
