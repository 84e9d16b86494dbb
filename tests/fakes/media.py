"""Read just enough of images and PDFs for the fakes, and make small valid samples for tests.

Both fakes need the same facts about media without decoding it: which image format some bytes
are, an image's width and height (from its header), and how many pages a PDF has. The images
are read by Pillow, the PDFs by this module's own search of page objects: never by the bot's
code (bot/media/media.py), so a mistake there cannot agree with the fakes by construction.
"""

from __future__ import annotations

import io
import re
import struct
import zlib

from PIL import Image

IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
_IMAGE_FORMATS = dict(zip(("JPEG", "PNG", "GIF", "WEBP"), IMAGE_TYPES, strict=True))
# Only headers are read, never pixels: a huge declared size is for the API's limit to refuse,
# not for Pillow's decompression-bomb guard.
Image.MAX_IMAGE_PIXELS = None
_PDF_PAGE_RE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")
_PDF_COUNT_RE = re.compile(rb"/Count\s+(\d+)")
_PDF_STREAM_RE = re.compile(rb"stream\r?\n(.*?)endstream", re.DOTALL)
_INFLATED_MAX = 16 * 1024 * 1024


def sniff_image_type(data: bytes) -> str | None:
    """Return the media type of an image Pillow can open, or None if it is none of the four."""
    facts = _open_image(data)
    return facts[0] if facts else None


def image_size(data: bytes) -> tuple[int, int] | None:
    """Return (width, height) as Pillow reads them from the header, or None if it cannot."""
    facts = _open_image(data)
    return facts[1] if facts else None


def _open_image(data: bytes) -> tuple[str, tuple[int, int]] | None:
    """Open the image with Pillow (headers only, no pixels decoded); None if it cannot."""
    try:
        with Image.open(io.BytesIO(data), formats=tuple(_IMAGE_FORMATS)) as image:
            return _IMAGE_FORMATS[image.format or ""], image.size
    except (OSError, SyntaxError, ValueError, EOFError, KeyError):
        return None


def pdf_page_count(data: bytes) -> int:
    """Count a PDF's pages by its page objects, else by its page tree's /Count; at least 1.

    Page objects may sit in compressed object streams (PDF 1.5+, pdflatex's default), so
    every Flate stream is inflated and searched too; this is the fake's own reading, not the
    bot's (which uses pypdf), so each checks the other.
    """
    parts = [data, *_inflated_streams(data)]
    pages = sum(len(_PDF_PAGE_RE.findall(part)) for part in parts)
    if pages:
        return pages
    counts = [int(n) for part in parts for n in _PDF_COUNT_RE.findall(part) if len(n) < 8]
    return max(counts, default=1) or 1


def _inflated_streams(data: bytes) -> list[bytes]:
    """Return the inflated bytes of the PDF's streams that are zlib data; skip the others."""
    inflated = []
    for match in _PDF_STREAM_RE.finditer(data):
        try:
            inflated.append(zlib.decompressobj().decompress(match.group(1), _INFLATED_MAX))
        except zlib.error:
            continue
    return inflated


# --- samples for tests ---------------------------------------------------------------------


def sample_png(width: int = 64, height: int = 48, *, pad_to: int = 0) -> bytes:
    """Return a valid grey PNG of the given size, padded with a private chunk to pad_to bytes."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    rows = (b"\x00" + b"\x80" * width) * height  # filter byte + one grey byte per pixel
    head = b"\x89PNG\r\n\x1a\n" + chunk(
        b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    )
    body = chunk(b"IDAT", zlib.compress(rows, 9))
    end = chunk(b"IEND", b"")
    missing = pad_to - len(head) - len(body) - len(end) - 12
    # A lowercase first letter marks the chunk ancillary: decoders skip it.
    padding = chunk(b"faKe", b"\x00" * missing) if missing > 0 else b""
    return head + body + padding + end


def sample_jpeg(width: int = 64, height: int = 48, *, pad_to: int = 0) -> bytes:
    """Return a JPEG header with the given dimensions (enough to sniff, not to decode)."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    data = b"\xff\xd8" + app0 + sof0
    return data + b"\x00" * max(0, pad_to - len(data) - 2) + b"\xff\xd9"


def sample_webp(width: int = 64, height: int = 48) -> bytes:
    """Return a valid lossy WebP of the given size, encoded by Pillow."""
    out = io.BytesIO()
    Image.new("RGB", (width, height), (128, 128, 128)).save(out, "WEBP")
    return out.getvalue()


def sample_pdf(pages: int = 1, text: str = "Hello") -> bytes:
    """Return a small well-formed PDF with the given number of pages, each showing text."""
    kids = " ".join(f"{3 + 2 * n} 0 R" for n in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
    ]
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    for n in range(pages):
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * n} 0 R "
            ">>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)
