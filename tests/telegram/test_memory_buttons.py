"""The buttons of /memory pages and of /memory clear, end to end, including bad presses."""

from memory.categories import Category
from tests.buttons import button, buttons, last_answer, last_to, press
from tests.fakes.anthropic_server import text
from tests.fakes.telegram_server import utf16_len
from tests.harness import FRIEND, OWNER, STRANGER

GROUP = -100777


async def add_many(harness, count: int, owner: int = OWNER):
    store = harness.store
    return [
        await store.add(owner, f"The user fact number {n:02d}", Category.CONTEXT)
        for n in range(count)
    ]


async def test_delete_button_answers_like_the_command_and_refreshes_the_page(harness):
    store = harness.store
    alec = await store.add(OWNER, "Alec is the user's boss", Category.PERSON, "Alec")
    tea = await store.add(OWNER, "The user likes green tea", Category.PREFERENCE)
    harness.model.default = text("ok")
    await harness.say(OWNER, "hi")
    assert alec.id in harness.system_block()

    await harness.say(OWNER, "/memory")
    page = last_to(harness, OWNER)
    assert await press(harness, page, button(page, "Delete: Alec")) == [
        "Deleted: 'Alec is the user's boss'"
    ]
    assert last_answer(harness).get("show_alert") is not True
    refreshed = harness.tg.message(OWNER, page["message_id"])
    assert alec.id not in refreshed["text"] and tea.id in refreshed["text"]
    assert "1 memory, all in the prompt" in refreshed["text"]
    assert buttons(refreshed) == [
        ("Delete: The user likes green tea", f"m:d:{tea.id}:1"),
        ("📌 Pin", f"m:+:{tea.id}:1"),
    ]
    assert [m.id for m in await store.list_active(OWNER)] == [tea.id]

    await harness.say(OWNER, "who is my boss?")
    assert alec.id not in harness.system_block() and tea.id in harness.system_block()


async def test_prev_and_next_walk_every_page_in_one_message(harness):
    items = await add_many(harness, 23)
    await harness.say(OWNER, "/memory")
    page = last_to(harness, OWNER)
    seen = []
    for number in (1, 2, 3):
        current = harness.tg.message(OWNER, page["message_id"])
        assert f"Page {number} of 3" in current["text"]
        assert utf16_len(current["text"]) <= 4096
        deletes = [data for label, data in buttons(current) if label.startswith("Delete")]
        seen += [data.split(":")[2] for data in deletes]
        assert all(data.endswith(f":{number}") for data in deletes)
        labels = [label for label, _ in buttons(current) if label.endswith(("»", "Prev"))]
        assert labels == {1: ["Next »"], 2: ["« Prev", "Next »"], 3: ["« Prev"]}[number]
        if number < 3:
            assert await press(harness, current, button(current, "Next")) == []
    assert seen == [item.id for item in items]  # every memory once, in block order

    current = harness.tg.message(OWNER, page["message_id"])
    await press(harness, current, button(current, "« Prev"))
    assert "Page 2 of 3" in harness.tg.message(OWNER, page["message_id"])["text"]
    assert len([m for m in harness.tg.sent if m["chat_id"] == OWNER]) == 1  # edited, not resent


async def test_deleting_the_last_memory_of_the_last_page_shows_the_new_last_page(harness):
    items = await add_many(harness, 21)
    await harness.say(OWNER, "/memory")
    page = last_to(harness, OWNER)
    await press(harness, page, button(page, "Next"))
    await press(harness, harness.tg.message(OWNER, page["message_id"]), "m:p:3")
    current = harness.tg.message(OWNER, page["message_id"])
    assert "Page 3 of 3" in current["text"] and items[20].id in current["text"]
    await press(harness, current, f"m:d:{items[20].id}:3")
    current = harness.tg.message(OWNER, page["message_id"])
    assert "Page 2 of 2" in current["text"] and items[19].id in current["text"]


async def test_pressing_the_button_of_a_deleted_memory_says_it_is_gone(harness):
    store = harness.store
    alec = await store.add(OWNER, "Alec is the user's boss", Category.PERSON, "Alec")
    tea = await store.add(OWNER, "The user likes green tea", Category.PREFERENCE)
    await harness.say(OWNER, "/memory")
    page = last_to(harness, OWNER)
    await harness.say(OWNER, f"/memory delete {alec.id}")

    assert await press(harness, page, f"m:d:{alec.id}:1") == []
    answer = last_answer(harness)
    assert answer["text"] == "That memory is already gone." and answer["show_alert"] is True
    refreshed = harness.tg.message(OWNER, page["message_id"])
    assert alec.id not in refreshed["text"] and tea.id in refreshed["text"]
    # Pressing it again on the refreshed page changes nothing and still answers.
    assert await press(harness, refreshed, f"m:d:{alec.id}:1") == []
    assert last_answer(harness)["text"] == "That memory is already gone."
    assert [m.id for m in await store.list_active(OWNER)] == [tea.id]


async def test_a_button_with_another_owners_id_deletes_nothing(harness):
    theirs = await harness.store.add(FRIEND, "Friend's secret project X", Category.PROJECT)
    await add_many(harness, 1)
    await harness.say(OWNER, "/memory")
    page = last_to(harness, OWNER)
    assert await press(harness, page, f"m:d:{theirs.id}:1") == []
    assert last_answer(harness)["text"] == "That memory is already gone."
    assert [m.id for m in await harness.store.list_active(FRIEND)] == [theirs.id]


async def test_a_stranger_pressing_a_button_is_told_the_bot_is_private(harness):
    [item] = await add_many(harness, 1)
    await harness.say(OWNER, "/memory")
    page = last_to(harness, OWNER)
    assert await press(harness, page, button(page, "Delete"), user_id=STRANGER) == []
    answer = last_answer(harness)
    assert answer["text"] == "This is a private bot." and answer["show_alert"] is True
    assert [m.id for m in await harness.store.list_active(OWNER)] == [item.id]
    assert harness.tg.message(OWNER, page["message_id"]) == page  # untouched


async def test_malformed_button_data_is_answered_and_changes_nothing(harness):
    [item] = await add_many(harness, 1)
    await harness.say(OWNER, "/memory")
    page = last_to(harness, OWNER)
    for data in ("m:d:short:1", "m:p:0", "m:c:maybe", "u:abc", "m:zzz"):
        assert await press(harness, page, data) == []
        assert last_answer(harness)["text"] == "This button no longer works."
    assert [m.id for m in await harness.store.list_active(OWNER)] == [item.id]
    assert harness.tg.message(OWNER, page["message_id"]) == page


async def test_clear_asks_first_and_cancel_keeps_everything(harness):
    items = await add_many(harness, 3)
    [question] = await harness.say(OWNER, "/memory clear")
    assert question.startswith("Forget all 3 memories?")
    message = last_to(harness, OWNER)
    assert buttons(message) == [("Yes, forget 3 memories", "m:c:y"), ("Cancel", "m:c:n")]
    assert await press(harness, message, "m:c:n") == []
    edited = harness.tg.message(OWNER, message["message_id"])
    assert edited["text"] == "Cancelled. I still remember everything."
    assert buttons(edited) == []
    assert [m.id for m in await harness.store.list_active(OWNER)] == [i.id for i in items]


async def test_clear_confirmed_forgets_everything_and_says_how_many(harness):
    items = await add_many(harness, 3)
    theirs = await add_many(harness, 1, owner=FRIEND)
    harness.model.default = text("ok")
    await harness.say(OWNER, "hi")
    assert items[0].id in harness.system_block()

    await harness.say(OWNER, "/memory clear")
    message = last_to(harness, OWNER)
    await press(harness, message, "m:c:y")
    edited = harness.tg.message(OWNER, message["message_id"])
    assert edited["text"] == "Forgot all 3 memories. /memory restore <id> brings one back."
    assert buttons(edited) == []
    assert await harness.store.list_active(OWNER) == []
    assert [m.id for m in await harness.store.list_active(FRIEND)] == [theirs[0].id]

    await harness.say(OWNER, "what do you know?")
    assert items[0].id not in harness.system_block()
    # A second press of the same (stale) Yes finds nothing left.
    await press(harness, message, "m:c:y")
    assert harness.tg.message(OWNER, message["message_id"])["text"] == (
        "There was nothing left to forget."
    )
    assert await harness.say(OWNER, "/memory clear") == [
        "There's nothing to clear: I don't remember anything."
    ]
    assert await harness.say(OWNER, f"/memory restore {items[1].id}") == [
        "Restored: 'The user fact number 01'"
    ]


async def test_a_stranger_cannot_confirm_a_clear(harness):
    await add_many(harness, 2)
    await harness.say(OWNER, "/memory clear")
    message = last_to(harness, OWNER)
    await press(harness, message, "m:c:y", user_id=STRANGER)
    assert last_answer(harness)["text"] == "This is a private bot."
    assert len(await harness.store.list_active(OWNER)) == 2


async def test_in_a_group_any_allowed_member_manages_the_groups_memory(harness):
    [group_item] = await add_many(harness, 1, owner=GROUP)
    [own] = await add_many(harness, 1, owner=OWNER)
    harness.tg.push_message(GROUP, "/memory", user_id=OWNER, chat_type="supergroup")
    await harness.idle()
    page = last_to(harness, GROUP)
    assert group_item.id in page["text"] and own.id not in page["text"]
    assert await press(harness, page, f"m:d:{group_item.id}:1", user_id=FRIEND) == [
        "Deleted: 'The user fact number 00'"
    ]
    assert await harness.store.list_active(GROUP) == []
    assert [m.id for m in await harness.store.list_active(OWNER)] == [own.id]


async def test_a_press_on_an_inline_message_is_answered_as_stale(harness):
    await add_many(harness, 1)
    harness.tg.push_update(
        {
            "callback_query": {
                "id": "cq-inline",
                "from": {"id": OWNER, "is_bot": False, "first_name": "Alice"},
                "inline_message_id": "AAQ-inline",
                "chat_instance": "ci",
                "data": "m:p:1",
            }
        }
    )
    await harness.idle()
    assert last_answer(harness)["text"] == "This button no longer works."
    assert harness.tg.sent == []


async def test_a_page_too_old_to_edit_is_sent_anew(harness):
    items = await add_many(harness, 12)
    await harness.say(OWNER, "/memory")
    page = last_to(harness, OWNER)
    # Telegram describes a message it no longer lets the bot touch with date 0.
    old = {"chat": page["chat"], "message_id": page["message_id"], "date": 0}
    assert len(await press(harness, old, "m:p:2", as_is=True)) == 1
    fresh = last_to(harness, OWNER)
    assert fresh["message_id"] != page["message_id"] and items[11].id in fresh["text"]
    assert harness.tg.message(OWNER, page["message_id"]) == page
