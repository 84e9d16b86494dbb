"""/delete_my_data end to end: real PTB and SDK against the fakes, on both engines."""

import asyncio
import time
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.telegram.processing import lanes
from memory.batch_values import BatchKind, BatchState
from memory.categories import Category
from memory.models import Base
from tests.buttons import button, buttons, last_answer, last_to, press
from tests.fakes.anthropic_server import text as reply
from tests.fakes.anthropic_server import tool_use
from tests.fakes.media import sample_png
from tests.harness import FRIEND, OWNER
from tests.reminders.clock import FakeClock

GROUP = -100_500
BOT = "@memory_test_bot"
# Each table's rows belong to an owner through a column of its own or a parent's.
OWNER_COLUMNS = ("owner_id", "chat_id")
# Not the owner's data: which process answers the chat now; the deletion holds it, and the
# lease keeper lets it go at its next tick (bot/agent/erasure.py); and which processes run.
PROCESS_TABLES = frozenset({"turn_leases", "bot_processes"})


def _owner_query(table, owner: int):
    """Return a count of the table's rows kept for the owner, or None if it cannot say."""
    for name in OWNER_COLUMNS:
        if name in table.c:
            return select(func.count()).select_from(table).where(table.c[name] == owner)
    for key in table.foreign_keys:
        parent = key.column.table
        if "owner_id" in parent.c:
            return (
                select(func.count())
                .select_from(table.join(parent, key.parent == key.column))
                .where(parent.c.owner_id == owner)
            )
    return None


async def kept_for(engine: AsyncEngine, owner: int) -> dict[str, int]:
    """Count each table's rows kept for the owner; fail for a table whose owner is unknown."""
    counts = {}
    async with engine.connect() as connection:
        for table in Base.metadata.sorted_tables:
            if table.name in PROCESS_TABLES:
                continue
            query = _owner_query(table, owner)
            assert query is not None, f"{table.name}: whose rows? /delete_my_data must know"
            counts[table.name] = await connection.scalar(query)
        if connection.dialect.name == "sqlite":
            # The memory index's rows carry their owner (on Postgres they cascade with it).
            found = text("SELECT count(*) FROM agent_memory_search WHERE owner_id = :owner")
            counts["agent_memory_search"] = await connection.scalar(found, {"owner": owner})
    return counts


async def arrange(bot, chat_id: int, **sender) -> None:
    """Give an owner some of everything: memories, versions, undo log, turns, a file, reminder."""
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
        reply("A nice photo."),
    )  # fmt: skip
    await say("remember that I like hiking in the Alps")
    await say("remind me in two days to water the plants")
    bot.tg.push_photo(chat_id, sample_png(30, 30), caption=f"{BOT} look", **sender)
    await bot.idle()
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
        bot.model.script(tool_use("propose_memory", skiing), reply("Fun."))
        await say("I ski every winter")
        question = last_to(bot, chat_id)
        await press(bot, question, button(question, "No"))


def cached_files(bot) -> set[str]:
    """Return the names of the files in the bot's file cache."""
    folder = bot.settings.file_cache_dir
    return {path.name for path in folder.iterdir()} if folder.is_dir() else set()


async def test_deleting_everything_after_an_export_keeps_nothing_but_others_data(harness):
    bot = harness
    engine = bot.services.engine
    await arrange(bot, OWNER)
    friendly = {"content": "Is a friend of the owner", "category": "context", "subject": "owner"}
    bot.model.script(tool_use("add_to_memory", friendly), reply("Ok."))
    await bot.say(FRIEND, "remember that I am a friend of the owner")
    before = await kept_for(engine, OWNER)
    assert all(before[name] for name in ("agent_memories", "agent_memory_versions",
               "agent_memory_changes", "conversations", "conversation_turns", "reminders",
               "owner_zones", "agent_memory_blocks", "owner_settings", "agent_memory_batches",
               "agent_memory_batch_changes", "memory_proposals",
               "pending_notes")), before  # fmt: skip
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
    assert set((await kept_for(engine, OWNER)).values()) == {0}
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


async def test_in_a_group_only_the_admin_who_asked_deletes_the_groups_data(harness):
    bot = harness
    engine = bot.services.engine
    group = {"user_id": OWNER, "chat_type": "supergroup"}
    await arrange(bot, GROUP, **group)
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
    assert set((await kept_for(engine, GROUP)).values()) == {0}
    assert (await kept_for(engine, OWNER)) == mine  # the admin's own data is theirs


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
    assert set((await kept_for(engine, OWNER)).values()) == {0}


async def lane_holds(bot, count: int) -> None:
    """Wait until this many updates and turns are queued or running in the lanes."""
    processor = lanes(bot.running_app)
    async with asyncio.timeout(5):
        # No event says an update is queued in its lane: a turn of the event loop, no clock.
        while processor.unfinished < count:  # noqa: ASYNC110
            await asyncio.sleep(0)


async def test_a_reminder_fired_just_before_the_deletion_stores_nothing_after_it(start_bot):
    clock = FakeClock(datetime(2026, 11, 24, 12, 0, tzinfo=UTC))
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
    assert set((await kept_for(bot.services.engine, OWNER)).values()) == {0}


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
