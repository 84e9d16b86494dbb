"""The export document: every memory, deleted ones too, with every version."""

import json
from datetime import UTC, datetime, timedelta

from memory.categories import Category
from memory.export import EXPORT_FORMAT, export_document, export_json
from memory.items import MemoryItem, MemoryRecord, MemoryVersionItem

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def item(memory_id: str, content: str, subject: str | None = None, **kw) -> MemoryItem:
    return MemoryItem(
        id=memory_id,
        owner_id=1,
        category=kw.get("category", Category.CONTEXT),
        subject=subject,
        content=content,
        version=kw.get("version", 1),
        created_at=kw.get("created_at", T0),
        updated_at=kw.get("created_at", T0),
        deleted_at=kw.get("deleted_at"),
    )


ALEC = item("alec0001", "Alec is the user's boss at TechCorp", "Alec", category=Category.PERSON)
TEA = item("tea00001", "The user prefers green tea", category=Category.PREFERENCE)


def test_export_document_has_every_version_with_iso_dates():
    deleted_at = T0 + timedelta(days=2)
    records = [
        MemoryRecord(
            item("alec0001", "Alec is the CTO", "Alec", version=2, deleted_at=deleted_at),
            [
                MemoryVersionItem(1, "Alec is the boss", T0, 7),
                MemoryVersionItem(2, "Alec is the CTO", T0 + timedelta(days=1), None),
            ],
        )
    ]
    document = export_document(42, records, T0 + timedelta(days=3), memory_enabled=False)
    assert json.loads(export_json(document)) == {
        "format": EXPORT_FORMAT,
        "format_version": 1,
        "owner_id": 42,
        "exported_at": "2026-01-04T00:00:00+00:00",
        "memory_enabled": False,
        "memories": [
            {
                "id": "alec0001",
                "category": "context",
                "subject": "Alec",
                "content": "Alec is the CTO",
                "created_at": "2026-01-01T00:00:00+00:00",
                "deleted_at": "2026-01-03T00:00:00+00:00",
                "versions": [
                    {
                        "version": 1,
                        "content": "Alec is the boss",
                        "created_at": "2026-01-01T00:00:00+00:00",
                        "source_conversation_id": 7,
                    },
                    {
                        "version": 2,
                        "content": "Alec is the CTO",
                        "created_at": "2026-01-02T00:00:00+00:00",
                        "source_conversation_id": None,
                    },
                ],
            }
        ],
    }


def test_export_json_keeps_unicode_readable():
    records = [MemoryRecord(item("uni00001", "Lives in Zürich 🇨🇭"), [])]
    data = export_json(export_document(1, records, T0, True))
    assert "Zürich 🇨🇭".encode() in data
