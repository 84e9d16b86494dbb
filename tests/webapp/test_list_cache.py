"""The kept lists: one per owner, as of a stamp, the least recently asked dropped first."""

import gzip
import json
from datetime import UTC, datetime

from bot.webapp.list_cache import ListCache

THEN = (datetime(2026, 11, 29, 1, 0, tzinfo=UTC), True)
LATER = (datetime(2026, 11, 29, 1, 5, tzinfo=UTC), True)


def test_a_list_is_given_back_only_as_of_its_stamp_and_for_its_owner():
    cache = ListCache()
    body = json.dumps({"memories": [{"id": "Abcd1234"}]}).encode()
    kept = cache.put(1, THEN, body)
    assert gzip.decompress(kept.gzipped) == body and kept.body == body
    assert cache.get(1, THEN) is kept
    assert cache.get(1, LATER) is None  # a change since: read again
    assert cache.get(1, (THEN[0], False)) is None  # the switch flipped
    assert cache.get(1, None) is None  # no stored block: nothing to vouch for it
    assert cache.get(2, THEN) is None
    assert cache.put(1, LATER, b"{}").etag != kept.etag


def test_a_list_read_without_a_stamp_is_not_kept_and_drops_the_old_one():
    cache = ListCache()
    cache.put(1, THEN, b"[1]")
    cache.put(1, None, b"[2]")
    assert cache.get(1, THEN) is None


def test_past_its_size_the_least_recently_asked_owner_is_dropped():
    cache = ListCache(size=2)
    cache.put(1, THEN, b"[1]")
    cache.put(2, THEN, b"[2]")
    assert cache.get(1, THEN) is not None  # 1 asked last: 2 is the oldest now
    cache.put(3, THEN, b"[3]")
    assert cache.get(2, THEN) is None
    assert cache.get(1, THEN) is not None and cache.get(3, THEN) is not None
