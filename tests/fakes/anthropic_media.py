"""Image and document blocks in Messages requests: validation and token estimates.

Error wordings marked "observed" were copied from real API answers quoted in public bug
reports; the others are guesses in the API's style and say so.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Iterator
from typing import Any

from tests.fakes.media import IMAGE_TYPES, image_size, pdf_page_count, sniff_image_type

# The API measures the per-image limit on the base64 text, not the decoded bytes (observed:
# "image exceeds 5 MB maximum: 5272940 bytes > 5242880 bytes" for a 3.9 MB file).
MAX_IMAGE_BASE64_BYTES = 5 * 1024 * 1024
MAX_IMAGE_SIDE = 8000
MAX_PDF_PAGES = 100  # the limit for 200k-context models
# "32 MB" in Anthropic's docs; like the image limit it is taken as binary megabytes.
MAX_REQUEST_BYTES = 32 * 1024 * 1024
# Anthropic's vision docs: an image whose long edge exceeds 1568 px, or that would cost more
# than about 1,600 tokens, is scaled down first; then tokens = width * height / 750.
IMAGE_MAX_LONG_EDGE = 1568
IMAGE_MAX_TOKENS = 1600
# Anthropic's PDF docs: 1,500-3,000 text tokens per page, plus each page as an image. The fake
# cannot read the text, so it charges the low end of text plus a full-size page image.
PDF_TOKENS_PER_PAGE = 1500 + IMAGE_MAX_TOKENS


class MediaError(ValueError):
    """An image or document block the real API would refuse with invalid_request_error."""


def validate_media(messages: list[Any]) -> None:
    """Check every image and document block of the request's messages; raise MediaError."""
    pdf_pages = 0
    for where, role, block in iter_media(messages):
        if role != "user":
            # Guessed wording: the API refuses media in assistant turns.
            raise MediaError(f"{where}: {block['type']} blocks can only be in user messages")
        if block["type"] == "image":
            _validate_image(where, block)
        else:
            pdf_pages += _validate_document(where, block)
    if pdf_pages > MAX_PDF_PAGES:
        # Observed wording; the limit counts every PDF of the request together.
        raise MediaError(f"A maximum of {MAX_PDF_PAGES} PDF pages may be provided.")


def iter_media(messages: list[Any]) -> Iterator[tuple[str, Any, dict[str, Any]]]:
    """Yield (where, role, block) for each image/document block, tool results included."""
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("content"), list):
            continue
        for j, block in enumerate(message["content"]):
            if not isinstance(block, dict):
                continue
            where = f"messages.{i}.content.{j}"
            if block.get("type") in ("image", "document"):
                yield where, message.get("role"), block
            elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                for k, inner in enumerate(block["content"]):
                    if isinstance(inner, dict) and inner.get("type") in ("image", "document"):
                        yield f"{where}.tool_result.content.{k}", message.get("role"), inner


def _source(block: dict[str, Any]) -> dict[str, Any]:
    source = block.get("source")
    return source if isinstance(source, dict) else {}


def _decode(where: str, data: Any) -> bytes:
    if not isinstance(data, str):
        raise MediaError(f"{where}.data: Input should be a valid string")  # guessed wording
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise MediaError(f"{where}.data: invalid base64 data") from None  # guessed wording


def _validate_image(where: str, block: dict[str, Any]) -> None:
    source = _source(block)
    kind = source.get("type")
    if kind == "url":
        _check_url(f"{where}.image.source.url", source)
        return
    if kind == "file":
        if not isinstance(source.get("file_id"), str):
            raise MediaError(f"{where}.image.source.file.file_id: Field required")
        return
    if kind != "base64":
        raise MediaError(  # guessed wording, after the API's pydantic-style tags
            f"{where}.image.source: Input tag {kind!r} found using 'type' does not match any of "
            "the expected tags: 'base64', 'file', 'url'"
        )
    at = f"{where}.image.source.base64"
    media_type = source.get("media_type")
    if media_type not in IMAGE_TYPES:
        raise MediaError(  # observed wording
            f"{at}.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or "
            "'image/webp'"
        )
    data = source.get("data")
    if isinstance(data, str) and len(data) > MAX_IMAGE_BASE64_BYTES:
        raise MediaError(  # observed wording
            f"{at}: image exceeds 5 MB maximum: {len(data)} bytes > {MAX_IMAGE_BASE64_BYTES} bytes"
        )
    raw = _decode(at, data)
    actual = sniff_image_type(raw)
    if actual is None:
        raise MediaError(f"{at}.data: Could not process image")  # guessed wording
    if actual != media_type:
        raise MediaError(f"{at}.data: Image does not match the provided media type {media_type}")
    size = image_size(raw)
    if size is not None and max(size) > MAX_IMAGE_SIDE:
        raise MediaError(  # observed wording
            f"{at}.data: At least one of the image dimensions exceed max allowed size: "
            f"{MAX_IMAGE_SIDE} pixels"
        )


def _check_url(where: str, source: dict[str, Any]) -> None:
    url = source.get("url")
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        raise MediaError(f"{where}: Input should be a valid URL")  # guessed wording


def _validate_document(where: str, block: dict[str, Any]) -> int:
    """Check a document block; return how many PDF pages it adds to the request."""
    for key in ("title", "context"):
        if block.get(key) is not None and not isinstance(block[key], str):
            raise MediaError(f"{where}.document.{key}: Input should be a valid string")
    citations = block.get("citations")
    if citations is not None and not (
        isinstance(citations, dict) and isinstance(citations.get("enabled", False), bool)
    ):
        raise MediaError(f"{where}.document.citations.enabled: Input should be a valid boolean")
    source = _source(block)
    kind = source.get("type")
    if kind == "base64":
        at = f"{where}.pdf.source.base64"  # the API names base64 documents "pdf" (observed)
        if source.get("media_type") != "application/pdf":
            raise MediaError(f"{at}.media_type: Input should be 'application/pdf'")
        raw = _decode(at, source.get("data"))
        if not raw.startswith(b"%PDF-"):
            raise MediaError("Could not process PDF")  # observed wording
        pages = pdf_page_count(raw)
        if pages > MAX_PDF_PAGES:
            raise MediaError(f"{at}.data: A maximum of {MAX_PDF_PAGES} PDF pages may be provided.")
        return pages
    if kind == "text":
        if source.get("media_type") != "text/plain":
            raise MediaError(
                f"{where}.document.source.text.media_type: Input should be 'text/plain'"
            )
        if not isinstance(source.get("data"), str):
            raise MediaError(f"{where}.document.source.text.data: Input should be a valid string")
        return 0
    if kind == "url":
        _check_url(f"{where}.document.source.url", source)
        return 0
    if kind == "content":
        if not isinstance(source.get("content"), str | list):
            raise MediaError(f"{where}.document.source.content.content: Field required")
        return 0
    if kind == "file":
        if not isinstance(source.get("file_id"), str):
            raise MediaError(f"{where}.document.source.file.file_id: Field required")
        return 0
    raise MediaError(  # guessed wording, after the API's pydantic-style tags
        f"{where}.document.source: Input tag {kind!r} found using 'type' does not match any of "
        "the expected tags: 'base64', 'content', 'file', 'text', 'url'"
    )


def image_tokens(width: int, height: int) -> int:
    """Return the documented cost of an image: scaled down to the limits, then w*h/750."""
    scale = min(
        1.0,
        IMAGE_MAX_LONG_EDGE / max(width, height, 1),
        math.sqrt(IMAGE_MAX_TOKENS * 750 / max(width * height, 1)),
    )
    return max(1, math.ceil(int(width * scale) * int(height * scale) / 750))


def media_tokens(block: dict[str, Any], count_text: Any) -> int:
    """Estimate an image or document block's input tokens.

    Images: from the width and height in the image header, by image_tokens(); an image whose
    header the fake cannot read, or one given by URL or file id, costs IMAGE_MAX_TOKENS.
    PDFs: PDF_TOKENS_PER_PAGE per page counted in the file (one page if given by URL or file
    id). Text documents: their text, counted by count_text, plus title and context.
    """
    source = _source(block)
    kind = source.get("type")
    if block.get("type") == "image":
        if kind == "base64":
            try:
                size = image_size(base64.b64decode(source.get("data") or ""))
            except (binascii.Error, ValueError):
                size = None
            if size is not None:
                return image_tokens(*size)
        return IMAGE_MAX_TOKENS
    extra = sum(count_text(block[k]) for k in ("title", "context") if block.get(k))
    if kind == "base64":
        try:
            pages = pdf_page_count(base64.b64decode(source.get("data") or ""))
        except (binascii.Error, ValueError):
            pages = 1
        return extra + pages * PDF_TOKENS_PER_PAGE
    if kind == "text":
        return extra + count_text(source.get("data") or "")
    if kind == "content" and isinstance(source.get("content"), str):
        return extra + count_text(source["content"])
    if kind == "content":
        return extra + sum(
            media_tokens(b, count_text)
            if b.get("type") == "image"
            else count_text(b.get("text", ""))
            for b in source["content"]
            if isinstance(b, dict)
        )
    return extra + PDF_TOKENS_PER_PAGE


def without_media(value: Any) -> Any:
    """Return a copy of a JSON value with each image/document block's source left out."""
    if isinstance(value, list):
        return [without_media(item) for item in value]
    if isinstance(value, dict):
        if value.get("type") in ("image", "document"):
            return {k: v for k, v in value.items() if k != "source"}
        return {k: without_media(v) for k, v in value.items()}
    return value
