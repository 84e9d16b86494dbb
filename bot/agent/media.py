"""Read what a file really is from its bytes: image type and size, or a PDF and its pages.

A file's name and declared type come from the sender and can be wrong; the API checks the
bytes, so the bot does too. Only headers are read; nothing is decoded.
"""

import re
import struct

JPEG, PNG, GIF, WEBP = "image/jpeg", "image/png", "image/gif", "image/webp"
PDF = "application/pdf"
IMAGE_TYPES = (JPEG, PNG, GIF, WEBP)

# JPEG start-of-frame markers carry the dimensions; C4, C8 and CC share the range but do not.
_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_JPEG_NO_LENGTH = frozenset({0x01, *range(0xD0, 0xD8)})
_PDF_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")
_PDF_COUNT = re.compile(rb"/Count\s+(\d+)")
HUGE_PAGE_COUNT = 10**7


def sniff_type(data: bytes) -> str | None:
    """Return the media type the bytes' signature names, if it is an image or PDF we read."""
    if data.startswith(b"\xff\xd8\xff"):
        return JPEG
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return PNG
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return GIF
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return WEBP
    # PDF readers accept the header within the first kilobyte; the API wants it first.
    if data.startswith(b"%PDF-"):
        return PDF
    return None


def image_size(data: bytes, media_type: str) -> tuple[int, int] | None:
    """Return (width, height) from an image's header, or None if the header is unreadable."""
    try:
        if media_type == PNG and data[12:16] == b"IHDR":
            return struct.unpack(">II", data[16:24])
        if media_type == GIF:
            return struct.unpack("<HH", data[6:10])
        if media_type == WEBP:
            return _webp_size(data)
        if media_type == JPEG:
            return _jpeg_size(data)
    except struct.error:
        return None
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    """Read a WebP's size from its lossy, lossless or extended header."""
    chunk = data[12:16]
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """Walk a JPEG's markers to its start-of-frame, which holds the size."""
    i = 2
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in _JPEG_NO_LENGTH:
            i += 2
            continue
        (length,) = struct.unpack(">H", data[i + 2 : i + 4])
        if marker in _JPEG_SOF:
            height, width = struct.unpack(">HH", data[i + 5 : i + 9])
            return width, height
        i += 2 + length
    return None


def pdf_pages(data: bytes) -> int:
    """Estimate a PDF's pages: its page objects, else its page tree's largest /Count; >= 1.

    Page objects inside compressed object streams are invisible here; the root's /Count,
    the largest, then stands in.
    """
    pages = len(_PDF_PAGE.findall(data))
    if pages:
        return pages
    # A count too long to be real (thousands of digits, which int() refuses) is taken as
    # huge, so the page limit refuses the file instead of the parser failing.
    counts = (int(n) if len(n) <= 7 else HUGE_PAGE_COUNT for n in _PDF_COUNT.findall(data))
    return max(counts, default=1) or 1
