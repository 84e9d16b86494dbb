"""Reminders end to end: the real bot against the fake Bot API and Messages API, both engines."""

from datetime import UTC, datetime, timedelta

from tests.buttons import button, buttons, last_answer, press, sent_to
from tests.fakes.anthropic_server import text, tool_use
from tests.harness import FRIEND, OWNER
from tests.reminders.clock import FakeClock
from tests.reminders.conftest import NOW


async def fired(harness, chat_id: int, words: str, since: int) -> dict:
    """Wait for the due loop's pass; return the newest message with these words it sent."""
    await harness.clock.settled()
    await harness.idle()
    found = [m for m in sent_to(harness, chat_id, since) if words in m["text"]]
    assert found, f"nothing with {words!r} was sent"
    return found[-1]


async def set_bread_reminder(bot) -> str:
    """Set the zone, then have the model set 'take the bread out' in 20 minutes."""
    assert "Europe/Berlin" in (await bot.say(OWNER, "/timezone Berlin"))[0]
    bot.model.script(
        tool_use("create_reminder", {"text": "take the bread out", "in_duration": "PT20M"}),
        text("I'll remind you at 13:20."),
    )
    await bot.say(OWNER, "in 20 minutes remind me to take the bread out")
    [result] = [
        b for b in bot.model.requests[-1]["messages"][-1]["content"] if b["type"] == "tool_result"
    ]
    return result["content"]


async def test_a_reminder_set_in_words_fires_once_on_time_with_its_buttons(bot):
    result = await set_bread_reminder(bot)
    assert "Tue 24 Nov, 13:20 (Europe/Berlin), in 20 minutes" in result
    calls = len(bot.model.requests)
    since = len(bot.tg.sent)
    bot.clock.advance(timedelta(minutes=19))
    await bot.clock.settled()
    assert sent_to(bot, OWNER, since) == []
    bot.clock.advance(timedelta(minutes=1))
    message = await fired(bot, OWNER, "take the bread out", since)
    assert message["text"] == "⏰ take the bread out"
    assert [label for label, _ in buttons(message)] == ["Done", "+10 min", "+1 hour", "Tomorrow"]
    # A plain reminder never calls the model.
    assert len(bot.model.requests) == calls
    bot.clock.advance(timedelta(minutes=5))
    await bot.clock.settled()
    assert len([m for m in sent_to(bot, OWNER, since) if "bread" in m["text"]]) == 1

    # The fired reminder is the bot's turn: "move it" in reply has its context.
    bot.model.script(text("Sure."))
    await bot.say(OWNER, "thanks, done")
    history = bot.model.requests[-1]["messages"]
    said = [b.get("text", "") for m in history if m["role"] == "assistant" for b in m["content"]]
    assert "Reminder: take the bread out" in said


async def test_snooze_fires_again_and_cancel_from_the_list(bot):
    await set_bread_reminder(bot)
    since = len(bot.tg.sent)
    bot.clock.advance(timedelta(minutes=20))
    message = await fired(bot, OWNER, "take the bread out", since)
    await press(bot, message, button(message, "+10 min"))
    assert last_answer(bot)["text"].startswith("Again Tue 24 Nov, 13:30")
    assert buttons(bot.tg.message(OWNER, message["message_id"])) == []
    since = len(bot.tg.sent)
    bot.clock.advance(timedelta(minutes=10))
    again = await fired(bot, OWNER, "take the bread out", since)
    await press(bot, again, button(again, "+1 hour"))

    listing = (await bot.say(OWNER, "/reminders"))[0]
    assert "take the bread out" in listing and "Tue 24 Nov, 14:30" in listing
    page = sent_to(bot, OWNER)[-1]
    await press(bot, page, button(page, "Cancel: take the bread out"))
    assert last_answer(bot)["text"] == "Cancelled."
    assert "No reminders" in bot.tg.message(OWNER, page["message_id"])["text"]
    since = len(bot.tg.sent)
    bot.clock.advance(timedelta(hours=2))
    await bot.clock.settled()
    assert sent_to(bot, OWNER, since) == []


async def test_without_a_zone_the_model_is_told_to_ask_for_the_city(bot):
    bot.model.script(
        tool_use("create_reminder", {"text": "call Sarah", "at_local": "2026-11-27T09:00"}),
        text("Which city are you in?"),
    )
    await bot.say(OWNER, "remind me on Friday at 9 to call Sarah")
    [result] = [
        b for b in bot.model.requests[-1]["messages"][-1]["content"] if b["type"] == "tool_result"
    ]
    assert result["is_error"] and "which city" in result["content"]
    assert await bot.services.reminders.store.upcoming(OWNER, 10) == []


async def test_another_owners_buttons_and_ids_change_nothing(bot):
    await set_bread_reminder(bot)
    [mine] = await bot.services.reminders.store.upcoming(OWNER, 10)
    # A forged Cancel from another allowed user's private chat: not found, nothing changes.
    forged = {"message_id": 1, "chat": {"id": FRIEND, "type": "private"}, "date": 0, "text": "x"}
    await press(bot, forged, f"r:c:{mine.id}:1", FRIEND, as_is=True)
    assert last_answer(bot)["text"] == "That reminder is gone."
    bot.model.script(tool_use("cancel_reminder", {"reminder_id": mine.id}), text("Hm."))
    await bot.say(FRIEND, "cancel reminder")
    assert (await bot.services.reminders.store.get(OWNER, mine.id)).state == "active"


async def test_timezone_command_shows_sets_and_refuses_unknown_places(bot):
    assert "don't know your time zone" in (await bot.say(OWNER, "/timezone"))[0]
    assert "don't know the time zone" in (await bot.say(OWNER, "/timezone Atlantis"))[0]
    answer = (await bot.say(OWNER, "/timezone new york"))[0]
    assert "America/New_York" in answer and "07:00" in answer


async def set_with(bot, chat_id: int, arguments: dict, **say) -> None:
    """Have the model call create_reminder with these arguments in a chat."""
    bot.model.script(tool_use("create_reminder", arguments), text("Set."))
    await bot.say(chat_id, "@memory_test_bot remind me", **say)


async def test_a_repeating_one_has_skip_next_and_stop(bot):
    await bot.say(OWNER, "/timezone Berlin")
    rule = {"text": "stand up", "at_local": "2026-11-24T13:30", "rrule": "FREQ=DAILY"}
    await set_with(bot, OWNER, rule)
    since = len(bot.tg.sent)
    bot.clock.advance(timedelta(minutes=30))
    message = await fired(bot, OWNER, "stand up", since)
    assert [label for label, _ in buttons(message)][-2:] == ["Skip next", "Stop"]
    await press(bot, message, button(message, "Skip next"))
    assert last_answer(bot)["text"].startswith("Skipped; next Thu 26 Nov, 13:30")
    [reminder] = await bot.services.reminders.store.upcoming(OWNER, 10)
    assert reminder.next_fire_at == datetime(2026, 11, 26, 12, 30, tzinfo=UTC)
    # The message as it was when it arrived, Stop still on it.
    await press(bot, message, button(message, "Stop"), as_is=True)
    assert last_answer(bot)["text"] == "Stopped."
    assert await bot.services.reminders.store.upcoming(OWNER, 10) == []


async def test_in_a_forum_topic_it_fires_in_that_topic_with_the_groups_zone(bot):
    forum = -100777
    say = {"user_id": OWNER, "chat_type": "supergroup", "message_thread_id": 9}
    bot.tg.push_message(forum, "/timezone Sydney", **say)
    await bot.idle()
    await set_with(bot, forum, {"text": "standup", "in_duration": "PT5M"}, **say)
    assert await bot.services.reminders.store.zone_of(forum) == "Australia/Sydney"
    assert await bot.services.reminders.store.zone_of(OWNER) is None
    since = len(bot.tg.sent)
    bot.clock.advance(timedelta(minutes=5))
    message = await fired(bot, forum, "standup", since)
    assert message.get("message_thread_id") == 9


async def test_a_check_in_is_answered_by_the_model_within_the_daily_cap(start_bot):
    clock = FakeClock(NOW)
    bot = await start_bot(app_options={"reminder_clock": clock}, check_ins_per_day=1)
    bot.clock = clock
    await bot.say(OWNER, "/timezone Berlin")
    plan = {"text": "give me a plan for the day", "rrule": "FREQ=DAILY", "check_in": True}
    await set_with(bot, OWNER, {**plan, "at_local": "2026-11-24T14:00"})
    await set_with(bot, OWNER, {**plan, "at_local": "2026-11-24T14:30", "text": "a second plan"})
    bot.model.script(text("Here is your plan: rest."))
    calls, since = len(bot.model.requests), len(bot.tg.sent)
    clock.advance(timedelta(hours=1))
    await fired(bot, OWNER, "Here is your plan", since)
    assert "give me a plan for the day" in bot.model.last_user_text()
    clock.advance(timedelta(minutes=30))
    # The day's one check-in is used: the second arrives as a plain reminder, no model call.
    await fired(bot, OWNER, "⏰ a second plan", since)
    assert len(bot.model.requests) == calls + 1


async def test_a_one_off_due_while_the_bot_was_down_fires_once_at_start_marked_late(bot):
    await set_bread_reminder(bot)
    await bot.stop()
    bot.clock.advance(timedelta(hours=3))
    since = len(bot.tg.sent)
    await bot.start()
    bot.clock.advance(timedelta(0))
    message = await fired(bot, OWNER, "take the bread out", since)
    assert "(was due Tue 24 Nov, 13:20)" in message["text"]
    await bot.restart()
    await bot.clock.settled()
    assert len([m for m in sent_to(bot, OWNER, since) if "bread" in m["text"]]) == 1


async def test_a_chat_that_blocked_the_bot_has_its_reminders_paused(bot):
    await set_bread_reminder(bot)
    await set_with(bot, OWNER, {"text": "later", "in_duration": "PT3H"})
    bot.tg.push_my_chat_member(
        OWNER, by_user_id=OWNER, old_status="member", new_status="kicked", chat_type="private"
    )
    await bot.idle()
    bot.clock.advance(timedelta(minutes=20))
    await bot.clock.settled()
    listing = await bot.services.reminders.store.upcoming(OWNER, 10)
    assert [(r.text, r.state) for r in listing] == [("later", "paused")]
