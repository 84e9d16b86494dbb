"""The rules a tidy plan keeps, each broken once: the whole plan is rejected."""

from datetime import UTC, datetime
from typing import Any

import pytest

from memory.categories import Category
from memory.facts import has_date, missing_facts
from memory.import_check import check_imports
from memory.items import MemoryItem
from memory.tidy.dupes import duplicate_lines
from memory.tidy.plan import PlanRejected, TidyPlan, max_changes, validate_plan

AT = datetime(2026, 11, 1, tzinfo=UTC)


def item(memory_id: str, content: str, pinned: bool = False) -> MemoryItem:
    """Return an active memory of owner 1."""
    return MemoryItem(memory_id, 1, Category.CONTEXT, None, content, 1, AT, AT, None, pinned)


ITEMS = [
    item("oslo0001", "The user lives in Oslo"),
    item("lisb0001", "The user moved to Lisbon in October 2026"),
    item("trip0001", "The user flies to Rome on 12 March 2026"),
    item("blue0001", "The user's favourite colour is blue"),
    item("gren0001", "The user's favourite colour is green"),
    item("alec0001", "Alec is the user's boss"),
    item("pean0001", "The user is allergic to peanuts", pinned=True),
    item("tea00001", "The user likes green tea"),
]
GOOD_UPDATE: dict[str, Any] = {
    "action": "update",
    "memory_id": "lisb0001",
    "merged_ids": ["oslo0001"],
    "content": "The user moved from Oslo to Lisbon in October 2026",
    "reason": "Lisbon is newer",
}
GOOD_ARCHIVE = {"action": "archive", "memory_id": "trip0001", "reason": "The trip is over"}


def plan(*changes: dict) -> TidyPlan:
    """Return a plan of these lines."""
    return TidyPlan.model_validate({"changes": list(changes)})


def test_a_plan_keeping_every_rule_is_accepted():
    validate_plan(plan(GOOD_UPDATE, GOOD_ARCHIVE), ITEMS)


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ([{**GOOD_ARCHIVE, "memory_id": "zzzz0001"}], "is not one of the memories"),
        ([{**GOOD_ARCHIVE, "memory_id": "pean0001"}], "is pinned"),
        ([GOOD_UPDATE, {**GOOD_ARCHIVE, "memory_id": "oslo0001"}], "more than once"),
        ([{**GOOD_UPDATE, "content": "The user moved to Lisbon in October 2026"}], "drops Oslo"),
        (
            [{"action": "merge", "memory_id": "blue0001", "merged_ids": ["gren0001"],
              "content": "The user's favourite colour is blue", "reason": "Same"}],
            "drops green",
        ),
        ([{**GOOD_ARCHIVE, "memory_id": "oslo0001"}], "no date"),  # deletion alone
        ([{**GOOD_ARCHIVE, "merged_ids": ["oslo0001"]}], "one memory and no text"),
        ([{**GOOD_UPDATE, "content": GOOD_UPDATE["content"] + " [id:lisb0001]"}], "tool or score"),
        ([{**GOOD_UPDATE, "content": GOOD_UPDATE["content"] + ", score: 0.93"}], "tool or score"),
        ([{**GOOD_UPDATE, "reason": " "}], "reason"),
        ([{**GOOD_UPDATE, "action": "merge", "merged_ids": []}], "needs the memories"),
        (
            [{**GOOD_ARCHIVE, "memory_id": m, "reason": "x"} for m in
             ("trip0001", "lisb0001", "oslo0001", "alec0001")],
            "at most 3",
        ),
    ],
)  # fmt: skip
def test_a_plan_breaking_one_rule_is_rejected_whole(changes, problem):
    with pytest.raises(PlanRejected, match=problem):
        validate_plan(plan(*changes), ITEMS)


def test_the_share_of_changes_is_bounded():
    assert max_changes(5) == 3 and max_changes(50) == 20 and max_changes(30) == 12


def test_key_facts_are_names_numbers_and_significant_words():
    assert missing_facts("The user lives in Oslo", "Moved from Oslo to Lisbon") == []
    assert missing_facts("Budget is 4,500 euros", "Budget is 4500 euros") == ["4,500"]
    assert missing_facts("Has two cats", "Has 2 cats") == ["two"]
    assert missing_facts("Likes the colours", "Likes the colour") == []
    assert has_date("Dentist next Tuesday") and has_date("Flight on 12/03")
    assert not has_date("Alec is the user's boss")


def test_code_finds_exact_and_normalised_duplicates_but_never_pinned_ones():
    items = [
        item("aaaa0001", "The user likes green tea"),
        item("aaaa0002", "the user likes  GREEN tea!"),
        item("aaaa0003", "The user likes green tea", pinned=True),
        item("aaaa0004", "The user likes black tea"),
    ]
    [line] = duplicate_lines(items)
    assert line.memory_id == "aaaa0001" and line.merged_ids == ["aaaa0002"]
    assert line.content == "The user likes green tea" and "punctuation" in line.reason


FLIPS = [
    ("The user never eats meat", "The user eats meat"),
    ("The user does not drink", "The user does drink"),
    ("The user doesn't drink alcohol", "The user drinks alcohol"),
    ("The user is allergic to peanuts, not to cashews",
     "The user is allergic to cashews, not to peanuts"),
    ("Bob is 34 and Carol is 29", "Bob is 29 and Carol is 34"),
    ("Bob is 34 years old and Carol is 29 years old",
     "Bob is 29 years old and Carol is 34 years old"),
    ("The user takes coffee without sugar", "The user takes coffee with sugar"),
    ("The user eats fish", "The user never eats fish"),
]  # fmt: skip
HONEST = [
    ("The user never eats meat", "The user never eats meat or fish"),
    ("The user does not drink", "The user doesn't drink"),
    ("The user is allergic to peanuts, not to cashews",
     "The user is allergic to peanuts (not to cashews) and to shellfish"),
    ("Bob is 34 and Carol is 29", "Carol is 29 and Bob is 34"),
    ("The user flies to Rome on 12 March 2026", "On 12 March 2026 the user flies to Rome"),
    ("The user lives in Oslo", "The user moved from Oslo to Lisbon in October 2026"),
    ("The user moved to Lisbon in October 2026",
     "The user moved from Oslo to Lisbon in October 2026"),
    ("Budget is 4500 euros", "The budget, 4500 euros, is fixed"),
    ("The user has no car", "The user has no car and cycles to work"),
]  # fmt: skip


@pytest.mark.parametrize(("old", "new"), FLIPS)
def test_a_rewrite_that_flips_the_meaning_is_rejected(old, new):
    assert missing_facts(old, new) != []
    memories = [item("flip0001", old), item("flip0002", old + ".")]
    line = {"action": "merge", "memory_id": "flip0001", "merged_ids": ["flip0002"],
            "content": new, "reason": "The same fact"}  # fmt: skip
    with pytest.raises(PlanRejected, match="the new text drops"):
        validate_plan(plan(line), memories)


@pytest.mark.parametrize(("old", "new"), HONEST)
def test_an_honest_rewrite_keeps_its_meaning(old, new):
    assert missing_facts(old, new) == []


def test_an_import_that_flips_what_was_sent_is_left_out():
    sent = "- never eats meat\n- Bob is 34 and Carol is 29\n- I'm allergic to peanuts, not cashews"
    proposed = [
        {"content": "The user eats meat", "category": "preference", "subject": "diet"},
        {"content": "Bob is 29", "category": "person", "subject": "Bob"},
        {"content": "The user is allergic to cashews", "category": "context", "subject": "x"},
        {"content": "Carol is 29", "category": "person", "subject": "Carol"},
        {"content": "The user never eats meat", "category": "preference", "subject": "meat"},
    ]
    checked = check_imports(proposed, [], sent, "From what you sent")
    assert [line.content for line in checked.lines] == [
        "Carol is 29",
        "The user never eats meat",
    ]
    assert all("not stated in what you sent" in why for _, why in checked.left_out)


def test_a_merge_that_writes_a_secret_is_rejected():
    memories = [item("pin00001", "The user's bank is Nordbank"), item("pin00002", "PIN 4821")]
    line = {"action": "merge", "memory_id": "pin00001", "merged_ids": ["pin00002"],
            "content": "The user's bank is Nordbank, PIN 4821", "reason": "Same bank"}  # fmt: skip
    with pytest.raises(PlanRejected, match="looks like a PIN"):
        validate_plan(plan(line), memories)
    pointer = "The user's bank is Nordbank; the PIN is in the drawer"
    memories[1] = item("pin00002", "The bank PIN is in the drawer")
    validate_plan(plan({**line, "content": pointer}), memories)


def test_an_import_keeps_where_a_secret_is_kept_but_never_the_secret():
    sent = "- the Wi-Fi password is on the router\n- wifi password: hunter2\n- PIN 4821"
    proposed = [
        {"content": "The Wi-Fi password is on the router", "category": "context",
         "subject": "wifi"},
        {"content": "The wifi password: hunter2", "category": "context", "subject": "wifi 2"},
        {"content": "The user's PIN 4821", "category": "context", "subject": "pin"},
    ]  # fmt: skip
    checked = check_imports(proposed, [], sent, "From what you sent")
    assert [line.content for line in checked.lines] == ["The Wi-Fi password is on the router"]
    assert [why for _, why in checked.left_out] == [
        "looks like a password: secrets are never saved",
        "looks like a PIN: secrets are never saved",
    ]
