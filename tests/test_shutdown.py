"""Stopping and crashing: SIGTERM finishes turns in flight, kill -9 loses nothing."""

import asyncio
import signal

from sqlalchemy import create_engine
from sqlalchemy import text as sql

from bot.telegram.runtime.lifecycle import finish_turns
from tests.builders import sqlite_url
from tests.fakes.anthropic_server import text, tool_use
from tests.fakes.media import sample_png
from tests.files_support import push_album_photo, stored_contents
from tests.harness import OWNER
from tests.process import BotProcess, bot_environment
from tests.test_files import album_timers


def sqlite_urls(tmp_path) -> tuple[str, str]:
    """Return the bot's URL of a SQLite file and the synchronous one the test reads it with."""
    path = tmp_path / "bot.db"
    return sqlite_url(path), f"sqlite:///{path}"


def rows(sync_url: str, query: str) -> list[tuple]:
    engine = create_engine(sync_url)
    with engine.connect() as connection:
        result = connection.execute(sql(query)).all()
    engine.dispose()
    return [tuple(row) for row in result]


async def test_sigterm_lets_the_turn_in_flight_finish_and_exits_0(fakes, tmp_path):
    tg, model = fakes
    url, _ = sqlite_urls(tmp_path)
    bot = await BotProcess(bot_environment(tg, model, url), tmp_path).start()
    model.latency = 2
    model.script(text("Finished before stopping."))
    tg.push_message(OWNER, "a slow question")
    await model.wait_for_requests(1, timeout=60)
    assert await bot.stop(signal.SIGTERM) == 0, bot.output
    assert tg.messages_to(OWNER) == ["Finished before stopping."]

    # A restart neither answers it again nor loses anything.
    model.latency = 0
    bot = await BotProcess(bot_environment(tg, model, url), tmp_path).start()
    model.script(text("Second answer."))
    tg.push_message(OWNER, "next question")
    await tg.wait_for_messages(OWNER, count=2, timeout=60)
    assert await bot.stop() == 0, bot.output
    assert tg.messages_to(OWNER) == ["Finished before stopping.", "Second answer."]
    assert len(model.requests) == 2


async def test_sigterm_grace_period_is_bounded_and_the_message_answered_after_restart(
    fakes, tmp_path
):
    tg, model = fakes
    url, _ = sqlite_urls(tmp_path)
    env = bot_environment(tg, model, url, SHUTDOWN_GRACE_SECONDS="1")
    bot = await BotProcess(env, tmp_path).start()
    model.latency = 30
    tg.push_message(OWNER, "a very slow question")
    await model.wait_for_requests(1, timeout=60)
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await bot.stop(signal.SIGTERM, timeout=20) == 0, bot.output
    assert loop.time() - started < 15
    assert tg.messages_to(OWNER) == []

    model.latency = 0
    model.script(text("Sorry for the wait: here is your answer."))
    bot = await BotProcess(env, tmp_path).start()
    await tg.wait_for_messages(OWNER, count=1, timeout=60)
    assert await bot.stop() == 0, bot.output
    assert tg.messages_to(OWNER) == ["Sorry for the wait: here is your answer."]
    assert "a very slow question" in str(model.requests[-1]["messages"])
    assert model.invalid == []


async def test_kill_9_mid_turn_then_restart_continues_the_conversation(fakes, tmp_path):
    tg, model = fakes
    url, sync_url = sqlite_urls(tmp_path)
    # The killed process's lease runs out 2 s after its last renewal; then the turn is taken on.
    env = bot_environment(tg, model, url, TURN_LEASE_SECONDS="2")
    bot = await BotProcess(env, tmp_path).start()
    model.script(
        tool_use(
            "add_to_memory",
            {"content": "The user likes tea", "category": "preference", "subject": "tea"},
        )
    )
    # The second call (after the tool ran) hangs until the process is killed.
    model.latency = 0
    tg.push_message(OWNER, "remember that I like tea")
    await model.wait_for_requests(1, timeout=60)
    model.latency = 30
    await model.wait_for_requests(2, timeout=60)
    await bot.stop(signal.SIGKILL)

    memories = rows(
        sync_url,
        "SELECT m.id, count(v.id) FROM agent_memories m "
        "LEFT JOIN agent_memory_versions v ON v.memory_id = m.id GROUP BY m.id",
    )
    assert [count for _, count in memories] == [1]

    model.latency = 0
    model.script(text("Saved: you like tea."), text("Hello again."))
    bot = await BotProcess(env, tmp_path).start()
    await tg.wait_for_messages(OWNER, count=1, timeout=60)
    tg.push_message(OWNER, "hello")
    await tg.wait_for_messages(OWNER, count=2, timeout=60)
    assert await bot.stop() == 0, bot.output
    assert tg.messages_to(OWNER) == ["Saved: you like tea.", "Hello again."]
    assert model.invalid == []


async def test_an_album_still_waiting_for_items_at_a_stop_is_answered_before_the_stop_ends(
    harness,
):
    tg, model = harness.tg, harness.model
    model.script(text("Two photos of cats."))
    # An album whose last item never comes before the stop: it would wait for it an hour.
    harness.running_app.bot_data.albums.quiet = 3600
    photos = [sample_png(30 + i, 20) for i in range(2)]
    push_album_photo(tg, OWNER, photos[0], "album-1", caption="What are these?")
    push_album_photo(tg, OWNER, photos[1], "album-1")
    await harness.idle()
    assert model.requests == [] and len(await stored_contents(harness.services.engine)) == 2

    await finish_turns(harness.running_app, grace_seconds=60)
    assert tg.messages_to(OWNER) == ["Two photos of cats."]
    assert len(model.requests) == 1 and model.image_data() == photos
    assert album_timers() == []
