"""A turn has a deadline; /new, /memory off and strangers' presses never wait behind one."""

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import event

from bot.telegram.runtime.processing import lanes
from bot.telegram.texts import NEW_CONVERSATION, TOOK_TOO_LONG
from tests.buttons import last_to
from tests.fakes.anthropic_server import keep_pinging, text, tool_use
from tests.harness import OWNER, STRANGER, BotHarness

GROUP = -100777
IN_GROUP: dict[str, Any] = {"user_id": OWNER, "chat_type": "supergroup"}


async def until(condition: Callable[[], bool], timeout: float = 15.0) -> None:  # noqa: ASYNC109
    """Wait until condition holds, checking every few milliseconds."""
    async with asyncio.timeout(timeout):
        # The update processor has no event for this; BotHarness.idle polls the same way.
        while not condition():  # noqa: ASYNC110
            await asyncio.sleep(0.01)


def only_the_turn_left(harness: BotHarness) -> Callable[[], bool]:
    """Tell when every update but the running turn has been fetched and handled."""
    assert harness.app is not None
    app = harness.app
    return lambda: (
        not harness.tg.updates and app.update_queue.empty() and lanes(app).unfinished == 1
    )


async def test_a_stream_kept_alive_by_pings_stops_at_the_turn_deadline(start_bot):
    # Long enough for the first call on a busy machine; the pinging ones take all of it.
    bot = await start_bot(turn_deadline_seconds=3)
    bot.model.script(
        tool_use(
            "add_to_memory",
            {"content": "The user likes tea", "category": "preference", "subject": "tea"},
        ),
        keep_pinging("never finished"),  # streamed: a private chat shows drafts
        keep_pinging("never finished"),  # not streamed: a group has no drafts
        text("Back again."),
    )
    # What the turn saved before its deadline is shown all the same, with its Undo.
    assert await bot.say(OWNER, "remember I like tea") == [
        TOOK_TOO_LONG,
        "Saved to memory: 'The user likes tea'",
    ]
    assert await bot.say(GROUP, "@memory_test_bot hello", **IN_GROUP) == [TOOK_TOO_LONG]
    # The chat is free again, and the history the cut-off turn left is one the API accepts.
    assert await bot.say(OWNER, "hello?") == ["Back again."]
    assert bot.model.invalid == []


@pytest.mark.engines
async def test_new_and_memory_off_never_wait_for_a_turn_in_progress(harness):
    release = asyncio.Event()
    harness.model.script(keep_pinging("Finally.", until=release))
    harness.tg.push_message(OWNER, "hello")
    await harness.model.wait_for_requests(1)

    harness.tg.push_message(OWNER, "/new")
    harness.tg.push_message(OWNER, "/memory off")
    await until(only_the_turn_left(harness))
    new, off = harness.tg.messages_to(OWNER)
    assert new == NEW_CONVERSATION and "off" in off.lower()
    assert not (await harness.services.memory_control.overview(OWNER)).enabled

    release.set()  # the turn in progress still answers, from the conversation it began in
    await harness.idle()
    assert harness.tg.messages_to(OWNER)[-1] == "Finally."


async def test_a_strangers_presses_get_one_alert_and_never_wait_in_the_groups_lane(harness):
    await harness.say(GROUP, "@memory_test_bot hi", **IN_GROUP)
    message = last_to(harness, GROUP)
    release = asyncio.Event()
    harness.model.script(keep_pinging("Done.", until=release))
    harness.tg.push_message(GROUP, "@memory_test_bot and now?", **IN_GROUP)
    await harness.model.wait_for_requests(2)

    for n in range(300):
        harness.tg.push_update(
            {
                "callback_query": {
                    "id": f"flood{n}",
                    "from": {"id": STRANGER, "is_bot": False, "first_name": "Mallory"},
                    "message": message,
                    "chat_instance": f"ci{GROUP}",
                    "data": "m:p:1",
                }
            }
        )
    # Every press is handled while the member's turn still runs: none waited in its lane.
    await until(only_the_turn_left(harness))
    assert len(harness.tg.callback_answers) == 1
    assert harness.tg.callback_answers[0]["text"] == "This is a private bot."

    release.set()
    await harness.idle()
    assert harness.tg.messages_to(GROUP)[-1] == "Done."


async def test_a_strangers_private_flood_takes_no_lane_and_no_lease(harness):
    chats: list[int] = []  # whose lease a statement named

    def record(conn, cursor, statement, parameters, context, executemany):
        # The keeper's periodic renewals and releases touch the table too, but name no
        # stranger: tell the chats apart by the statement's parameters.
        if "turn_leases" in statement:
            values = parameters.values() if isinstance(parameters, dict) else parameters
            chats.extend(chat for chat in (STRANGER, OWNER) if chat in values)

    assert harness.app is not None
    engine = harness.app.bot_data.services.engine.sync_engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        for n in range(50):
            harness.tg.push_message(STRANGER, f"let me in {n}", user_id=STRANGER)
        await harness.idle()
        assert chats == []
        assert harness.model.requests == []
        # An allowed user's message still holds its chat's lease while it is answered.
        harness.model.script(text("Hello."))
        assert await harness.say(OWNER, "hi") == ["Hello."]
        assert set(chats) == {OWNER}
    finally:
        event.remove(engine, "before_cursor_execute", record)
