"""A reminder the Bot API refuses for a while arrives once, later: the real bot, both engines."""

from datetime import timedelta

from bot.reminders.due import BACKOFF
from tests.buttons import sent_to
from tests.harness import OWNER
from tests.reminders.test_reminders_chat import fired, set_bread_reminder


def bread(harness, since: int) -> list[dict]:
    """Return the bread reminders sent to OWNER since a count of sent messages."""
    return [m for m in sent_to(harness, OWNER, since) if "take the bread out" in m["text"]]


async def test_a_reminder_refused_with_502_twice_arrives_once_after_retries(bot):
    await set_bread_reminder(bot)
    since = len(bot.tg.sent)
    bot.tg.fail_next("sendMessage", status=502, description="Bad Gateway", times=2)
    bot.clock.advance(timedelta(minutes=20))
    await bot.clock.settled()
    refused = [call for call in bot.tg.rejected if call[0] == "sendMessage"]
    assert len(refused) == 1 and bread(bot, since) == []
    bot.clock.advance(BACKOFF[0])
    await bot.clock.settled()
    assert len([call for call in bot.tg.rejected if call[0] == "sendMessage"]) == 2
    assert bread(bot, since) == []
    bot.clock.advance(BACKOFF[1])
    message = await fired(bot, OWNER, "take the bread out", since)
    # Sent 90 seconds after its time: on time enough not to say when it was due.
    assert message["text"] == "⏰ take the bread out"
    bot.clock.advance(timedelta(hours=1))
    await bot.clock.settled()
    assert len(bread(bot, since)) == 1
    assert all("could not send" not in m["text"] for m in sent_to(bot, OWNER, since))


def refused_texts(harness) -> list[str]:
    """Return the texts of the sendMessage calls the fake Bot API refused, in order."""
    return [
        params.get("text", "") for name, params, _ in harness.tg.rejected if name == "sendMessage"
    ]


async def test_a_reminder_refused_for_a_quarter_hour_is_given_up_and_its_chat_told_once(
    bot,
):
    await set_bread_reminder(bot)
    since = len(bot.tg.sent)
    bot.tg.fail_always("sendMessage", status=502, description="Bad Gateway")
    bot.clock.advance(timedelta(minutes=20))
    for _ in range(8):  # 32 minutes in steps of the longest backoff
        await bot.clock.settled()
        bot.clock.advance(BACKOFF[-1])
    await bot.clock.settled()
    tries = refused_texts(bot)
    notices = [words for words in tries if "could not send you this reminder" in words]
    assert len(notices) == 1 and "take the bread out" in notices[0]
    assert tries[-1] == notices[0]  # told last, once, and tried no more
    assert 4 <= len(tries) - 1 <= 10
    assert all(words.startswith("⏰ take the bread out") for words in tries[:-1]), tries
    bot.tg.allow("sendMessage")
    bot.clock.advance(timedelta(hours=1))
    await bot.clock.settled()
    assert bread(bot, since) == [] and len(refused_texts(bot)) == len(tries)
