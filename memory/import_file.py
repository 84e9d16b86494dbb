"""A file sent to import, read within bounds: a zip inflated in chunks, JSON parsed bounded.

Every way the file can be malformed (a bad or truncated zip, an encrypted member, a method
other than stored or deflated, a corrupt deflate stream, JSON too deep or not UTF-8) ends in
ImportUnreadable, and every bound passed in ImportTooBig: the import says so in one line.
Reading takes CPU on untrusted input, so callers run it off the event loop.
"""

import io
import json
import struct
import zipfile
import zlib
from dataclasses import dataclass

from memory.export import MAX_PART_BYTES

# Telegram lets bots download files of at most 20 MB.
MAX_FILE_BYTES = 20 * 1024 * 1024
# The largest JSON our own export writes into one file, and some room.
MAX_JSON_BYTES = MAX_PART_BYTES + 3 * 1024 * 1024
# Our export zips one JSON document; JSON deflates to a fifth, rarely below a fiftieth,
# while a bomb of zeros deflates a thousandfold.
MAX_MEMBERS = 8
MAX_RATIO = 200
CHUNK_BYTES = 64 * 1024
# The end of a zip's central directory: signature, then its entry count at offset 10.
_END_RECORD = b"PK\x05\x06"
_END_RECORD_SEARCH = 22 + 0xFFFF
_READABLE_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)


class ImportUnreadable(ValueError):
    """The file is not one an import can read: malformed, encrypted or of another kind."""


class ImportTooBig(ValueError):
    """The file, or what it inflates to, passes a bound of the import."""


@dataclass(frozen=True)
class ImportBounds:
    """How much an import file may take: downloaded, inflated, in members and in ratio."""

    file_bytes: int = MAX_FILE_BYTES
    json_bytes: int = MAX_JSON_BYTES
    members: int = MAX_MEMBERS
    ratio: int = MAX_RATIO


DEFAULT_BOUNDS = ImportBounds()


def _declared_members(data: bytes) -> int:
    """Return how many members a zip's end record declares, before the directory is parsed."""
    start = data.rfind(_END_RECORD, max(0, len(data) - _END_RECORD_SEARCH))
    if start < 0 or start + 22 > len(data):
        raise ImportUnreadable("no end of central directory")
    (count,) = struct.unpack_from("<H", data, start + 10)
    return int(count)


def _inflate(info: zipfile.ZipInfo, archive: zipfile.ZipFile, bounds: ImportBounds) -> bytes:
    """Return one member's bytes, stopping as soon as they pass the bounds."""
    if info.flag_bits & 0x1:
        raise ImportUnreadable("encrypted")
    if info.compress_type not in _READABLE_METHODS:
        raise ImportUnreadable(f"compression method {info.compress_type}")
    # The directory's sizes can lie: what is read counts, against what may be read from it.
    limit = min(bounds.json_bytes, bounds.ratio * max(info.compress_size, 1))
    out = bytearray()
    with archive.open(info) as member:
        while chunk := member.read(CHUNK_BYTES):
            out += chunk
            if len(out) > limit:
                raise ImportTooBig(f"{info.filename} inflates past {limit} bytes")
    return bytes(out)


def unzip_json(data: bytes, bounds: ImportBounds = DEFAULT_BOUNDS) -> bytes:
    """Return the one JSON member of a zip, inflated within the bounds."""
    if _declared_members(data) > bounds.members:
        raise ImportUnreadable("too many members")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            names = [info for info in infos if info.filename.endswith(".json")]
            if len(infos) > bounds.members or len(names) != 1:
                raise ImportUnreadable("not one JSON member")
            return _inflate(names[0], archive, bounds)
    except (ImportUnreadable, ImportTooBig):
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, ValueError) as error:
        # A bad directory or header (zipfile also raises NotImplementedError for versions and
        # features it lacks, ValueError for offsets before the start, UnicodeDecodeError for
        # names), a corrupt or cut deflate stream, a wrong CRC.
        raise ImportUnreadable(f"bad zip: {type(error).__name__}") from None


def parse_json(data: bytes, bounds: ImportBounds = DEFAULT_BOUNDS) -> object:
    """Return the JSON document in data, parsed within the bounds."""
    if len(data) > bounds.json_bytes:
        raise ImportTooBig(f"{len(data)} bytes of JSON")
    try:
        return json.loads(data)
    except RecursionError:
        # The parser refuses nesting deeper than the interpreter's recursion limit.
        raise ImportUnreadable("JSON nested too deep") from None
    except ValueError:
        # JSONDecodeError, and UnicodeDecodeError for bytes that are no UTF encoding.
        raise ImportUnreadable("not JSON") from None


def read_document(data: bytes, bounds: ImportBounds = DEFAULT_BOUNDS) -> object:
    """Return the JSON document a file holds, plain or zipped, read within the bounds."""
    if len(data) > bounds.file_bytes:
        raise ImportTooBig(f"{len(data)} bytes")
    if data[:2] == b"PK":
        data = unzip_json(data, bounds)
    return parse_json(data, bounds)
