"""A Postgres outage loses no message: the user is told once, and answered once it is back.

A real `python -m bot` on a database of its own on the real server; the outage is that
database refusing connections (ALLOW_CONNECTIONS false) with its sessions ended, as when the
server restarts or the host's database fails over. Other databases on the server are untouched.
"""

import itertools

import asyncpg
import pytest
from telegram import Update

from bot.migrations import upgrade_database_async
from bot.telegram import texts
from bot.telegram.runtime.outage import Outage
from tests import pg
from tests.builders import private_message
from tests.harness import OWNER
from tests.process import BotProcess, bot_environment
from tests.test_restarts import answered, echo, history

UPDATE_IDS = itertools.count(9000)


async def set_reachable(name: str, reachable: bool) -> None:
    """Let the database take connections, or refuse them and end the ones it has."""
    admin = await asyncpg.connect(pg.ADMIN_URL, timeout=pg.CONNECT_TIMEOUT)
    try:
        await admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS {str(reachable).lower()}')
        if not reachable:
            await admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name
            )
    finally:
        await admin.close()


@pytest.fixture
async def own_database():
    """Create a database for this test alone, migrated; drop it afterwards."""
    pg.require_postgres()
    name = pg.new_database_name()
    pg.create_database(name)
    try:
        await upgrade_database_async(pg.url_for(name))
        yield name
    finally:
        await set_reachable(name, True)
        pg.drop_database(name)


@pytest.mark.postgres
async def test_messages_sent_while_the_database_is_out_are_answered_once_it_is_back(
    fakes, own_database, tmp_path
):
    tg, model = fakes
    model.default = echo
    url = pg.url_for(own_database)
    bot = await BotProcess(bot_environment(tg, model, url), tmp_path).start()
    try:
        tg.push_message(OWNER, "before")
        await tg.wait_for_messages(OWNER, count=1, timeout=60)

        await set_reachable(own_database, False)
        tg.push_message(OWNER, "during one")
        tg.push_message(OWNER, "during two")
        await bot.wait_for_output("keeping update", count=2)
        # The notice is sent after the log line: wait for it, then check it came once.
        await tg.wait_for_messages(OWNER, count=2, timeout=60)
        assert tg.messages_to(OWNER)[1:] == [texts.DATABASE_DOWN]  # said once, plainly

        await set_reachable(own_database, True)
        await tg.wait_for_messages(OWNER, count=4, timeout=60)
    finally:
        code = await bot.stop()
    assert code == 0, bot.output
    assert tg.messages_to(OWNER) == [
        "answer to: before",
        texts.DATABASE_DOWN,
        "answer to: during one",
        "answer to: during two",
    ]
    assert texts.SOMETHING_WENT_WRONG not in tg.messages_to(OWNER)
    assert len(model.requests) == 3
    assert await history(url) == answered("before", "during one", "during two")


@pytest.mark.postgres
async def test_a_stop_during_the_outage_says_the_kept_message_was_not_answered(
    fakes, own_database, tmp_path
):
    tg, model = fakes
    bot = await BotProcess(bot_environment(tg, model, pg.url_for(own_database)), tmp_path).start()
    try:
        await bot.wait_for_output("started as")
        await set_reachable(own_database, False)
        tg.push_message(OWNER, "are you there?")
        await bot.wait_for_output("keeping update")
    finally:
        code = await bot.stop()
    assert code == 0, bot.output
    # Its memory goes with the process: the user is told to send it again, never left waiting.
    assert tg.messages_to(OWNER) == [texts.DATABASE_DOWN, texts.DATABASE_GAVE_UP]
    assert model.requests == []
    assert "unhandled error while processing an update" not in bot.output


class Clock:
    """The outage's monotonic clock, moved by the test."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def never_reachable() -> bool:
    """Answer every probe as a database that stays out."""
    return False


def kept_update(app, words: str) -> Update:
    """Return an update with the owner's message, as the bot received it."""
    update = {"update_id": next(UPDATE_IDS), "message": private_message(OWNER, text=words)}
    return Update.de_json(update, app.bot)


async def test_messages_kept_past_the_window_are_given_up_once_and_a_new_one_is_told_again(
    harness,
):
    tg, app, clock = harness.tg, harness.running_app, Clock()
    # A window of a minute on the test's clock, and probes as often as the loop allows.
    outage = Outage(never_reachable, clock, delays=(0.01,), window=60)
    refused = OSError("connection refused")
    assert await outage.keep(app, kept_update(app, "one"), refused)
    clock.now = 30
    assert await outage.keep(app, kept_update(app, "two"), refused)
    await tg.wait_for_messages(OWNER, count=1)
    clock.now = 61  # "one" is past the window, "two" not yet
    await tg.wait_for_messages(OWNER, count=2)
    assert [k.update.message.text for k in outage.kept] == ["two"]
    clock.now = 91
    await tg.wait_for_messages(OWNER, count=3)
    assert outage.kept == []
    assert outage._waiter is not None
    await outage._waiter  # it stops once nothing is kept
    # The database is still out: a new message of the chat is kept and the chat told again.
    assert await outage.keep(app, kept_update(app, "three"), refused)
    clock.now = 200
    await tg.wait_for_messages(OWNER, count=5)
    await outage._waiter
    assert tg.messages_to(OWNER) == [
        texts.DATABASE_DOWN,
        texts.DATABASE_GAVE_UP,
        texts.DATABASE_GAVE_UP,
        texts.DATABASE_DOWN,
        texts.DATABASE_GAVE_UP,
    ]
    assert outage.kept == [] and harness.model.requests == []
