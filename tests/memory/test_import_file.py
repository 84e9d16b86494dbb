"""An import file is read within bounds, and every malformed one ends in one clear refusal."""

import io
import json
import random
import tracemalloc
import zipfile

import pytest

from memory.import_check import read_export
from memory.import_file import (
    CHUNK_BYTES,
    ImportBounds,
    ImportTooBig,
    ImportUnreadable,
    read_document,
)
from tests.import_files import EXPORT, MALFORMED, export_zip, zip_bomb

MB = 1024 * 1024
SMALL = ImportBounds(file_bytes=MB, json_bytes=MB, members=4, ratio=200)


def test_our_export_zipped_or_not_is_read_back():
    assert read_export(export_zip()) == EXPORT["memories"]
    assert read_export(json.dumps(EXPORT).encode()) == EXPORT["memories"]


def test_a_zip_bomb_is_refused_with_memory_bounded_by_the_cap():
    bomb = zip_bomb(40 * MB)
    assert len(bomb) < 100 * 1024
    tracemalloc.start()
    try:
        with pytest.raises(ImportTooBig):
            read_document(bomb, SMALL)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # What inflated is dropped at the cap: never the 40 MB the member declares.
    assert peak < SMALL.json_bytes + 4 * CHUNK_BYTES + 512 * 1024, peak


def test_the_ratio_alone_stops_a_member_that_inflates_a_thousandfold():
    bounds = ImportBounds(json_bytes=64 * MB, ratio=50)
    bomb = zip_bomb(8 * MB)
    with pytest.raises(ImportTooBig, match="inflates past"):
        read_document(bomb, bounds)
    # The same bytes, less compressible than the ratio, pass it (and then are not JSON).
    text = zip_bomb(MB, chunk=random.Random(1).randbytes(MB))
    with pytest.raises(ImportUnreadable, match="not JSON"):
        read_document(text, bounds)


def test_a_directory_that_lies_about_the_size_does_not_lift_the_cap():
    bomb = bytearray(zip_bomb(4 * MB))
    # Declare the member 100 bytes long in both headers: the bytes inflated still count.
    for header, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = bomb.index(header) + offset
        bomb[at : at + 4] = (100).to_bytes(4, "little")
    with pytest.raises((ImportTooBig, ImportUnreadable)):
        read_document(bytes(bomb), SMALL)


def test_too_many_members_and_too_big_files_are_refused():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for n in range(5):
            archive.writestr(f"part{n}.txt", "x")
        archive.writestr("memories.json", "{}")
    with pytest.raises(ImportUnreadable, match="too many members"):
        read_document(buffer.getvalue(), SMALL)
    with pytest.raises(ImportTooBig):
        read_document(b" " * (MB + 1), SMALL)
    with pytest.raises(ImportTooBig):
        read_document(zip_bomb(MB + 1, chunk=b'{"a": 1}'), SMALL)


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_each_malformed_file_is_unreadable_not_an_exception(name):
    with pytest.raises(ImportUnreadable):
        read_document(MALFORMED[name])
    assert read_export(MALFORMED[name]) is None


def test_any_corruption_of_an_export_zip_is_unreadable_or_read():
    data = export_zip()
    rng = random.Random(29)
    for _ in range(400):
        corrupt = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            corrupt[rng.randrange(len(corrupt))] = rng.randrange(256)
        cut = rng.choice([len(corrupt), rng.randrange(1, len(corrupt))])
        try:
            read_document(bytes(corrupt[:cut]))
        except (ImportUnreadable, ImportTooBig):
            pass
