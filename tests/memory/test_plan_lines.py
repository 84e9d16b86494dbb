"""A batch's lines are read into typed models and written back in the shape they were stored in."""

import pytest
from pydantic import ValidationError

from memory.categories import Category
from memory.plan_lines import ImportLine, TidyLine, read_lines, stored_lines
from memory.tidy.plan import TidyAction

# Rows as batches stored them: a tidy line made by a pass, one written without its texts and
# skip flag, an import line never toggled, and one from a version that kept another key.
STORED = [
    {"action": "merge", "memory_id": "a1", "merged_ids": ["b2"], "content": "Likes tea",
     "reason": "Same fact", "versions": {"a1": 1, "b2": 3}, "texts": {"a1": "x", "b2": "y"},
     "skip": False},
    {"action": "archive", "memory_id": "c3", "content": None, "reason": "Passed",
     "versions": {"c3": 2}},
    {"action": "add", "category": "context", "subject": None, "content": "Lives in Lisbon",
     "reason": "From what you sent"},
    {"action": "add", "category": "preference", "subject": "tea", "content": "Green tea",
     "reason": "Import", "skip": True, "source": "older key"},
]  # fmt: skip


def test_stored_lines_come_back_typed_and_go_back_unchanged():
    lines = read_lines(STORED)
    assert [type(line) for line in lines] == [TidyLine, TidyLine, ImportLine, ImportLine]
    assert lines[1].action is TidyAction.ARCHIVE and lines[1].texts == {}
    assert lines[2].category is Category.CONTEXT and not lines[2].skip
    assert stored_lines(lines) == STORED


def test_a_toggled_line_gains_only_its_skip_flag():
    toggled = read_lines(STORED)[2].model_copy(update={"skip": True})
    assert stored_lines([toggled]) == [{**STORED[2], "skip": True}]


def test_a_line_that_is_neither_kind_is_refused():
    with pytest.raises(ValidationError):
        read_lines([{"action": "delete_everything", "memory_id": "a1", "reason": "?"}])
