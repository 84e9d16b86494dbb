"""The model account's problems are named to the user, once an hour, and logged at ERROR."""

import logging

import pytest

from tests.fakes.anthropic_server import NO_CREDITS, NO_PERMISSION, error, text
from tests.harness import FRIEND, OWNER

HOUR = 3600


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def clocked(start_bot):
    """Start a bot whose notices run on a clock the test moves; return both."""
    clock = FakeClock()
    return await start_bot(app_options={"clock": clock}), clock


def account_errors(caplog) -> list[str]:
    """Return the ERROR lines the delivery logged about the model account."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.ERROR and r.name == "bot.telegram.chat.delivery"
    ]


async def test_no_credits_is_told_once_an_hour_per_chat_and_logged_each_time(clocked, caplog):
    harness, clock = clocked
    harness.model.account_error = NO_CREDITS
    [notice] = await harness.say(OWNER, "hello")
    assert "run out of credits" in notice and "bot's owner" in notice
    assert "can't reach the model" not in notice and "saved" in notice
    assert len(harness.model.requests) == 1  # not retried: waiting never brings credits
    assert await harness.say(OWNER, "hello again") == []
    # Another chat is told too, once.
    assert len(await harness.say(FRIEND, "hi")) == 1
    clock.now += HOUR - 1
    assert await harness.say(OWNER, "still there?") == []
    clock.now += 1
    assert await harness.say(OWNER, "and now?") == [notice]
    lines = account_errors(caplog)
    assert len(lines) == 5 and all("has no credits left" in line for line in lines)
    assert "credit balance is too low" in lines[0] and "Traceback" not in caplog.text

    harness.model.account_error = None
    harness.model.script(text("Back, and I see all five."))
    assert await harness.say(OWNER, "credits added") == ["Back, and I see all five."]
    [user] = harness.model.last_request["messages"]
    assert len(user["content"]) == 5  # every message was kept


@pytest.mark.parametrize(
    ("break_it", "words", "logged"),
    [
        ("key", "API key is not valid", "ANTHROPIC_API_KEY) is not valid"),
        ("model", "model the bot is set to use does not exist", "ANTHROPIC_MODEL) does not"),
        ("permission", "not allowed to use the model", "no permission to use the model"),
    ],
)
async def test_each_account_problem_is_named_not_called_an_outage(
    clocked, caplog, break_it, words, logged
):
    harness, _ = clocked
    if break_it == "key":
        harness.model.api_key = "sk-ant-revoked"
    elif break_it == "model":
        harness.model.models = {"claude-another": "active"}
    else:
        harness.model.account_error = NO_PERMISSION
    [notice] = await harness.say(OWNER, "hello")
    assert words in notice and "Only the bot's owner can fix this" in notice
    assert await harness.say(OWNER, "hello?") == []
    assert len(account_errors(caplog)) == 2 and logged in account_errors(caplog)[0]


async def test_an_outage_is_still_an_outage_and_each_cause_is_told_on_its_own(clocked):
    harness, _ = clocked
    harness.model.script(*[error(529, "overloaded_error", "Overloaded")] * 5)
    [outage] = await harness.say(OWNER, "hello")
    assert "can't reach the model" in outage
    harness.model.account_error = NO_CREDITS
    assert "credits" in (await harness.say(OWNER, "hi"))[0]
    harness.model.account_error = NO_PERMISSION
    assert "not allowed" in (await harness.say(OWNER, "hi"))[0]
