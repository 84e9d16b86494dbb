"""The /memory command family end to end: the real Application against the fake servers."""

import json
import re
from datetime import UTC, datetime

import pytest

from memory.categories import Category
from memory.tokens import count_tokens, encoding
from tests.buttons import buttons, last_to
from tests.harness import FRIEND, OWNER

DATE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")


async def test_memory_shows_count_budget_state_and_a_delete_button_each(harness):
    store = harness.store
    alec = await store.add(OWNER, "Alec is the user's boss", Category.PERSON, "Alec")
    tea = await store.add(OWNER, "The user likes green tea", Category.PREFERENCE)
    [listing] = await harness.say(OWNER, "/memory")
    tokens = count_tokens((await harness.store.block(OWNER)).text)
    assert listing.startswith(
        f"What I remember: 2 memories, all in the prompt ({tokens} of 2,000 tokens)\n"
    )
    assert "Memory is on." in listing
    assert f"[{alec.id}] Alec is the user's boss (Alec)" in listing
    assert buttons(last_to(harness, OWNER)) == [
        ("Delete: Alec", f"m:d:{alec.id}:1"),
        ("📌 Pin", f"m:+:{alec.id}:1"),
        ("Delete: The user likes green tea", f"m:d:{tea.id}:1"),
        ("📌 Pin", f"m:+:{tea.id}:1"),
    ]
    assert harness.model.requests == []


async def test_empty_memory_says_so_with_its_state(harness):
    [listing] = await harness.say(OWNER, "/memory")
    assert "don't remember anything yet" in listing and "Memory is on." in listing
    assert buttons(last_to(harness, OWNER)) == []


async def test_history_lists_every_version_with_dates_newest_last(harness):
    store = harness.store
    item = await store.add(OWNER, "Sarah is on the Platform team", Category.PERSON, "Sarah")
    await store.update(OWNER, item.id, "Sarah is on the Design team")
    await store.update(OWNER, item.id, "Sarah leads the Design team")
    [history] = await harness.say(OWNER, f"/memory history {item.id}")
    lines = history.splitlines()
    assert lines[0] == f"History of [{item.id}] (Sarah) (3 versions, newest last)"
    versions = [line for line in lines if line.startswith("v")]
    assert [v.split(" · ")[0] for v in versions] == ["v1", "v2", "v3"]
    assert all(DATE.search(v) for v in versions)
    assert history.index("Platform") < history.index("on the Design") < history.index("leads")

    await harness.say(OWNER, f"/memory delete {item.id}")
    [deleted] = await harness.say(OWNER, f"/memory history {item.id}")
    assert "(3 versions, deleted, newest last)" in deleted


async def test_history_with_a_bad_id_changes_nothing_and_says_so(harness):
    theirs = await harness.store.add(FRIEND, "Friend's secret project X", Category.PROJECT)
    [unknown] = await harness.say(OWNER, "/memory history zzzzzzzz")
    assert unknown == "I have no memory with id zzzzzzzz. /memory shows the ids."
    [other] = await harness.say(OWNER, f"/memory history {theirs.id}")
    assert "no memory with id" in other and "secret" not in other
    [missing] = await harness.say(OWNER, "/memory history")
    assert "/memory history a1b2c3d4" in missing
    [odd] = await harness.say(OWNER, "/memory history <b>&")
    assert "no memory with id <b>&" in odd


@pytest.mark.engines
async def test_search_ranks_active_matches_with_ids(harness):
    store = harness.store
    alec = await store.add(OWNER, "Alec is the user's boss at TechCorp", Category.PERSON, "Alec")
    sarah = await store.add(OWNER, "Sarah reports to Alec", Category.PERSON, "Sarah")
    await store.add(OWNER, "The user likes green tea", Category.PREFERENCE)
    gone = await store.add(OWNER, "Alec used to work at Initech", Category.CONTEXT)
    await store.delete(OWNER, gone.id)
    await store.add(FRIEND, "Alec is the friend's brother", Category.PERSON, "Alec")

    [found] = await harness.say(OWNER, "/memory search ALEC boss")
    lines = found.splitlines()
    assert lines[0] == "Matching 'ALEC boss': 2 memories"
    assert lines[1:] == [
        f"[{alec.id}] Alec is the user's boss at TechCorp (Alec)",
        f"[{sarah.id}] Sarah reports to Alec (Sarah)",
    ]
    [nothing] = await harness.say(OWNER, "/memory search <coffee>")
    assert nothing == "No memory matches '<coffee>'. /memory lists them all."
    [missing] = await harness.say(OWNER, "/memory search")
    assert "/memory search Alec boss" in missing


@pytest.mark.engines
async def test_a_search_with_more_matches_than_shown_says_how_many_more(harness):
    for n in range(25):
        await harness.store.add(
            OWNER, f"The user's project number {n} uses green tea", Category.PROJECT
        )
    [found] = await harness.say(OWNER, "/memory search green tea")
    lines = found.splitlines()
    assert lines[0] == "Matching 'green tea': 25 memories"
    assert len(lines) == 1 + 20 + 1 and lines[-1] == "… and 5 more."


async def test_restore_brings_a_memory_back_into_the_next_turn(harness):
    store = harness.store
    item = await store.add(OWNER, "Alec is the user's boss", Category.PERSON, "Alec")
    await harness.say(OWNER, f"/memory delete {item.id}")
    await harness.say(OWNER, "hi")
    assert item.id not in harness.system_block()

    [listing] = await harness.say(OWNER, "/memory restore")
    assert "Recently deleted" in listing and f"[{item.id}] Alec is the user's boss" in listing
    assert await harness.say(OWNER, f"/memory restore {item.id}") == [
        "Restored: 'Alec is the user's boss'"
    ]
    await harness.say(OWNER, "who is my boss?")
    assert f'[id:{item.id}] "Alec": "Alec is the user\'s boss"' in harness.system_block()
    [again] = await harness.say(OWNER, f"/memory restore {item.id}")
    assert again == f"[{item.id}] is not deleted; /memory lists it."


async def test_restore_with_a_bad_id_changes_nothing(harness):
    store = harness.store
    theirs = await store.add(FRIEND, "Friend's secret project X", Category.PROJECT)
    await store.delete(FRIEND, theirs.id)
    [other] = await harness.say(OWNER, f"/memory restore {theirs.id}")
    assert other == f"I have no memory with id {theirs.id}. /memory shows the ids."
    [unknown] = await harness.say(OWNER, "/memory restore <i>nope")
    assert "no memory with id <i>nope" in unknown
    [nothing_deleted] = await harness.say(OWNER, "/memory restore")
    assert "Nothing is deleted right now." in nothing_deleted
    assert await store.list_active(FRIEND) == []


async def test_export_sends_every_memory_with_all_versions_as_json(harness):
    store = harness.store
    sarah = await store.add(OWNER, "Sarah is on the Platform team", Category.PERSON, "Sarah")
    await store.update(OWNER, sarah.id, "Sarah is on the Design team")
    tea = await store.add(OWNER, "The user likes green tea", Category.PREFERENCE)
    await store.delete(OWNER, tea.id)
    await store.add(FRIEND, "Friend's secret project X", Category.PROJECT)

    assert await harness.say(OWNER, "/memory export") == []  # a document, not a message
    [upload] = harness.tg.documents
    assert upload["chat_id"] == OWNER
    assert re.fullmatch(r"memories-\d{4}-\d\d-\d\d\.json", upload["filename"])
    assert upload["result"]["document"]["mime_type"] == "application/json"
    assert upload["result"]["caption"] == "2 memories with every version (1 of them deleted)."
    document = json.loads(upload["data"])
    assert document["owner_id"] == OWNER and document["memory_enabled"] is True
    datetime.fromisoformat(document["exported_at"]).astimezone(UTC)
    by_id = {m["id"]: m for m in document["memories"]}
    assert set(by_id) == {sarah.id, tea.id}
    assert [(v["version"], v["content"]) for v in by_id[sarah.id]["versions"]] == [
        (1, "Sarah is on the Platform team"),
        (2, "Sarah is on the Design team"),
    ]
    assert by_id[tea.id]["deleted_at"] is not None and by_id[sarah.id]["deleted_at"] is None
    assert "secret" not in upload["data"].decode()


async def test_export_with_nothing_saved_says_so(harness):
    assert await harness.say(OWNER, "/memory export") == [
        "There's nothing to export: I have never saved a memory here."
    ]
    assert harness.tg.documents == []


async def test_off_keeps_memories_shows_the_state_and_on_resumes(harness):
    item = await harness.store.add(OWNER, "The user likes green tea", Category.PREFERENCE)
    assert await harness.say(OWNER, "/memory off") == [
        "Memory is off. I won't use or save memories until you send /memory on. "
        "I keep the 1 memory I have, and our conversations are still kept."
    ]
    assert await harness.say(OWNER, "/memory off") == [
        "Memory is already off. /memory on turns it back on."
    ]
    [listing] = await harness.say(OWNER, "/memory")
    assert "Memory is off: I don't use or save memories." in listing and item.id in listing
    [friends] = await harness.say(FRIEND, "/memory")
    assert "Memory is on." in friends

    assert await harness.say(OWNER, "/memory ON") == [
        "Memory is on again: I use what I remember from your next message."
    ]
    assert await harness.say(OWNER, "/memory on") == ["Memory is already on."]
    [listing] = await harness.say(OWNER, "/memory")
    assert "Memory is on." in listing


async def test_unknown_subcommands_and_extra_words_get_the_usage(harness):
    for command in ("/memory frobnicate", "/memory list everything", "/memory clear now"):
        [usage] = await harness.say(OWNER, command)
        assert usage.startswith("Usage:") and "/memory search <words>" in usage
    [usage] = await harness.say(OWNER, "/memory delete a1b2c3d4 extra")
    assert "/memory delete a1b2c3d4" in usage


async def test_help_explains_each_command_with_an_example(harness):
    [help_text] = await harness.say(OWNER, "/help")
    for example in (
        "/memory delete a1b2c3d4",
        "/memory search Alec boss",
        "/memory history a1b2c3d4",
        "/memory restore a1b2c3d4",
        "/memory clear",
        "/memory export",
        "/memory off",
        "/memory on",
        "/new",
    ):
        assert example in help_text


async def test_the_command_menu_is_registered_on_start(harness):
    [commands] = harness.tg.commands.values()
    assert [c["command"] for c in commands] == [
        "start", "help", "new", "memory", "reminders", "timezone", "delete_my_data"
    ]  # fmt: skip
    assert all(1 <= len(c["description"]) <= 256 for c in commands)


async def test_the_tokenizer_is_ready_before_the_first_message(start_bot):
    encoding.cache_clear()
    await start_bot()
    assert encoding.cache_info().currsize == 1


async def test_a_failing_command_menu_does_not_stop_the_bot(harness):
    harness.tg.fail_next("setMyCommands", status=400)
    await harness.restart()
    [listing] = await harness.say(OWNER, "/memory")
    assert "don't remember anything" in listing
