"""The list last answered to each owner, encoded once and kept while their memories stay.

A list is kept with its stamp (memory.list_rows: when the owner's stored block was rendered,
and their switch); any change to their memories, in any process, deletes that block, so a
request whose fresh stamp matches gets the same bytes without reading or encoding 1,000 rows.
"""

import gzip
import hashlib
from collections import OrderedDict
from dataclasses import dataclass

from memory.list_rows import ListStamp

# Owners whose list is kept; the least recently asked is dropped past this (a list of 1,000
# memories is ~250 KB and ~25 KB gzipped).
MAX_OWNERS = 32
# Encoded once per change and sent many times: a slower, smaller level pays.
GZIP_LEVEL = 6


@dataclass(frozen=True)
class EncodedList:
    """A list's JSON, plain and gzipped, and the ETag naming it."""

    body: bytes
    gzipped: bytes
    etag: str


def encode(body: bytes) -> EncodedList:
    """Return the list's bytes ready to send, and an ETag from their digest."""
    digest = hashlib.blake2b(body, digest_size=12).hexdigest()
    return EncodedList(body, gzip.compress(body, GZIP_LEVEL, mtime=0), f'"{digest}"')


class ListCache:
    """Each owner's last list and its stamp, the least recently asked dropped first."""

    def __init__(self, size: int = MAX_OWNERS):
        self._size = size
        self._lists: OrderedDict[int, tuple[ListStamp, EncodedList]] = OrderedDict()

    def get(self, owner_id: int, stamp: ListStamp | None) -> EncodedList | None:
        """Return the owner's kept list if it is as of stamp, else None."""
        kept = self._lists.get(owner_id)
        if stamp is None or kept is None or kept[0] != stamp:
            return None
        self._lists.move_to_end(owner_id)
        return kept[1]

    def put(self, owner_id: int, stamp: ListStamp | None, body: bytes) -> EncodedList:
        """Encode a list just read; keep it if its stamp says what it is as of."""
        encoded = encode(body)
        self._lists.pop(owner_id, None)
        if stamp is not None:
            self._lists[owner_id] = (stamp, encoded)
            while len(self._lists) > self._size:
                self._lists.popitem(last=False)
        return encoded
