"""The export of an owner's memories as JSON documents, with every version.

The JSON is compact (no indentation); a document over ZIP_OVER_BYTES is sent zipped, and
the memories are split over several documents, each complete and within MAX_PART_BYTES,
when one would not fit Telegram's 50 MB upload limit. Building it takes seconds for tens of
thousands of memories: callers run it off the event loop.
"""

import io
import json
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory.items import MemoryRecord

EXPORT_FORMAT = "memory-bot-export"
EXPORT_FORMAT_VERSION = 1
# Telegram takes uploads of at most 50 MB; a part's JSON stays under this, so its zip does.
MAX_PART_BYTES = 45 * 1024 * 1024
# Larger documents are zipped: JSON of memories shrinks to a fifth or less.
ZIP_OVER_BYTES = 1024 * 1024


@dataclass(frozen=True)
class ExportPart:
    """One file of an export: its name (.json or .zip) and its bytes."""

    filename: str
    data: bytes


def _compact(value: Any) -> str:
    """Return value as JSON without spaces, non-ASCII text as it is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _iso(moment: datetime | None) -> str | None:
    """Return an ISO 8601 UTC timestamp, or None."""
    return None if moment is None else moment.isoformat()


def memory_entry(record: MemoryRecord) -> dict[str, Any]:
    """Return one memory of the export, with all its versions, as plain data."""
    return {
        "id": record.item.id,
        "category": record.item.category.value,
        "subject": record.item.subject,
        "content": record.item.content,
        "created_at": _iso(record.item.created_at),
        "deleted_at": _iso(record.item.deleted_at),
        "versions": [
            {
                "version": version.version_number,
                "content": version.content,
                "created_at": _iso(version.created_at),
                "source_conversation_id": version.source_conversation_id,
            }
            for version in record.versions
        ],
    }


def _header(owner_id: int, exported_at: datetime, memory_enabled: bool) -> dict[str, Any]:
    """Return the fields every document of an export starts with."""
    return {
        "format": EXPORT_FORMAT,
        "format_version": EXPORT_FORMAT_VERSION,
        "owner_id": owner_id,
        "exported_at": _iso(exported_at),
        "memory_enabled": memory_enabled,
    }


def export_document(
    owner_id: int, records: Iterable[MemoryRecord], exported_at: datetime, memory_enabled: bool
) -> dict[str, Any]:
    """Return the export as plain data: every memory, deleted or not, with all versions."""
    memories = [memory_entry(record) for record in records]
    return {**_header(owner_id, exported_at, memory_enabled), "memories": memories}


def export_json(document: dict[str, Any]) -> bytes:
    """Serialize an export document as compact UTF-8 JSON."""
    return (_compact(document) + "\n").encode("utf-8")


def export_parts(
    owner_id: int,
    records: Sequence[MemoryRecord],
    exported_at: datetime,
    memory_enabled: bool,
    max_part_bytes: int = MAX_PART_BYTES,
) -> list[ExportPart]:
    """Return the export's files: one document, or several with "part" and "parts" fields."""
    header = _header(owner_id, exported_at, memory_enabled)
    entries = [_compact(memory_entry(record)).encode() for record in records]
    groups = _split(entries, max_part_bytes - len(export_json(header)) - 64)
    stem = f"memories-{exported_at:%Y-%m-%d}"
    if len(groups) == 1:
        return [_packed(stem, _document(header, groups[0]))]
    count = len(groups)
    return [
        _packed(f"{stem}-part{n}of{count}", _document({**header, "part": n, "parts": count}, g))
        for n, g in enumerate(groups, 1)
    ]


def _split(entries: list[bytes], limit: int) -> list[list[bytes]]:
    """Group entries in order so each group's bytes stay within limit (one entry at least)."""
    groups: list[list[bytes]] = [[]]
    size = 0
    for entry in entries:
        if groups[-1] and size + len(entry) + 1 > limit:
            groups.append([])
            size = 0
        groups[-1].append(entry)
        size += len(entry) + 1
    return groups


def _document(header: dict[str, Any], entries: list[bytes]) -> bytes:
    """Join a header and serialized memories into one JSON document."""
    opening = _compact(header)[:-1].encode() + b',"memories":['
    return opening + b",".join(entries) + b"]}\n"


def _packed(stem: str, data: bytes) -> ExportPart:
    """Return a document as a .json file, or zipped when it is large."""
    if len(data) <= ZIP_OVER_BYTES:
        return ExportPart(f"{stem}.json", data)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        archive.writestr(f"{stem}.json", data)
    return ExportPart(f"{stem}.zip", buffer.getvalue())
