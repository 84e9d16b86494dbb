"""Tidy passes that must not write or cost: rejected plans, stale plans, turns, nightly passes."""

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from bot.telegram.runtime.processing import lanes
from bot.telegram.tidy.nightly import nightly_job, run_nightly
from bot.upkeep.tidy_request import PLAN_TOOL
from memory.categories import Category
from tests.buttons import button, buttons, last_to, press
from tests.fakes.anthropic_server import keep_pinging, text
from tests.harness import OWNER
from tests.tidy_support import (
    active,
    archive_line,
    batch_changes,
    plan_reply,
    seed,
    update_line,
)


async def versions(harness) -> list[tuple[str, int, bool]]:
    """Return every memory of OWNER with its number of versions and whether it is deleted."""
    records = await harness.store.export(OWNER)
    return sorted((r.item.id, len(r.versions), r.item.deleted_at is None) for r in records)


@pytest.mark.engines
async def test_a_plan_with_one_invalid_change_is_rejected_with_no_write(harness):
    seeded = await seed(harness.store, OWNER)
    before = await versions(harness)
    dropped = {**update_line(seeded), "content": "The user moved to Lisbon in October 2026"}
    harness.model.script(plan_reply(archive_line(seeded), dropped))
    [answer] = await harness.say(OWNER, "/memory tidy")
    assert answer.startswith("The tidy plan broke a rule, so I set it aside whole")
    assert "drops Oslo" in answer and buttons(last_to(harness, OWNER)) == []
    assert await versions(harness) == before and await batch_changes(harness) == []


@pytest.mark.engines
async def test_a_plan_whose_memories_changed_since_applies_nothing(harness):
    seeded = await seed(harness.store, OWNER)
    harness.model.script(plan_reply(update_line(seeded), archive_line(seeded)))
    await harness.say(OWNER, "/memory tidy")
    plan = last_to(harness, OWNER)
    await harness.store.update(OWNER, seeded.oslo.id, "The user lives in Oslo, Norway")
    before = await versions(harness)
    await press(harness, plan, button(plan, "Apply"))
    edited = harness.tg.message(OWNER, plan["message_id"])
    assert "changed since the plan was made, so nothing was applied" in edited["text"]
    assert buttons(edited) == []
    assert await versions(harness) == before and await batch_changes(harness) == []


@pytest.mark.engines
async def test_a_chat_turn_and_a_pass_for_one_owner_never_interleave(harness):
    seeded = await seed(harness.store, OWNER)
    until = asyncio.Event()
    harness.model.script(keep_pinging(text("Sure."), until=until), plan_reply(archive_line(seeded)))
    harness.tg.push_message(OWNER, "hello")
    await harness.model.wait_for_requests(1)
    harness.tg.push_message(OWNER, "/memory tidy")
    processor = lanes(harness.running_app)
    async with asyncio.timeout(10):
        # The pass waits in the owner's lane; the processor offers no event for that.
        while processor.unfinished < 2:  # noqa: ASYNC110
            await asyncio.sleep(0)
    assert len(harness.model.requests) == 1
    until.set()
    await harness.idle()
    [turn, tidy] = harness.model.requests
    assert "tool_choice" not in turn and tidy["tool_choice"]["name"] == PLAN_TOOL
    sent = [m["result"]["text"] for m in harness.tg.sent if m["chat_id"] == OWNER]
    assert sent[0] == "Sure." and sent[-1].startswith("Tidy plan: 2 change(s).")


async def test_the_second_automatic_pass_of_a_day_makes_no_model_call(harness):
    seeded = await seed(harness.store, OWNER)
    await harness.services.reminders.store.set_zone(OWNER, "Asia/Tokyo")
    harness.model.script(plan_reply(archive_line(seeded)))
    night = datetime(2026, 11, 26, 19, 10, tzinfo=UTC)  # 04:10 in Tokyo
    app = harness.running_app
    assert await run_nightly(app, night - timedelta(hours=9)) == 0  # 19:10 in Tokyo
    assert await run_nightly(app, night) == 1
    assert last_to(harness, OWNER)["text"].startswith("Tidy plan: 2 change(s).")
    # Memories changed, but it is the same day: no second pass, no model call.
    await harness.store.add(OWNER, "The user reads sci-fi", Category.PREFERENCE)
    assert await run_nightly(app, night + timedelta(minutes=40)) == 0
    assert len(harness.model.requests) == 1
    harness.model.script(plan_reply())
    assert await run_nightly(app, night + timedelta(days=1)) == 1
    assert len(harness.model.requests) == 2


async def test_a_nightly_pass_can_apply_without_asking_with_undo_all(start_bot):
    bot = await start_bot(tidy_auto_apply=True)
    seeded = await seed(bot.store, OWNER)
    before = active(await bot.store.list_active(OWNER))
    bot.model.script(plan_reply(update_line(seeded), archive_line(seeded)))
    assert await run_nightly(bot.running_app, datetime(2026, 11, 26, 4, 5, tzinfo=UTC)) == 1
    notice = last_to(bot, OWNER)
    assert "Applied 3 change(s) as one batch" in notice["text"]
    assert len({batch for batch, _ in await batch_changes(bot)}) == 1
    await press(bot, notice, button(notice, "Undo all"))
    assert active(await bot.store.list_active(OWNER)) == before


async def test_the_nightly_check_is_scheduled_only_when_tidy_nightly_is_on(start_bot):
    off = await start_bot()
    assert not [j for j in off.running_app.job_queue.jobs() if j.callback is nightly_job]
    await off.stop()
    on = await start_bot(tidy_nightly=True)
    [job] = [j for j in on.running_app.job_queue.jobs() if j.callback is nightly_job]
    assert job.job.trigger.interval.total_seconds() == 3600
