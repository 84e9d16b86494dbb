"""Strangers: told the bot is private once per chat per ten minutes; groups they add are left."""

from sqlalchemy import select

from bot.conversations.models import Conversation, Turn
from tests.buttons import last_answer, press
from tests.harness import OWNER, STRANGER

GROUP = -100321
OTHER_GROUP = -100654
STRANGER_SAYS = ("hello", "/start", "/memory", "/new", "@memory_test_bot hi")


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 5000.0

    def __call__(self) -> float:
        return self.now


async def test_a_stranger_is_told_once_per_chat_and_nothing_else(harness):
    for said in STRANGER_SAYS:
        harness.tg.push_message(STRANGER, said)
        harness.tg.push_message(GROUP, said, user_id=STRANGER, chat_type="supergroup")
    await harness.idle()
    for chat in (STRANGER, GROUP):
        [notice] = harness.tg.messages_to(chat)
        assert "private bot" in notice and str(STRANGER) in notice
    assert harness.model.requests == []
    async with harness.services.engine.connect() as connection:
        assert (await connection.execute(select(Conversation))).all() == []
        assert (await connection.execute(select(Turn))).all() == []
    # A button press gets an alert on the button, not a message, once per ten minutes.
    message = harness.tg.sent[0]["result"]
    for _ in range(2):
        assert await press(harness, message, "m:p:1", user_id=STRANGER) == []
        assert last_answer(harness)["text"] == "This is a private bot."
    assert len(harness.tg.callback_answers) == 1


async def test_a_stranger_is_told_again_only_after_ten_minutes(start_bot):
    clock = FakeClock()
    harness = await start_bot(app_options={"clock": clock})
    assert len(await harness.say(STRANGER, "hello")) == 1
    clock.now += 599
    assert await harness.say(STRANGER, "hello?") == []
    clock.now += 1
    assert len(await harness.say(STRANGER, "anyone?")) == 1
    assert await harness.say(STRANGER, "hello!") == []


async def test_a_strangers_presses_get_an_alert_again_only_after_ten_minutes(start_bot):
    clock = FakeClock()
    harness = await start_bot(app_options={"clock": clock})
    await harness.say(OWNER, "/help")
    message = harness.tg.sent[0]["result"]
    for _ in range(3):
        await press(harness, message, "m:p:1", user_id=STRANGER)
    clock.now += 599
    await press(harness, message, "m:p:1", user_id=STRANGER)
    assert len(harness.tg.callback_answers) == 1
    clock.now += 1
    await press(harness, message, "m:p:1", user_id=STRANGER)
    assert len(harness.tg.callback_answers) == 2


async def test_the_bot_leaves_a_group_a_stranger_added_it_to_and_stays_in_an_allowed_ones(
    harness,
):
    harness.tg.push_bot_added(GROUP, by_user_id=STRANGER, chat_type="supergroup")
    harness.tg.push_bot_added(OTHER_GROUP, by_user_id=OWNER, chat_type="supergroup")
    await harness.tg.wait_for_call("leaveChat")
    await harness.idle()
    assert harness.tg.left_chats == [GROUP]
    assert harness.tg.sent == []
    [answer] = await harness.say(
        OTHER_GROUP, "@memory_test_bot hi", user_id=OWNER, chat_type="supergroup"
    )
    assert answer == "OK"
