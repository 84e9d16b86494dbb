"""/delete_my_data end to end: real PTB and SDK against the fakes, on both engines."""

import asyncio
import logging
import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.telegram.runtime.processing import lanes
from memory.batches.values import BatchKind, BatchState
from memory.categories import Category
from tests.buttons import button, buttons, last_answer, last_to, press
from tests.fakes.anthropic_server import Reply, tool_use
from tests.fakes.anthropic_server import text as reply
from tests.fakes.anthropic_web import cited, search_result, web_search
from tests.fakes.media import sample_png
from tests.files_support import push_album_photo
from tests.harness import FRIEND, OWNER
from tests.owner_rows import owner_rows
from tests.reminders.clock import FakeClock

GROUP = -100_500
BOT = "@memory_test_bot"
BAKERY = search_result("Town bakery: hours", "https://bakery.example.org/hours")
START = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)


async def kept_for(engine: AsyncEngine, owner: int) -> dict[str, int]:
    """Count the rows kept for the owner in every table of the live schema."""
    return await owner_rows(engine, owner)


def left_over(counts: dict[str, int]) -> dict[str, int]:
    """Return the tables that still hold rows of the owner, with how many."""
    return {name: count for name, count in counts.items() if count}


def _everything_written(counts: dict[str, int]) -> None:
    """Fail for a table of the owner's that arrange wrote nothing to: it would go untested."""
    empty = sorted(name for name, count in counts.items() if not count)
    assert empty == [], f"arrange() writes no row of the owner to {empty}: make it write one"


async def arrange(bot, clock: FakeClock, chat_id: int, **sender) -> None:
    """Give an owner a row in every table of theirs: _everything_written checks it did."""
    mention = f"{BOT} " if sender else ""

    async def say(words: str) -> None:
        await bot.say(chat_id, f"{mention}{words}", **sender)

    await bot.say(chat_id, "/timezone Berlin", **sender)
    bot.model.script(
        tool_use("add_to_memory", {"content": "Alice likes hiking in the Alps",
                                   "category": "preference", "subject": "Alice: hobby"}),
        reply("Saved."),
        tool_use("create_reminder", {"text": "water the plants", "in_duration": "P2D"}),
        reply("Set."),
        tool_use("create_reminder", {"text": "take the bread out", "in_duration": "PT20M"}),
        reply("Set."),
        reply("A nice photo."),
        Reply([*web_search("bakery hours", [BAKERY]), cited("It opens at 7.", BAKERY)]),
    )  # fmt: skip
    await say("remember that I like hiking in the Alps")
    await say("remind me in two days to water the plants")
    await say("in 20 minutes remind me to take the bread out")
    sent = len(bot.tg.messages_to(chat_id))
    clock.advance(timedelta(minutes=20))  # a reminder fired: its fire is recorded
    await bot.tg.wait_for_messages(chat_id, sent + 1)
    await clock.settled()
    bot.tg.push_photo(chat_id, sample_png(30, 30), caption=f"{BOT} look", **sender)
    await bot.idle()
    await say("when does the bakery open?")  # a web search: the day's count of web uses
    [item] = await bot.store.list_active(chat_id)
    await bot.store.update(chat_id, item.id, "Alice likes hiking in the Alps and the Dolomites")
    work = await bot.store.add(chat_id, "Works at a bakery in town", Category.CONTEXT, "work")
    # A tidy pass's batch, applied: its row and its changes are the owner's too.
    line = {"action": "update", "memory_id": work.id, "content": "Works at a bakery in town, 2025",
            "reason": "Dated", "versions": {work.id: work.version}}  # fmt: skip
    batches = bot.services.tidy.batches
    await batches.apply(
        chat_id, await batches.record(chat_id, BatchKind.TIDY, BatchState.PROPOSED, [line])
    )
    for command in ("/memory off", "/memory on", "/new"):  # a switch row, a stored block
        await bot.say(chat_id, command, **sender)
    bot.model.script(reply("Hi again."))
    await say("hi")
    if not sender:  # a memory question declined: a proposal, and a note for the model
        skiing = {"content": "Alice skis in winter", "category": "context", "subject": "skiing"}
        bot.model.script(tool_use("propose_memory", {"facts": [skiing]}), reply("Fun."))
        await say("I ski every winter")
        question = last_to(bot, chat_id)
        await press(bot, question, button(question, "No"))


def cached_files(bot) -> set[str]:
    """Return the names of the files in the bot's file cache."""
    folder = bot.settings.file_cache_dir
    return {path.name for path in folder.iterdir()} if folder.is_dir() else set()


@pytest.mark.engines
async def test_deleting_everything_after_an_export_keeps_nothing_but_others_data(start_bot):
    clock = FakeClock(START)
    bot = await start_bot(app_options={"reminder_clock": clock})
    engine = bot.services.engine
    await arrange(bot, clock, OWNER)
    friendly = {"content": "Is a friend of the owner", "category": "context", "subject": "owner"}
    bot.model.script(tool_use("add_to_memory", friendly), reply("Ok."))
    await bot.say(FRIEND, "remember that I am a friend of the owner")
    before = await kept_for(engine, OWNER)
    _everything_written(before)
    friend = await kept_for(engine, FRIEND)
    files = cached_files(bot)
    assert files, "the photo should be cached"

    await bot.say(OWNER, "/delete_my_data")
    question = last_to(bot, OWNER)
    assert "cannot be undone" in question["text"] and "2 memories" in question["text"]
    assert [label for label, _ in buttons(question)] == [
        "Export memories first", "Delete everything", "Cancel"
    ]  # fmt: skip
    documents = len(bot.tg.documents)
    await press(bot, question, button(question, "Export"))
    assert len(bot.tg.documents) == documents + 1
    assert bot.tg.documents[-1]["chat_id"] == OWNER
    # The question keeps its buttons, to answer once the export is saved.
    assert len(buttons(bot.tg.message(OWNER, question["message_id"]))) == 3
    assert (await kept_for(engine, OWNER)) == before

    await press(bot, question, button(question, "Delete"))
    done = bot.tg.message(OWNER, question["message_id"])
    assert "Deleted everything" in done["text"] and "cannot be undone" in done["text"]
    assert "2 memories" in done["text"] and "1 cached file" in done["text"]
    assert buttons(done) == []
    assert left_over(await kept_for(engine, OWNER)) == {}
    assert (await kept_for(engine, FRIEND)) == friend
    assert cached_files(bot) == set()
    assert await bot.services.memory_control.search(OWNER, "hiking") == []

    # A second tap on the question (sent before its buttons went) finds nothing left.
    await press(bot, question, button(question, "Delete"), as_is=True)
    assert "Already deleted" in last_answer(bot)["text"]
    # The next message starts afresh: no memories, no earlier turns.
    bot.model.script(reply("Hello!"))
    await bot.say(OWNER, "hello")
    assert "hiking" not in str(bot.model.last_request)


async def test_cancel_a_foreign_tap_an_old_question_and_bad_data_delete_nothing(harness):
    bot = harness
    engine = bot.services.engine
    await bot.store.add(OWNER, "Works at a bakery in town", Category.CONTEXT, "work")
    before = await kept_for(engine, OWNER)
    await bot.say(OWNER, "/delete_my_data")
    question = last_to(bot, OWNER)
    now = int(time.time())
    for data, alert in (
        (f"e:y:{FRIEND}:{now}", "Only the one who asked"),
        (f"e:y:{OWNER}:{now - 3600}", "expired"),
        ("e:y:0:1", "no longer works"),
        ("e:q:111:1", "no longer works"),
    ):
        await press(bot, question, data, as_is=True)
        assert alert in last_answer(bot)["text"], data
        assert last_answer(bot)["show_alert"] is True
    assert (await kept_for(engine, OWNER)) == before
    # The old question's message now says it expired; a fresh one is cancelled.
    assert "expired" in bot.tg.message(OWNER, question["message_id"])["text"]
    await bot.say(OWNER, "/delete_my_data")
    question = last_to(bot, OWNER)
    await press(bot, question, button(question, "Cancel"))
    assert "nothing was deleted" in bot.tg.message(OWNER, question["message_id"])["text"]
    assert (await kept_for(engine, OWNER)) == before


async def test_with_nothing_kept_there_is_nothing_to_confirm(harness):
    [answer] = await harness.say(OWNER, "/delete_my_data")
    assert "I keep nothing" in answer
    assert buttons(last_to(harness, OWNER)) == []


async def test_in_a_group_only_the_admin_who_asked_deletes_the_groups_data(start_bot):
    clock = FakeClock(START)
    bot = await start_bot(app_options={"reminder_clock": clock})
    engine = bot.services.engine
    group = {"user_id": OWNER, "chat_type": "supergroup"}
    await arrange(bot, clock, GROUP, **group)
    await bot.store.add(OWNER, "Private fact of the owner", Category.CONTEXT, "private")
    mine = await kept_for(engine, OWNER)
    before = await kept_for(engine, GROUP)
    bot.tg.set_member_status(GROUP, OWNER, "administrator")

    [refused] = await bot.say(GROUP, "/delete_my_data", user_id=FRIEND, chat_type="supergroup")
    assert "Only this group's admins" in refused
    bot.tg.fail_next("getChatMember", status=400)
    [unsure] = await bot.say(GROUP, "/delete_my_data", **group)
    assert "couldn't check that you're an admin" in unsure
    assert ("getChatMember", {"chat_id": GROUP, "user_id": FRIEND}) in bot.tg.calls

    await bot.say(GROUP, "/delete_my_data", **group)
    question = last_to(bot, GROUP)
    assert "this group" in question["text"] and "cannot be undone" in question["text"]
    await press(bot, question, button(question, "Delete"), FRIEND)
    assert "Only the one who asked" in last_answer(bot)["text"]
    bot.tg.set_member_status(GROUP, OWNER, "member")  # no longer an admin when it is pressed
    await press(bot, question, button(question, "Delete"), OWNER)
    assert "Only this group's admins" in last_answer(bot)["text"]
    assert (await kept_for(engine, GROUP)) == before

    bot.tg.set_member_status(GROUP, OWNER, "creator")
    await press(bot, question, button(question, "Delete"), OWNER)
    assert "Deleted everything I kept for this group" in last_to(bot, GROUP)["text"]
    assert left_over(await kept_for(engine, GROUP)) == {}
    assert (await kept_for(engine, OWNER)) == mine  # the admin's own data is theirs


@pytest.mark.engines
async def test_a_turn_in_progress_ends_before_the_deletion_and_writes_nothing_after(harness):
    bot = harness
    engine = bot.services.engine
    await bot.store.add(OWNER, "Works at a bakery in town", Category.CONTEXT, "work")
    await bot.say(OWNER, "/delete_my_data")
    question = last_to(bot, OWNER)
    requests = len(bot.model.requests)
    bot.model.hold()
    bot.model.script(
        tool_use("add_to_memory", {"content": "Likes rye bread best", "category": "preference",
                                   "subject": "bread"}),
        reply("Saved, and rye it is."),
    )  # fmt: skip
    bot.tg.push_message(OWNER, "remember that I like rye bread best")
    await bot.model.wait_for_requests(requests + 1)
    # Pressed while the model is still writing: the deletion waits for the turn to end.
    await press_without_waiting(bot, question, button(question, "Delete"))
    bot.model.release()
    await bot.idle()
    assert any("rye it is" in said for said in bot.tg.messages_to(OWNER))
    # Two memories deleted: the turn's save landed before the deletion, never after it.
    done = bot.tg.message(OWNER, question["message_id"])
    assert "Deleted everything" in done["text"] and "2 memories" in done["text"]
    assert left_over(await kept_for(engine, OWNER)) == {}


async def lane_holds(bot, count: int) -> None:
    """Wait until this many updates and turns are queued or running in the lanes."""
    processor = lanes(bot.running_app)
    async with asyncio.timeout(5):
        # No event says an update is queued in its lane: a turn of the event loop, no clock.
        while processor.unfinished < count:  # noqa: ASYNC110
            await asyncio.sleep(0)


@pytest.mark.engines
async def test_a_reminder_fired_just_before_the_deletion_stores_nothing_after_it(start_bot):
    clock = FakeClock(START)
    bot = await start_bot(app_options={"reminder_clock": clock})
    await bot.say(OWNER, "/timezone Berlin")
    bot.model.script(
        tool_use("create_reminder", {"text": "take the bread out", "in_duration": "PT20M"}),
        reply("Set."),
    )
    await bot.say(OWNER, "in 20 minutes remind me to take the bread out")
    await bot.say(OWNER, "/delete_my_data")
    question = last_to(bot, OWNER)
    # A turn in progress holds the lane; the press waits behind it, then the fired reminder.
    bot.model.hold()
    bot.model.script(reply("Sure."))
    bot.tg.push_message(OWNER, "one more thing")
    await bot.model.wait_for_requests(len(bot.model.requests) + 1)
    await press_without_waiting(bot, question, button(question, "Delete"))
    await lane_holds(bot, 2)
    sent = len(bot.tg.messages_to(OWNER))
    clock.advance(timedelta(minutes=20))
    await bot.tg.wait_for_messages(OWNER, sent + 1)
    assert "take the bread out" in bot.tg.messages_to(OWNER)[-1]
    await lane_holds(bot, 3)
    bot.model.release()
    await bot.idle()
    await clock.settled()
    assert "Deleted everything" in bot.tg.message(OWNER, question["message_id"])["text"]
    # The reminder was sent, but not stored as a turn of a new conversation afterwards.
    assert left_over(await kept_for(bot.services.engine, OWNER)) == {}


@pytest.mark.engines
async def test_a_check_in_taken_just_before_the_deletion_is_not_answered_after_it(start_bot):
    clock = FakeClock(START)
    bot = await start_bot(app_options={"reminder_clock": clock})
    await bot.say(OWNER, "/timezone Berlin")
    plan = {"text": "plan my week", "in_duration": "PT20M", "check_in": True}
    bot.model.script(tool_use("create_reminder", plan), reply("Set."))
    await bot.say(OWNER, "in 20 minutes help me plan my week")
    await bot.say(OWNER, "/delete_my_data")
    question = last_to(bot, OWNER)
    bot.model.hold()
    bot.model.script(reply("Sure."))
    bot.tg.push_message(OWNER, "one more thing")
    await bot.model.wait_for_requests(len(bot.model.requests) + 1)
    await press_without_waiting(bot, question, button(question, "Delete"))
    await lane_holds(bot, 2)
    clock.advance(timedelta(minutes=20))
    await lane_holds(bot, 3)  # the due loop took it: its answer waits behind the deletion
    requests = len(bot.model.requests)
    bot.model.release()
    await bot.idle()
    await clock.settled()
    assert "Deleted everything" in bot.tg.message(OWNER, question["message_id"])["text"]
    assert len(bot.model.requests) == requests  # the check-in was not answered
    assert left_over(await kept_for(bot.services.engine, OWNER)) == {}


async def press_without_waiting(bot, message: dict, data: str) -> None:
    """Press a button and wait only until the bot has fetched the press."""
    bot.tg.push_update(
        {
            "callback_query": {
                "id": f"early{data}",
                "from": {"id": OWNER, "is_bot": False, "first_name": "Alice"},
                "message": bot.tg.message(OWNER, message["message_id"]),
                "chat_instance": f"ci{OWNER}",
                "data": data,
            }
        }
    )
    await bot.tg.wait_for_fetch()


async def test_an_album_waiting_for_its_answer_is_dropped_with_the_data(harness, caplog):
    caplog.set_level(logging.ERROR)
    bot = harness
    await bot.store.add(OWNER, "Works at a bakery in town", Category.CONTEXT, "work")
    await bot.say(OWNER, "/delete_my_data")
    question = last_to(bot, OWNER)
    requests = len(bot.model.requests)
    for n in range(2):  # stored at once; answered after a quiet second
        push_album_photo(bot.tg, OWNER, sample_png(20 + n, 20), "album-gone")
    await bot.idle()
    # The chat's lane is busy (as with a turn in progress): the press waits in it, and the
    # album's answer, its quiet second over, waits behind the press.
    free = asyncio.Event()
    busy = asyncio.create_task(lanes(bot.running_app).run_exclusive(OWNER, free.wait()))
    await press_without_waiting(bot, question, button(question, "Delete"))
    await lane_holds(bot, 2)
    [album] = album_tasks()
    await lane_holds(bot, 3)  # the album's timer fired: its answer is queued after the press
    free.set()
    await busy
    await bot.idle()
    # Its done callbacks (the one that logs a failure) have run once it is gathered.
    await asyncio.gather(album, return_exceptions=True)
    assert "Deleted everything" in bot.tg.message(OWNER, question["message_id"])["text"]
    assert album.cancelled() and len(bot.model.requests) == requests  # dropped, not answered
    assert [r.getMessage() for r in caplog.records if r.levelname == "ERROR"] == []
    assert left_over(await kept_for(bot.services.engine, OWNER)) == {}


def album_tasks() -> list[asyncio.Task]:
    """Return the albums' answers still waiting for quiet or for their chat's lane."""
    return [t for t in asyncio.all_tasks() if t.get_name().startswith("album") and not t.done()]


@pytest.mark.engines
async def test_memory_off_sent_during_the_deletion_is_not_made_after_it(harness):
    bot = harness
    await bot.store.add(OWNER, "Works at a bakery in town", Category.CONTEXT, "work")
    await bot.say(OWNER, "/delete_my_data")
    question = last_to(bot, OWNER)
    # The deletion is done in the database and about to tell the chat when /memory off comes
    # (it skips the lane, to take effect at once).
    bot.tg.hold("answerCallbackQuery")
    answered = len(await bot.tg.wait_for_call("answerCallbackQuery", 0))
    await press_without_waiting(bot, question, button(question, "Delete"))
    await bot.tg.wait_for_call("answerCallbackQuery", answered + 1)
    sent = len(bot.tg.messages_to(OWNER))
    bot.tg.push_message(OWNER, "/memory off")
    await bot.tg.wait_for_fetch()
    eraser = bot.services.eraser
    async with asyncio.timeout(5):
        # No event says the command waits for the deletion: a turn of the loop, no clock.
        while eraser.waiting < 1 and len(bot.tg.messages_to(OWNER)) == sent:  # noqa: ASYNC110
            await asyncio.sleep(0)
    bot.tg.release("answerCallbackQuery")
    await bot.idle()
    assert "Deleted everything" in bot.tg.message(OWNER, question["message_id"])["text"]
    assert left_over(await kept_for(bot.services.engine, OWNER)) == {}
    assert "did not change it: memory is on" in bot.tg.messages_to(OWNER)[-1]
    # Sent after the deletion, it is made as always.
    [off] = await bot.say(OWNER, "/memory off")
    assert "off" in off.lower()
    assert (await kept_for(bot.services.engine, OWNER))["owner_settings"] == 1
