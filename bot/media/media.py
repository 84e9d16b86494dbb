"""Read what a file really is from its bytes: image type and size, or a PDF and its pages.

A file's name and declared type come from the sender and can be wrong; the API checks the
bytes, so the bot does too. Images: only headers are read, nothing is decoded. PDFs: the page
tree is walked with pypdf, within limits, because pages may sit in compressed object streams.
The work here is CPU-bound: callers run it off the event loop.
"""

import io
import re
import struct

JPEG, PNG, GIF, WEBP = "image/jpeg", "image/png", "image/gif", "image/webp"
PDF = "application/pdf"
IMAGE_TYPES = (JPEG, PNG, GIF, WEBP)

# JPEG start-of-frame markers carry the dimensions; C4, C8 and CC share the range but do not.
_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_JPEG_NO_LENGTH = frozenset({0x01, *range(0xD0, 0xD8)})
_JPEG_FILL = re.compile(rb"\xff+")
# Real JPEGs have a few dozen segments before the frame header; a file with more is crafted.
MAX_JPEG_SEGMENTS = 1000
_PDF_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")
_PDF_COUNT = re.compile(rb"/Count\s+(\d+)")
HUGE_PAGE_COUNT = 10**7
# What a PDF counts as when its page objects are hidden in object streams pypdf cannot read:
# the most pages the API takes, so limits and budgets never count it as less than it may be.
UNSURE_PAGES = 100
# pypdf's limits against hostile files, lower than its defaults where counting pages needs
# far less: a page tree of this many entries, streams inflated to this many bytes.
PDF_MAX_TREE_ENTRIES = 20_000
PDF_MAX_INFLATED_BYTES = 32 * 1024 * 1024


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
    for _ in range(MAX_JPEG_SEGMENTS):
        if i + 4 > len(data) or data[i] != 0xFF:
            return None
        # Any number of fill bytes may precede a marker: skipped in one step, not byte by byte.
        fill = _JPEG_FILL.match(data, i)
        i = fill.end() - 1 if fill else i
        if i + 4 > len(data):
            return None
        marker = data[i + 1]
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
    """Count a PDF's pages by walking its page tree; estimate high when it cannot be walked.

    pypdf (pure Python, maintained, hardened with limits against hostile files) reads the
    cross-reference streams and compressed object streams of PDF 1.5+ (pdflatex's default),
    where the page objects are invisible to a scan of the raw bytes; a file without object
    streams has every page object in plain sight, and is counted from its bytes.
    """
    if b"/ObjStm" not in data:
        # Without object streams every page object is plain text: counted from the bytes,
        # which is fast whatever the file, where pypdf's repair of a damaged one is not.
        return estimated_pdf_pages(data)
    # Imported here, on the first PDF that needs it: not every bot reads PDFs, so start-up
    # does not pay for loading pypdf.
    from pypdf import PdfReader, apply_configuration

    try:
        with apply_configuration(
            page_tree_maximum_entries=PDF_MAX_TREE_ENTRIES,
            page_tree_maximum_depth=64,
            zlib_maximum_output_length=PDF_MAX_INFLATED_BYTES,
            stream_decoding_work_maximum_length=2 * PDF_MAX_INFLATED_BYTES,
        ):
            reader = PdfReader(io.BytesIO(data), strict=False)
            pages = len(reader.pages)
    # A hostile or damaged file can fail anywhere in a parser; any failure means "unsure".
    except Exception:
        return estimated_pdf_pages(data)
    return max(pages, 1) if isinstance(pages, int) else estimated_pdf_pages(data)


def estimated_pdf_pages(data: bytes) -> int:
    """Estimate a PDF's pages from its raw bytes: page objects, else the largest /Count; >= 1.

    Page objects inside compressed object streams are invisible here: a file that has such
    streams counts as at least UNSURE_PAGES.
    """
    floor = UNSURE_PAGES if b"/ObjStm" in data else 1
    pages = len(_PDF_PAGE.findall(data))
    if pages:
        return max(pages, floor)
    # A count too long to be real (thousands of digits, which int() refuses) is taken as
    # huge, so the page limit refuses the file instead of the parser failing.
    counts = (int(n) if len(n) <= 7 else HUGE_PAGE_COUNT for n in _PDF_COUNT.findall(data))
    return max(max(counts, default=1), floor)
