"""Import files built for tests: a valid export zip, zip bombs, and each way a file is malformed."""

import io
import json
import zipfile

EXPORT = {
    "format": "memory-bot-export",
    "memories": [
        {"content": f"The user collects stamp number {n}", "category": "context",
         "subject": f"stamp {n}", "deleted_at": None}
        for n in range(40)
    ],
}  # fmt: skip
LOCAL_HEADER = b"PK\x03\x04"
CENTRAL_HEADER = b"PK\x01\x02"


def export_zip(document: dict = EXPORT) -> bytes:
    """Return an export document zipped as our export zips it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("memories.json", json.dumps(document))
    return buffer.getvalue()


def zip_bomb(inflated: int, name: str = "memories.json", chunk: bytes = b"\0") -> bytes:
    """Return a zip whose one member inflates to that many bytes, deflated in 1 MB pieces."""
    buffer = io.BytesIO()
    piece = chunk * (1024 * 1024 // len(chunk))
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        with archive.open(name, "w", force_zip64=False) as member:
            written = 0
            while written < inflated:
                part = piece[: inflated - written]
                member.write(part)
                written += len(part)
    return buffer.getvalue()


def _patch_both_headers(data: bytes, local_offset: int, central_offset: int, value: bytes) -> bytes:
    """Write value at the same field of the first local header and central directory entry."""
    patched = bytearray(data)
    local = patched.index(LOCAL_HEADER) + local_offset
    central = patched.index(CENTRAL_HEADER) + central_offset
    patched[local : local + len(value)] = value
    patched[central : central + len(value)] = value
    return bytes(patched)


def encrypted_zip() -> bytes:
    """Return an export zip whose member is marked encrypted (general purpose flag bit 0)."""
    return _patch_both_headers(export_zip(), 6, 8, b"\x01\x00")


def method_zip(method: int) -> bytes:
    """Return an export zip whose member claims another compression method."""
    return _patch_both_headers(export_zip(), 8, 10, method.to_bytes(2, "little"))


def corrupt_deflate_zip() -> bytes:
    """Return an export zip whose deflate stream is garbage midway."""
    data = bytearray(export_zip())
    start = data.index(LOCAL_HEADER) + 30 + len("memories.json")
    data[start + 10 : start + 60] = b"\xff" * 50
    return bytes(data)


def truncated_zip() -> bytes:
    """Return the first half of an export zip."""
    data = export_zip()
    return data[: len(data) // 2]


def deep_json(depth: int = 200_000) -> bytes:
    """Return JSON arrays nested depth deep."""
    return b"[" * depth + b"]" * depth


MALFORMED = {
    "deep.json": deep_json(),
    "encrypted.zip": encrypted_zip(),
    "lzma.zip": method_zip(zipfile.ZIP_LZMA),
    "bzip2.zip": method_zip(zipfile.ZIP_BZIP2),
    "bogus-method.zip": method_zip(99),
    "corrupt.zip": corrupt_deflate_zip(),
    "truncated.zip": truncated_zip(),
    "latin1.json": '{"format": "café"}'.encode("latin-1"),
}
