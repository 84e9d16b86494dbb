"""The export of an owner's memories as a JSON document, with every version."""

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from memory.items import MemoryRecord

EXPORT_FORMAT = "memory-bot-export"
EXPORT_FORMAT_VERSION = 1


def _iso(moment: datetime | None) -> str | None:
    """Return an ISO 8601 UTC timestamp, or None."""
    return None if moment is None else moment.isoformat()


def export_document(
    owner_id: int, records: Iterable[MemoryRecord], exported_at: datetime, memory_enabled: bool
) -> dict[str, Any]:
    """Return the export as plain data: every memory, deleted or not, with all versions."""
    return {
        "format": EXPORT_FORMAT,
        "format_version": EXPORT_FORMAT_VERSION,
        "owner_id": owner_id,
        "exported_at": _iso(exported_at),
        "memory_enabled": memory_enabled,
        "memories": [
            {
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
            for record in records
        ],
    }


def export_json(document: dict[str, Any]) -> bytes:
    """Serialize the export as readable UTF-8 JSON."""
    return (json.dumps(document, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
