"""/memory tidy end to end: the plan, Apply as one batch, Undo all and Redo all, skip, Cancel."""

import pytest

from bot.upkeep.tidy_request import PLAN_TOOL
from memory.categories import Category
from tests.buttons import button, buttons, last_answer, last_to, press
from tests.harness import FRIEND, OWNER
from tests.tidy_support import (
    active,
    archive_line,
    batch_changes,
    plan_reply,
    seed,
    sent_memories,
    update_line,
)


@pytest.mark.engines
async def test_a_plan_of_changes_is_applied_as_one_batch_and_undone_whole(harness):
    seeded = await seed(harness.store, OWNER)
    before = active(await harness.store.list_active(OWNER))
    harness.model.script(plan_reply(update_line(seeded), archive_line(seeded)))
    [plan_text] = await harness.say(OWNER, "/memory tidy")

    # One forced call of the plan tool, which saw every memory but the code-found duplicate.
    [request] = harness.model.requests
    assert request["tool_choice"] == {"type": "tool", "name": PLAN_TOOL}
    shown = {m["id"] for m in sent_memories(request)}
    assert seeded.tea_again.id not in shown and seeded.peanuts.id in shown
    assert plan_text.startswith("Tidy plan: 3 change(s).")
    assert f"1. Merge [{seeded.tea.id}] + [{seeded.tea_again.id}]" in plan_text
    assert "Lisbon is newer than Oslo" in plan_text and "The trip was in March" in plan_text
    plan = last_to(harness, OWNER)
    labels = [label for label, _ in buttons(plan)]
    assert labels == ["1 ✓", "2 ✓", "3 ✓", "Apply (3)", "Cancel"]

    await press(harness, plan, button(plan, "Apply"))
    applied = harness.tg.message(OWNER, plan["message_id"])
    assert "Applied 3 change(s) as one batch" in applied["text"]
    after = await harness.store.list_active(OWNER)
    assert sorted(i.content for i in after) == [
        "Alec is the user's boss",
        "The user is allergic to peanuts",
        "The user likes green tea",
        "The user moved from Oslo to Lisbon in October 2026",
    ]
    changes = await batch_changes(harness)
    assert len(changes) == 4 and len({batch for batch, _ in changes}) == 1
    history = await harness.store.history(OWNER, seeded.lisbon.id)
    assert [v.content for v in history][-2:] == [
        "The user moved to Lisbon in October 2026",
        "The user moved from Oslo to Lisbon in October 2026",
    ]

    [batch] = {batch for batch, _ in changes}
    [explained] = await harness.say(OWNER, f"/memory history {seeded.lisbon.id}")
    assert explained.endswith(f"Batches\nv2 by tidy pass {batch}: Lisbon is newer than Oslo")
    [explained] = await harness.say(OWNER, f"/memory history {seeded.oslo.id}")
    assert explained.endswith(f"archived by tidy pass {batch}: Lisbon is newer than Oslo")

    # Undo all: the active memories are back byte for byte; Redo all applies it again.
    await press(harness, applied, button(applied, "Undo all"))
    assert active(await harness.store.list_active(OWNER)) == before
    undone = last_to(harness, OWNER)
    assert undone["text"].startswith("Undone: 4 memory change(s) reverted as one batch.")
    await press(harness, undone, button(undone, "Redo all"))
    assert active(await harness.store.list_active(OWNER)) == active(after)
    redone = last_to(harness, OWNER)
    assert redone["text"].startswith("Redone: 4") and button(redone, "Undo all")
    await press(harness, redone, button(redone, "Undo all"))
    assert active(await harness.store.list_active(OWNER)) == before


@pytest.mark.engines
async def test_undo_all_leaves_alone_what_the_user_changed_since_and_lists_it(harness):
    seeded = await seed(harness.store, OWNER)
    harness.model.script(plan_reply(update_line(seeded), archive_line(seeded)))
    await harness.say(OWNER, "/memory tidy")
    plan = last_to(harness, OWNER)
    await press(harness, plan, button(plan, "Apply"))
    await harness.store.update(OWNER, seeded.lisbon.id, "The user lives in Lisbon now")
    applied = harness.tg.message(OWNER, plan["message_id"])
    await press(harness, applied, button(applied, "Undo all"))
    undone = last_to(harness, OWNER)
    assert undone["text"].startswith("Undone: 3 memory change(s)")
    assert f"[{seeded.lisbon.id}] The user lives in Lisbon now" in undone["text"]
    contents = {i.content for i in await harness.store.list_active(OWNER)}
    assert "The user lives in Lisbon now" in contents and "The user lives in Oslo" in contents
    assert "The user flies to Rome on 12 March 2026" in contents
    # The pressed Undo all is gone; a stale second tap is answered and changes nothing.
    assert buttons(harness.tg.message(OWNER, plan["message_id"])) == []
    await press(harness, applied, button(applied, "Undo all"), as_is=True)
    assert last_answer(harness)["text"] == "This plan was already decided."


async def test_skipped_lines_are_not_applied_and_cancel_changes_nothing(harness):
    seeded = await seed(harness.store, OWNER)
    harness.model.script(plan_reply(update_line(seeded), archive_line(seeded)))
    await harness.say(OWNER, "/memory tidy")
    plan = last_to(harness, OWNER)
    await press(harness, plan, button(plan, "2 ✓"))
    plan = harness.tg.message(OWNER, plan["message_id"])
    assert [label for label, _ in buttons(plan)][:4] == ["1 ✓", "2 ✗", "3 ✓", "Apply (2)"]
    assert "(skipped)" in plan["text"]
    await press(harness, plan, button(plan, "Apply"))
    contents = {i.content for i in await harness.store.list_active(OWNER)}
    assert "The user lives in Oslo" in contents and "The user moved to Lisbon" not in contents
    assert seeded.trip.content not in contents and len(await batch_changes(harness)) == 2

    await harness.store.add(OWNER, "The user reads sci-fi", Category.PREFERENCE)
    before = active(await harness.store.list_active(OWNER))
    harness.model.script(plan_reply(update_line(seeded)))
    await harness.say(OWNER, "/memory tidy")
    plan = last_to(harness, OWNER)
    await press(harness, plan, button(plan, "Cancel"))
    assert "Cancelled: nothing changed." in harness.tg.message(OWNER, plan["message_id"])["text"]
    assert active(await harness.store.list_active(OWNER)) == before


async def test_another_owners_plan_button_is_stale_and_changes_nothing(harness):
    seeded = await seed(harness.store, OWNER)
    harness.model.script(plan_reply(archive_line(seeded)))
    await harness.say(OWNER, "/memory tidy")
    plan = last_to(harness, OWNER)
    data = button(plan, "Apply")
    harness.tg.push_message(FRIEND, "hi")  # FRIEND's private chat exists
    await harness.idle()
    friend_message = last_to(harness, FRIEND)
    await press(harness, friend_message, data, FRIEND, as_is=True)
    assert last_answer(harness)["show_alert"] is True
    await press(harness, plan, "t:a:99999")
    assert last_answer(harness)["show_alert"] is True
    assert seeded.trip.id in {i.id for i in await harness.store.list_active(OWNER)}
    assert await batch_changes(harness) == []


async def test_nothing_changed_since_the_last_pass_makes_no_model_call(harness):
    seeded = await seed(harness.store, OWNER)
    harness.model.script(plan_reply(archive_line(seeded)))
    await harness.say(OWNER, "/memory tidy")
    plan = last_to(harness, OWNER)
    await press(harness, plan, button(plan, "Cancel"))
    [answer] = await harness.say(OWNER, "/memory tidy")
    assert answer.startswith("Nothing changed since the last tidy pass")
    assert len(harness.model.requests) == 1
    # A change to memory makes the next pass worth a call again.
    await harness.store.add(OWNER, "The user reads sci-fi", Category.PREFERENCE)
    harness.model.script(plan_reply())
    [answer] = await harness.say(OWNER, "/memory tidy")
    assert len(harness.model.requests) == 2
    # Only the code's duplicate is left to merge.
    assert answer.startswith("Tidy plan: 1 change(s).")
