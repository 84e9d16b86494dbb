"""A Postgres outage loses no message: the user is told once, and answered once it is back.

A real `python -m bot` on a database of its own on the real server; the outage is that
database refusing connections (ALLOW_CONNECTIONS false) with its sessions ended, as when the
server restarts or the host's database fails over. Other databases on the server are untouched.
"""

import asyncpg
import pytest

from bot.migrations import upgrade_database_async
from bot.telegram import texts
from tests import pg
from tests.harness import OWNER
from tests.process import BotProcess, bot_environment
from tests.test_restarts import answered, echo, history


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
