"""The export document: every memory, deleted ones too, with every version."""

import io
import json
import zipfile
from datetime import UTC, datetime, timedelta

from memory.categories import Category
from memory.export import (
    EXPORT_FORMAT,
    ZIP_OVER_BYTES,
    export_document,
    export_json,
    export_parts,
)
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


def many(count: int, versions: int = 3) -> list[MemoryRecord]:
    """Return count memories of versions versions each, of about 450 characters a version."""
    words = "The user mentioned a long project detail with names and places, "
    return [
        MemoryRecord(
            item(f"m{n:07d}", f"{words * 7}{n}"),
            [MemoryVersionItem(v, f"{words * 7}{n}.{v}", T0, None) for v in range(1, versions + 1)],
        )
        for n in range(count)
    ]


def test_a_small_export_is_one_compact_json_file():
    [part] = export_parts(7, [MemoryRecord(ALEC, [])], T0, memory_enabled=True)
    assert part.filename == "memories-2026-01-01.json"
    assert b'{"format":"memory-bot-export","format_version":1,"owner_id":7,' in part.data
    assert b"\n  " not in part.data  # compact: no indentation
    assert json.loads(part.data)["memories"][0]["id"] == "alec0001"


def test_a_large_export_is_zipped():
    records = many(1_000)
    [part] = export_parts(7, records, T0, memory_enabled=True)
    assert part.filename == "memories-2026-01-01.zip"
    with zipfile.ZipFile(io.BytesIO(part.data)) as archive:
        [name] = archive.namelist()
        document = json.loads(archive.read(name))
    assert name == "memories-2026-01-01.json" and len(part.data) < ZIP_OVER_BYTES
    assert [m["id"] for m in document["memories"]] == [r.item.id for r in records]
    assert "part" not in document


def test_an_export_over_the_upload_limit_is_split_into_complete_documents():
    records = many(300)
    limit = 100_000  # stands in for Telegram's 50 MB
    parts = export_parts(7, records, T0, memory_enabled=False, max_part_bytes=limit)
    assert len(parts) > 2
    seen = []
    for number, part in enumerate(parts, 1):
        assert part.filename == f"memories-2026-01-01-part{number}of{len(parts)}.json"
        assert len(part.data) <= limit
        document = json.loads(part.data)
        assert (document["part"], document["parts"], document["owner_id"]) == (
            number,
            len(parts),
            7,
        )
        seen += [m["id"] for m in document["memories"]]
    assert seen == [r.item.id for r in records]  # each memory once, in order
