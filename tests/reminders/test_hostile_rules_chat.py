"""A hostile repeat rule end to end: the real bot, fake Bot API and Messages API, both engines.

Before, "remind me every 0 days" sent dateutil into a loop on the event loop: every chat,
button and reminder stopped. Now the model gets a refusal it can pass on, nothing is stored,
and the next chat is answered; a rule stored before rules were checked is refused in a button.
"""

from datetime import timedelta

from sqlalchemy import update

from bot.reminders.models import Reminder
from memory.db import create_sessionmaker
from tests.buttons import button, last_answer, press
from tests.fakes.anthropic_server import text, tool_use
from tests.harness import FRIEND, OWNER
from tests.reminders.test_reminders_chat import fired, set_with


def tool_results(request: dict) -> list[dict]:
    """Return the tool results a request to the model carried."""
    return [b for b in request["messages"][-1]["content"] if b["type"] == "tool_result"]


async def test_every_0_days_is_refused_and_the_next_chat_is_answered(bot):
    await bot.say(OWNER, "/timezone Berlin")
    every_0_days = {"text": "water the plants", "at_local": "2026-11-25T09:00",
                    "rrule": "FREQ=DAILY;INTERVAL=0"}  # fmt: skip
    bot.model.script(
        tool_use("create_reminder", every_0_days),
        text("I can't repeat a reminder every 0 days."),
        text("Hello, Bob."),
    )
    calls = len(bot.model.requests)
    bot.tg.push_message(OWNER, "remind me every 0 days to water the plants")
    # The tool ran once its result reached the model; then the friend writes.
    await bot.model.wait_for_requests(calls + 2)
    answered = await bot.say(FRIEND, "hi")
    assert answered == ["Hello, Bob."]
    [result] = tool_results(bot.model.requests[calls + 1])
    assert result["is_error"] is True
    assert "INTERVAL must be a whole number from 1 to 3660" in str(result["content"])
    assert "Nothing was changed." in str(result["content"])
    await bot.idle()
    assert await bot.services.reminders.store.upcoming(OWNER, 10) == []


async def test_skip_next_on_a_rule_stored_before_checks_refuses_and_changes_nothing(bot):
    await bot.say(OWNER, "/timezone Berlin")
    daily = {"text": "stand up", "at_local": "2026-11-24T13:30", "rrule": "FREQ=DAILY"}
    await set_with(bot, OWNER, daily)
    since = len(bot.tg.sent)
    bot.clock.advance(timedelta(minutes=30))
    message = await fired(bot, OWNER, "stand up", since)
    # As a row the old code let through would be: its rule never checked.
    [reminder] = await bot.services.reminders.store.upcoming(OWNER, 10)
    async with create_sessionmaker(bot.services.engine).begin() as session:
        hostile = {"rule": "FREQ=YEARLY;INTERVAL=-1"}
        await session.execute(update(Reminder).where(Reminder.id == reminder.id).values(hostile))
    await press(bot, message, button(message, "Skip next"))
    assert "repeat rule cannot be worked out, so nothing was changed" in last_answer(bot)["text"]
    [after] = await bot.services.reminders.store.upcoming(OWNER, 10)
    assert after.next_fire_at == reminder.next_fire_at


async def test_a_time_in_the_spring_gap_is_said_moved_to_the_model_and_in_reminders(bot):
    await bot.say(OWNER, "/timezone Berlin")
    await set_with(bot, OWNER, {"text": "night shift", "at_local": "2027-03-28T02:30"})
    [result] = tool_results(bot.model.requests[-1])
    assert "Sun 28 Mar 2027, 03:30 (Europe/Berlin) (there is no 02:30 that day" in str(
        result["content"]
    )
    [listed] = await bot.say(OWNER, "/reminders")
    assert "03:30 (Europe/Berlin) (there is no 02:30 that day: the clocks go forward)" in listed
