"""Files users send: the limits they must keep, checking them, and their bytes for requests.

A file is checked against what can be fetched and what the API accepts before it is
downloaded (when its size is known), and again from its bytes after. Its bytes are never
stored in the database: a turn keeps a FileRef, and the bytes come from a local cache or,
when the cache no longer has them, from the FileSource again, checked against the hash.
"""

import asyncio
import base64
import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from bot.conversations.blocks import FileKind
from bot.conversations.file_refs import FileRef, file_refs
from bot.conversations.snapshot import StoredTurn
from bot.media import media
from bot.media.file_cache import FileCache
from bot.media.notices import Refusal, RefusalKind

logger = logging.getLogger(__name__)

# The API measures its 5 MB image limit on the base64 text: at most this many bytes of file.
MAX_IMAGE_BASE64 = 5 * 1024 * 1024
MAX_IMAGE_BYTES = MAX_IMAGE_BASE64 // 4 * 3
MAX_IMAGE_SIDE = 8000
MAX_PDF_PAGES = 100  # for the whole request, so also for one PDF
# The API takes at most 20 images per request at full size (more must be at most 2000 px).
MAX_REQUEST_IMAGES = 20
# Requests may be 32 MB; the files' base64 may take this much, leaving room for the rest.
MAX_REQUEST_FILE_BASE64 = 30 * 1024 * 1024
# How long inspecting a file (above all counting a PDF's pages) may take before it is estimated.
INSPECT_SECONDS = 10.0
EXTENSIONS = {
    ".jpg": media.JPEG,
    ".jpeg": media.JPEG,
    ".png": media.PNG,
    ".gif": media.GIF,
    ".webp": media.WEBP,
    ".pdf": media.PDF,
}


class FileTooBig(Exception):
    """The source cannot fetch a file this large."""


class FileUnavailable(Exception):
    """The source cannot fetch the file, now or any more."""


class FileSource(Protocol):
    """Where files' bytes come from, by the id a FileRef keeps (a Telegram file id)."""

    max_bytes: int  # the largest file it can fetch

    async def fetch(self, file_id: str) -> bytes:
        """Return the file's bytes; raise FileTooBig or FileUnavailable."""
        ...


@dataclass(frozen=True)
class IncomingFile:
    """A file as a message names it, before it is downloaded: what its sender says it is."""

    file_id: str
    name: str
    media_type: str | None = None
    size: int | None = None


class FileRefused(Exception):
    """A file the bot does not read; its refusal says why, for the Telegram layer to word."""

    def __init__(self, refusal: Refusal):
        super().__init__(f"{refusal.name}: {refusal.kind}")
        self.refusal = refusal


def declared_type(file: IncomingFile) -> str | None:
    """Return the image or PDF type the file claims to be, by its type or else its name."""
    if file.media_type in (*media.IMAGE_TYPES, media.PDF):
        return file.media_type
    extension = "." + file.name.rsplit(".", 1)[-1].lower() if "." in file.name else ""
    return EXTENSIONS.get(extension)


def check_before_download(file: IncomingFile, max_fetch: int) -> None:
    """Refuse a file whose kind or known size rules it out, so it is never downloaded."""
    declared = declared_type(file)
    if declared is None:
        raise FileRefused(Refusal(RefusalKind.NOT_SUPPORTED, file.name))
    if file.size is not None and file.size > max_fetch:
        raise FileRefused(
            Refusal(RefusalKind.TOO_BIG_TO_DOWNLOAD, file.name, file.size, limit=max_fetch)
        )
    if declared in media.IMAGE_TYPES and file.size is not None and file.size > MAX_IMAGE_BYTES:
        raise FileRefused(image_too_big(file.name, file.size))


def image_too_big(name: str, size: int) -> Refusal:
    """Return the refusal of an image over the API's size limit."""
    return Refusal(RefusalKind.IMAGE_TOO_BIG, name, size, limit=MAX_IMAGE_BYTES)


def inspect(file: IncomingFile, data: bytes, estimate_pages: bool = False) -> FileRef:
    """Return the reference of a downloaded file after checking its bytes; or refuse it.

    estimate_pages counts a PDF's pages from its raw bytes only, high when unsure.
    """
    actual = media.sniff_type(data)
    digest = _sha256(data)
    if actual is None:
        raise FileRefused(Refusal(RefusalKind.NOT_READABLE_INSIDE, file.name, len(data)))
    if actual == media.PDF:
        pages = media.estimated_pdf_pages(data) if estimate_pages else media.pdf_pages(data)
        if pages > MAX_PDF_PAGES:
            raise FileRefused(
                Refusal(RefusalKind.TOO_MANY_PAGES, file.name, len(data), MAX_PDF_PAGES, pages)
            )
        return FileRef(
            FileKind.DOCUMENT, actual, file.name, file.file_id, digest, len(data), pages=pages
        )
    if len(data) > MAX_IMAGE_BYTES:
        raise FileRefused(image_too_big(file.name, len(data)))
    size = media.image_size(data, actual)
    width, height = size or (None, None)
    if size is not None and max(size) > MAX_IMAGE_SIDE:
        raise FileRefused(
            Refusal(
                RefusalKind.IMAGE_TOO_LARGE,
                file.name,
                len(data),
                MAX_IMAGE_SIDE,
                width=size[0],
                height=size[1],
            )
        )
    return FileRef(
        FileKind.IMAGE, actual, file.name, file.file_id, digest, len(data), width, height
    )


def base64_length(size: int) -> int:
    """Return the length of the base64 text of size bytes."""
    return (size + 2) // 3 * 4


class FileBudget:
    """What the files of one request may add up to; the newest files are counted first."""

    def __init__(self) -> None:
        self.images, self.pages, self.base64 = 0, 0, 0

    def fits(self, ref: FileRef) -> bool:
        """Tell whether the file would still fit the request's limits."""
        return (
            self.images + (ref.kind == FileKind.IMAGE) <= MAX_REQUEST_IMAGES
            and self.pages + _pages(ref) <= MAX_PDF_PAGES
            and self.base64 + base64_length(ref.size) <= MAX_REQUEST_FILE_BASE64
        )

    def count(self, ref: FileRef) -> None:
        """Count the file in."""
        self.images += ref.kind == FileKind.IMAGE
        self.pages += _pages(ref)
        self.base64 += base64_length(ref.size)

    def admits(self, ref: FileRef) -> bool:
        """Count the file in if it fits; tell whether it did."""
        if not self.fits(ref):
            return False
        self.count(ref)
        return True


async def _inspected(file: IncomingFile, data: bytes) -> FileRef:
    """Inspect a file off the event loop; past INSPECT_SECONDS, estimate a PDF's pages instead.

    Hashing and walking a PDF's page tree take a while for a big or crafted file. A thread
    cannot be stopped, but pypdf's limits end it; the user does not wait for it.
    """
    try:
        async with asyncio.timeout(INSPECT_SECONDS):
            return await asyncio.to_thread(inspect, file, data)
    except TimeoutError:
        logger.warning("counting the pages of %s took too long; estimating them", file.name)
        return await asyncio.to_thread(inspect, file, data, True)


def _base64(data: bytes) -> str:
    """Return the base64 text of a file's bytes."""
    return base64.b64encode(data).decode()


def _sha256(data: bytes) -> str:
    """Return the hex SHA-256 of a file's bytes."""
    return hashlib.sha256(data).hexdigest()


def _pages(ref: FileRef) -> int:
    """Return the PDF pages a file adds to a request (none for an image)."""
    return 0 if ref.kind == FileKind.IMAGE else ref.pages or 1


class Files:
    """Checks and fetches users' files, through a bounded local cache in front of the source."""

    def __init__(self, source: FileSource, cache: FileCache):
        self._source = source
        self._cache = cache

    @property
    def cache(self) -> FileCache:
        """Return the local cache of files' bytes."""
        return self._cache

    async def prepare(self, file: IncomingFile) -> FileRef:
        """Check, download and cache a file a user just sent; raise FileRefused if unread."""
        check_before_download(file, self._source.max_bytes)
        try:
            data = await self._source.fetch(file.file_id)
        except FileTooBig:
            limit = self._source.max_bytes
            raise FileRefused(
                Refusal(RefusalKind.TOO_BIG_TO_DOWNLOAD, file.name, limit=limit)
            ) from None
        except FileUnavailable as error:
            logger.warning("could not download a file: %s", error)
            raise FileRefused(Refusal(RefusalKind.DOWNLOAD_FAILED, file.name)) from None
        ref = await _inspected(file, data)
        await self._cache.put(ref.sha256, data)
        return ref

    async def payloads(self, turns: Sequence[StoredTurn]) -> dict[str, str | None]:
        """Return the base64 data of the files a request can carry, by hash; None if gone.

        The newest files come first; those past the request's limits are not loaded at all.
        """
        found: dict[str, str | None] = {}
        budget = FileBudget()
        for turn in reversed(turns):
            for ref in reversed(file_refs(turn.content)):
                if ref.sha256 in found or not budget.fits(ref):
                    continue
                data = await self._load(ref)
                found[ref.sha256] = None if data is None else await asyncio.to_thread(_base64, data)
                if data is not None:
                    budget.count(ref)
        return found

    async def _load(self, ref: FileRef) -> bytes | None:
        """Return a file's bytes from the cache, else from the source; None if neither has it."""
        data = await self._cache.get(ref.sha256)
        if data is not None:
            return data
        try:
            data = await self._source.fetch(ref.file_id)
        except (FileTooBig, FileUnavailable) as error:
            logger.warning("file %s is not available: %s", ref.name, error)
            return None
        if await asyncio.to_thread(_sha256, data) != ref.sha256:
            # Other bytes would change the request's cached prefix, and maybe the meaning.
            logger.warning("file %s came back with other content; leaving it out", ref.name)
            return None
        await self._cache.put(ref.sha256, data)
        return data
