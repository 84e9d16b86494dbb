"""Change notices with Undo after the agent writes memory, and the forget_memory tool."""

import re

from memory.categories import Category
from tests.builders import tool_results
from tests.buttons import button, buttons, last_answer, last_to, press
from tests.fakes.anthropic_server import text, tool_use, tool_uses
from tests.harness import FRIEND, OWNER, STRANGER, block_entries


def call_on(subject: str, name: str, **arguments):
    """Answer like the model: find the memory with this subject in the block, call a tool on it."""

    def reply(request: dict):
        [memory_id] = [m for m, s, _ in block_entries(request["system"][1]["text"]) if s == subject]
        return tool_use(name, {"memory_id": memory_id, **arguments})

    return reply


async def green_tea_notice(harness) -> dict:
    """Have the model save that the user likes green tea; return the change notice."""
    harness.model.script(
        tool_use(
            "add_to_memory",
            {"content": "The user likes green tea", "category": "preference", "subject": "tea"},
        ),
        text("Noted."),
    )
    await harness.say(OWNER, "remember I like green tea")
    return last_to(harness, OWNER)


async def test_an_add_gets_a_notice_whose_undo_deletes_it_once(harness):
    harness.model.script(
        tool_use(
            "add_to_memory",
            {"content": "The user likes green tea", "category": "preference", "subject": "tea"},
        ),
        text("Noted."),
    )
    assert await harness.say(OWNER, "remember I like green tea") == [
        "Noted.",
        "Saved to memory: 'The user likes green tea'",
    ]
    notice = last_to(harness, OWNER)
    [(label, data)] = buttons(notice)
    assert label == "Undo" and re.fullmatch(r"u:\d+", data)

    assert await press(harness, notice, data) == [
        "Undone: I no longer remember 'The user likes green tea'."
    ]
    assert last_answer(harness)["text"] == "Undone."
    edited = harness.tg.message(OWNER, notice["message_id"])
    assert edited["text"] == notice["text"] and buttons(edited) == []
    assert await harness.store.list_active(OWNER) == []

    # Undo works once: a second press (from a stale client) says so and changes nothing.
    assert await press(harness, notice, data) == []
    answer = last_answer(harness)
    assert answer["text"] == "Already undone." and answer["show_alert"] is True
    assert await harness.store.list_active(OWNER) == []


async def test_undo_of_an_update_restores_the_old_content_as_a_new_version(harness):
    sarah = await harness.store.add(
        OWNER, "Sarah is on the Platform team", Category.PERSON, "Sarah"
    )
    harness.model.script(
        call_on("Sarah", "update_memory", content="Sarah is on the Design team"),
        text("Updated."),
        text("She is on Platform."),
    )
    [_, notice_text] = await harness.say(OWNER, "Sarah moved to Design")
    assert notice_text == (
        "Updated memory: 'Sarah is on the Platform team' → 'Sarah is on the Design team'"
    )
    notice = last_to(harness, OWNER)
    assert await press(harness, notice, button(notice, "Undo")) == [
        "Undone: back to 'Sarah is on the Platform team'."
    ]
    history = await harness.store.history(OWNER, sarah.id)
    assert [v.content for v in history] == [
        "Sarah is on the Platform team",
        "Sarah is on the Design team",
        "Sarah is on the Platform team",
    ]
    # A direct change: the next turn's block has the restored content.
    await harness.say(OWNER, "where is Sarah?")
    assert '"Sarah": "Sarah is on the Platform team"' in harness.system_block()


async def test_forget_tool_soft_deletes_with_an_undo_notice(harness):
    alec = await harness.store.add(OWNER, "Alec is the user's boss", Category.PERSON, "Alec")
    harness.model.script(
        call_on("Alec", "forget_memory"),
        text("Done, I forgot that."),
        text("You haven't told me."),
        text("Alec is your boss."),
    )
    assert await harness.say(OWNER, "forget that Alec is my boss") == [
        "Done, I forgot that.",
        "Forgot: 'Alec is the user's boss'",
    ]
    [result] = tool_results(harness.model.requests[1])
    assert result["content"].startswith(f"Forgot {alec.id}") and not result.get("is_error")
    assert await harness.store.list_active(OWNER) == []
    assert (await harness.store.find(OWNER, alec.id)).deleted_at is not None  # soft

    # The agent's own write does not re-render the block mid-conversation.
    await harness.say(OWNER, "who is my boss?")
    assert alec.id in harness.system_block()

    notice = [m for m in harness.tg.sent if m["result"]["text"].startswith("Forgot:")][-1]
    assert await press(harness, notice["result"], button(notice["result"], "Undo")) == [
        "Undone: I remember 'Alec is the user's boss' again."
    ]
    assert [m.id for m in await harness.store.list_active(OWNER)] == [alec.id]
    await harness.say(OWNER, "and now?")
    assert f'[id:{alec.id}] "Alec": ' in harness.system_block()


async def test_forget_with_an_unknown_id_is_a_tool_error_and_no_notice(harness):
    theirs = await harness.store.add(FRIEND, "Friend's secret project X", Category.PROJECT)
    harness.model.script(
        tool_use("forget_memory", {"memory_id": theirs.id}),
        text("I couldn't find that."),
    )
    assert await harness.say(OWNER, "forget the project") == ["I couldn't find that."]
    [result] = tool_results(harness.model.requests[-1])
    assert result["is_error"] is True and "secret" not in result["content"]
    assert [m.id for m in await harness.store.list_active(FRIEND)] == [theirs.id]


async def test_several_changes_get_numbered_undo_buttons(harness):
    harness.model.script(
        tool_uses(
            [
                (
                    "add_to_memory",
                    {
                        "content": "The user likes green tea",
                        "category": "preference",
                        "subject": "tea",
                    },
                ),
                (
                    "add_to_memory",
                    {
                        "content": "The user lives in Berlin",
                        "category": "context",
                        "subject": "home",
                    },
                ),
                (
                    "add_to_memory",
                    {
                        "content": "The user runs on Sundays",
                        "category": "context",
                        "subject": "running",
                    },
                ),
            ]
        ),
        text("Saved all three."),
    )
    [_, notice_text] = await harness.say(OWNER, "remember these three things")
    assert notice_text.splitlines() == [
        "1. Saved to memory: 'The user likes green tea'",
        "2. Saved to memory: 'The user lives in Berlin'",
        "3. Saved to memory: 'The user runs on Sundays'",
    ]
    notice = last_to(harness, OWNER)
    assert [label for label, _ in buttons(notice)] == ["Undo 1", "Undo 2", "Undo 3"]
    assert await press(harness, notice, button(notice, "Undo 2")) == [
        "Undone: I no longer remember 'The user lives in Berlin'."
    ]
    edited = harness.tg.message(OWNER, notice["message_id"])
    assert [label for label, _ in buttons(edited)] == ["Undo 1", "Undo 3"]
    assert [m.content for m in await harness.store.list_active(OWNER)] == [
        "The user runs on Sundays",
        "The user likes green tea",
    ]


async def test_undo_survives_a_restart(harness):
    notice = await green_tea_notice(harness)
    await harness.restart()
    assert await press(harness, notice, button(notice, "Undo")) == [
        "Undone: I no longer remember 'The user likes green tea'."
    ]


async def test_undo_after_a_later_change_refuses_and_keeps_the_button(harness):
    sarah = await harness.store.add(
        OWNER, "Sarah is on the Platform team", Category.PERSON, "Sarah"
    )
    harness.model.script(
        call_on("Sarah", "update_memory", content="Sarah is on the Design team"), text("Updated.")
    )
    await harness.say(OWNER, "Sarah moved to Design")
    notice = last_to(harness, OWNER)
    await harness.store.update(OWNER, sarah.id, "Sarah is on the Sales team")

    assert await press(harness, notice, button(notice, "Undo")) == []
    answer = last_answer(harness)
    assert "changed since" in answer["text"] and answer["show_alert"] is True
    assert (await harness.store.find(OWNER, sarah.id)).content == "Sarah is on the Sales team"
    assert buttons(harness.tg.message(OWNER, notice["message_id"])) == buttons(notice)


async def test_undo_of_a_memory_deleted_meanwhile_says_so(harness):
    notice = await green_tea_notice(harness)
    [item] = await harness.store.list_active(OWNER)
    await harness.say(OWNER, f"/memory delete {item.id}")
    assert await press(harness, notice, button(notice, "Undo")) == []
    assert last_answer(harness)["text"] == (
        "That memory was deleted since, so there is nothing to undo."
    )


async def test_another_owners_undo_and_a_strangers_press_change_nothing(harness):
    notice = await green_tea_notice(harness)
    data = button(notice, "Undo")

    # The same data on a message in FRIEND's own chat: another owner's change is not found.
    await harness.say(FRIEND, "/memory")
    friends_message = last_to(harness, FRIEND)
    assert await press(harness, friends_message, data) == []
    assert last_answer(harness)["text"] == "This button no longer works."

    assert await press(harness, notice, data, user_id=STRANGER) == []
    assert last_answer(harness)["text"] == "This is a private bot."
    assert [m.content for m in await harness.store.list_active(OWNER)] == [
        "The user likes green tea"
    ]
    assert buttons(harness.tg.message(OWNER, notice["message_id"])) == buttons(notice)


async def test_no_notice_when_nothing_changed(harness):
    harness.model.script(text("Just chatting."))
    assert await harness.say(OWNER, "hello") == ["Just chatting."]


async def test_restore_and_undo_of_a_forget_keep_to_memory_max_items(start_bot):
    harness = await start_bot(memory_max_items=2)
    alec = await harness.store.add(OWNER, "Alec is the user's boss", Category.PERSON, "Alec")
    harness.model.script(call_on("Alec", "forget_memory"), text("Done, I forgot that."))
    await harness.say(OWNER, "forget that Alec is my boss")
    notice = last_to(harness, OWNER)
    # Memory fills up again after the forget.
    await harness.store.add(OWNER, "The user likes green tea", Category.PREFERENCE)
    await harness.store.add(OWNER, "The user lives in Lisbon", Category.CONTEXT)

    await press(harness, notice, button(notice, "Undo"))
    assert "Memory is full" in last_answer(harness)["text"]
    [restore] = await harness.say(OWNER, f"/memory restore {alec.id}")
    assert restore.startswith("Memory is full (2 memories")
    assert len(await harness.store.list_active(OWNER)) == 2
    assert (await harness.store.find(OWNER, alec.id)).deleted_at is not None
