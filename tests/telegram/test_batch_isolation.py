"""One owner's failure in a batch loop never stops another owner's work (both engines)."""

import logging
from datetime import UTC, datetime

from bot.telegram.tidy_nightly import run_nightly
from tests.buttons import last_to
from tests.harness import FRIEND, OWNER
from tests.tidy_support import archive_line, plan_reply, seed


async def test_one_owners_failing_nightly_tidy_does_not_stop_the_next_owners(harness, caplog):
    first, second = sorted((OWNER, FRIEND))
    seeded = {owner: await seed(harness.store, owner) for owner in (first, second)}
    for owner in (first, second):
        await harness.services.reminders.store.set_zone(owner, "Asia/Tokyo")
    harness.model.script(
        plan_reply(archive_line(seeded[first])), plan_reply(archive_line(seeded[second]))
    )
    # The first owner's chat blocked the bot: showing their plan fails.
    harness.tg.fail_next(
        "sendMessage", status=403, description="Forbidden: bot was blocked by the user"
    )
    night = datetime(2026, 11, 26, 19, 10, tzinfo=UTC)  # 04:10 in Tokyo
    with caplog.at_level(logging.ERROR, logger="bot.telegram.tidy_nightly"):
        assert await run_nightly(harness.running_app, night) == 1
    assert last_to(harness, second)["text"].startswith("Tidy plan: 2 change(s).")
    assert f"nightly tidy of owner {first} failed" in caplog.text
    assert len(harness.model.requests) == 2
