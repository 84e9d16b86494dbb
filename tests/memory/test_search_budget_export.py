"""Pure parts of memory control: search ranking, the export document, token budget sums."""

import json
from datetime import UTC, datetime, timedelta

from memory.block import render_memory_line
from memory.budget import MemoryUsage, memory_tokens, new_memory_tokens, usage_of
from memory.categories import Category
from memory.export import EXPORT_FORMAT, export_document, export_json
from memory.items import MemoryItem, MemoryRecord, MemoryVersionItem
from memory.search import search, words
from memory.tokens import count_tokens

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
SARAH = item("sarah001", "Sarah reports to Alec on the Design team", "Sarah")
TEA = item("tea00001", "The user prefers green tea", category=Category.PREFERENCE)
BOSSES = item("boss0001", "The user has had many bosses")


def test_words_are_case_folded_and_split_on_punctuation():
    assert words("Alec's BOSS, TechCorp!") == {"alec", "s", "boss", "techcorp"}


def test_subject_matches_rank_above_content_matches():
    assert search([SARAH, ALEC, TEA], "alec") == [ALEC, SARAH]


def test_more_matching_words_rank_higher_and_case_does_not_matter():
    assert search([SARAH, ALEC, TEA], "DESIGN team") == [SARAH]
    assert search([TEA, SARAH, ALEC], "alec boss") == [ALEC, SARAH]


def test_a_prefix_counts_for_less_than_a_whole_word():
    assert search([BOSSES, ALEC], "boss") == [ALEC, BOSSES]
    assert search([ALEC], "bo") == []  # too short to count as a prefix


def test_no_match_and_blank_queries_find_nothing():
    assert search([ALEC, TEA], "coffee") == []
    assert search([ALEC, TEA], "  ") == []


def test_ties_keep_block_order():
    first = item("aaaa0001", "Likes tea", created_at=T0)
    second = item("aaaa0002", "Likes tea too", created_at=T0 + timedelta(1))
    assert search([second, first], "tea") == [first, second]


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


def test_usage_counts_the_block_lines_of_the_memories():
    assert memory_tokens(ALEC) == count_tokens(render_memory_line(ALEC))
    usage = usage_of([ALEC, TEA], 2000)
    assert usage == MemoryUsage(2, memory_tokens(ALEC) + memory_tokens(TEA), 2000)
    assert usage_of([], 10) == MemoryUsage(0, 0, 10)


def test_a_new_memory_is_counted_like_a_saved_one():
    estimate = new_memory_tokens(ALEC.content, ALEC.subject)
    assert abs(estimate - memory_tokens(ALEC)) <= 3
    assert new_memory_tokens("x " * 400, None) > 300


def test_fits_is_inclusive_of_the_budget():
    usage = MemoryUsage(count=1, tokens=90, budget=100)
    assert usage.fits(10) and not usage.fits(11)
