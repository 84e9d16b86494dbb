"""Files' bytes on local disk, named by their SHA-256, within a bound on their total size.

The cache spares downloading a file again for every request that carries it. It can be
lost at any time (a host that wipes its disk, a full cache): files are then fetched again.
"""

import asyncio
import hashlib
import logging
import os
import re
import secrets
import time
from collections.abc import Iterable
from pathlib import Path

logger = logging.getLogger(__name__)

_NAME = re.compile(r"[0-9a-f]{64}")
# A file being written, before it is renamed to its hash (see _write).
_PARTIAL = re.compile(r"\.[0-9a-f]{64}\.[0-9a-f]{8}")
# A partial file older than this was left by a crash: no write takes this long.
PARTIAL_STALE_SECONDS = 600


def remove_stale_partials(folder: Path) -> tuple[int, int]:
    """Delete the partial files a crash left in folder; return how many, and their bytes."""
    if not Path(folder).is_dir():
        return 0, 0
    count = size = 0
    cutoff = time.time() - PARTIAL_STALE_SECONDS
    for entry in os.scandir(folder):
        if not _PARTIAL.fullmatch(entry.name):
            continue
        stat = entry.stat()
        if stat.st_mtime < cutoff:
            Path(entry.path).unlink(missing_ok=True)
            count, size = count + 1, size + stat.st_size
    return count, size


class FileCache:
    """Keep files by hash in a folder; past max_bytes, drop the least recently used."""

    def __init__(self, folder: Path, max_bytes: int):
        self.folder = Path(folder)
        self.max_bytes = max_bytes

    async def get(self, sha256: str) -> bytes | None:
        """Return the cached bytes with this hash, or None."""
        if not _NAME.fullmatch(sha256) or self.max_bytes <= 0:
            return None
        return await asyncio.to_thread(self._read, sha256)

    async def put(self, sha256: str, data: bytes) -> None:
        """Keep the bytes, then drop the least recently used files over the bound."""
        if not _NAME.fullmatch(sha256) or not 0 < len(data) <= self.max_bytes:
            return
        try:
            await asyncio.to_thread(self._write, sha256, data)
        except OSError as error:
            # A cache that cannot write only costs downloads; the turn goes on.
            logger.warning("could not cache a file in %s: %s", self.folder, error)

    async def discard(self, hashes: Iterable[str]) -> int:
        """Delete the cached files with these hashes; return how many were cached."""
        names = sorted({sha256 for sha256 in hashes if _NAME.fullmatch(sha256)})
        return await asyncio.to_thread(self._discard, names)

    def _discard(self, names: list[str]) -> int:
        """Delete cached files by name; return how many there were."""
        found = 0
        for name in names:
            try:
                (self.folder / name).unlink()
            except FileNotFoundError:
                continue
            found += 1
        return found

    def _read(self, sha256: str) -> bytes | None:
        """Read a cached file, mark it used, and drop it if its bytes no longer match."""
        path = self.folder / sha256
        try:
            data = path.read_bytes()
            os.utime(path)  # recently used: the last to be dropped
        except OSError:
            return None
        if hashlib.sha256(data).hexdigest() != sha256:
            logger.warning("cached file %s is damaged; fetching it again", sha256)
            path.unlink(missing_ok=True)
            return None
        return data

    def _write(self, sha256: str, data: bytes) -> None:
        """Write a file into the cache whole, then keep the cache within its bound."""
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = self.folder / sha256
        if path.exists():
            os.utime(path)
            return
        # Written aside and renamed, so a reader never sees half a file.
        partial = self.folder / f".{sha256}.{secrets.token_hex(4)}"
        # Readable by this user only, whatever the umask: users' files are private.
        with open(os.open(partial, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600), "wb") as out:
            out.write(data)
        partial.replace(path)
        self._evict(keep=path)

    def _evict(self, keep: Path) -> None:
        """Drop the least recently used files, never keep, until all fit within max_bytes.

        Partial files count toward the bound too; those a crash left are deleted first.
        """
        remove_stale_partials(self.folder)
        total, entries = keep.stat().st_size, []
        for entry in os.scandir(self.folder):
            if _PARTIAL.fullmatch(entry.name):
                total += entry.stat().st_size  # being written now: counted, not dropped
            elif _NAME.fullmatch(entry.name) and entry.path != str(keep):
                stat = entry.stat()
                entries.append((stat.st_mtime, stat.st_size, entry.path))
        total += sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            Path(path).unlink(missing_ok=True)
            total -= size

    def total_bytes(self) -> int:
        """Return how many bytes the cached files take now, partial ones included."""
        if not self.folder.is_dir():
            return 0
        return sum(
            e.stat().st_size
            for e in os.scandir(self.folder)
            if _NAME.fullmatch(e.name) or _PARTIAL.fullmatch(e.name)
        )
