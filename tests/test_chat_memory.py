"""The user scenarios of a chat with memory, end to end through both fake servers."""

from itertools import pairwise

from sqlalchemy import select

from bot.conversations.models import Conversation, Turn
from memory.categories import Category
from tests.builders import tool_results
from tests.fakes.anthropic_server import error, text, tool_use
from tests.harness import FRIEND, OWNER, STRANGER, block_entries


async def memories(harness, owner=OWNER):
    return await harness.store.list_active(owner)


async def test_confirm_then_store(harness):
    harness.model.script(text("Noted! Should I remember that Alec is your boss?"))
    assert await harness.say(OWNER, "Alec is my boss by the way") == [
        "Noted! Should I remember that Alec is your boss?"
    ]
    assert await memories(harness) == []

    harness.model.script(
        tool_use(
            "add_to_memory",
            {"content": "Alec is the user's boss", "category": "person", "subject": "Alec"},
        ),
        text("Done, I'll remember that Alec is your boss."),
    )
    assert await harness.say(OWNER, "yes") == [
        "Done, I'll remember that Alec is your boss.",
        "Saved to memory: 'Alec is the user's boss'",
    ]

    [saved] = await memories(harness)
    assert (saved.content, saved.category, saved.subject) == (
        "Alec is the user's boss",
        Category.PERSON,
        "Alec",
    )
    # The model saw the whole exchange, then its tool result with the new id.
    second, third = harness.model.requests[1], harness.model.requests[2]
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    assert "Should I remember" in second["messages"][1]["content"][0]["text"]
    [result] = tool_results(third)
    assert result["content"] == f"Saved as {saved.id}" and not result.get("is_error")


async def test_explicit_request_is_stored_without_asking(harness):
    harness.model.script(
        tool_use(
            "add_to_memory",
            {
                "content": "The user prefers Friday due dates",
                "category": "preference",
                "subject": "due dates",
            },
        ),
        text("Got it: Fridays."),
    )
    assert await harness.say(OWNER, "Remember that I prefer Friday due dates") == [
        "Got it: Fridays.",
        "Saved to memory: 'The user prefers Friday due dates'",
    ]
    assert [m.content for m in await memories(harness)] == ["The user prefers Friday due dates"]
    assert len(harness.model.requests) == 2


async def test_decline_stores_nothing(harness):
    harness.model.script(text("Should I remember the deadline?"), text("Okay, I won't."))
    await harness.say(OWNER, "The deadline for this report is Tuesday")
    assert await harness.say(OWNER, "No, it's just for this task") == ["Okay, I won't."]
    assert await memories(harness) == []
    assert harness.model.remaining() == 0


def update_sarah(request: dict):
    """Answer like the model would: find Sarah's id in the memory block and update it."""
    [(memory_id, _, _)] = [
        e for e in block_entries(request["system"][1]["text"]) if e[1] == "Sarah"
    ]
    return tool_use(
        "update_memory", {"memory_id": memory_id, "content": "Sarah is on the Design team"}
    )


async def test_update_keeps_the_id_and_adds_a_version(harness):
    harness.model.script(
        tool_use(
            "add_to_memory",
            {"content": "Sarah is on the Platform team", "category": "person", "subject": "Sarah"},
        ),
        text("Saved."),
    )
    await harness.say(OWNER, "Remember that Sarah is on the Platform team")
    [before] = await memories(harness)
    await harness.say(OWNER, "/new")

    harness.model.script(update_sarah, text("Updated: Sarah is now on Design."))
    assert await harness.say(OWNER, "Sarah moved to the Design team") == [
        "Updated: Sarah is now on Design.",
        "Updated memory: 'Sarah is on the Platform team' → 'Sarah is on the Design team'",
    ]
    [after] = await memories(harness)
    assert (after.id, after.version, after.content) == (before.id, 2, "Sarah is on the Design team")
    [result] = tool_results(harness.model.requests[-1])
    assert "Sarah is on the Platform team" in result["content"]
    assert "Sarah is on the Design team" in result["content"]
    history = await harness.store.history(OWNER, after.id)
    assert [v.version_number for v in history] == [1, 2]


async def test_an_add_for_an_existing_subject_does_not_duplicate(harness):
    harness.model.script(
        tool_use(
            "add_to_memory",
            {"content": "Sarah is on Platform", "category": "person", "subject": "Sarah"},
        ),
        text("Saved."),
        tool_use(
            "add_to_memory",
            {"content": "Sarah is on Design", "category": "person", "subject": "Sarah"},
        ),
        text("Hmm."),
    )
    await harness.say(OWNER, "Remember Sarah is on Platform")
    await harness.say(OWNER, "Remember Sarah is on Design")
    [only] = await memories(harness)
    [result] = tool_results(harness.model.requests[-1])
    assert only.id in result["content"] and "update_memory" in result["content"]


async def test_recall_in_a_new_conversation_and_after_restart(harness):
    harness.model.script(
        tool_use(
            "add_to_memory",
            {"content": "Alec is the user's boss", "category": "person", "subject": "Alec"},
        ),
        text("Saved."),
    )
    await harness.say(OWNER, "Remember that Alec is my boss")
    assert "Alec" not in harness.system_block()  # not re-rendered mid-conversation

    await harness.say(OWNER, "/new")
    await harness.say(OWNER, "Who is my boss?")
    [(memory_id, subject, content)] = block_entries(harness.system_block())
    assert (subject, content) == ("Alec", "Alec is the user's boss")

    await harness.restart()
    await harness.say(OWNER, "/new")
    await harness.say(OWNER, "And who is my boss now?")
    assert block_entries(harness.system_block()) == [(memory_id, "Alec", "Alec is the user's boss")]


async def test_block_bytes_are_identical_across_turns_and_restart(harness):
    await harness.store.add(OWNER, "The user works on the Platform team", Category.CONTEXT)
    harness.model.script(
        text("one"),
        tool_use(
            "add_to_memory",
            {"content": "The user likes green tea", "category": "preference", "subject": "tea"},
        ),
        text("two"),
        text("three"),
    )
    await harness.say(OWNER, "first")
    await harness.say(OWNER, "second, remember I like green tea")
    await harness.restart()
    await harness.say(OWNER, "third")
    blocks = [r["system"][1]["text"] for r in harness.model.requests]
    statics = [r["system"][0]["text"] for r in harness.model.requests]
    assert len(blocks) == 4 and len(set(blocks)) == 1 and len(set(statics)) == 1
    assert "Platform team" in blocks[0] and "green tea" not in blocks[0]
    # One conversation throughout: each request extends the previous one's messages.
    for earlier, later in pairwise(harness.model.requests):
        prefix = earlier["messages"]
        assert len(later["messages"]) > len(prefix)
        for old, new in zip(prefix[:-1], later["messages"], strict=False):
            assert old == new


async def test_block_orders_memories_added_in_mixed_category_order(harness):
    harness.model.script(
        tool_use(
            "add_to_memory",
            {"content": "The user is launching Falcon", "category": "project", "subject": "Falcon"},
        ),
        tool_use(
            "add_to_memory",
            {"content": "Alec is the user's boss", "category": "person", "subject": "Alec"},
        ),
        tool_use(
            "add_to_memory",
            {
                "content": "The user prefers short answers",
                "category": "preference",
                "subject": "answer length",
            },
        ),
        tool_use(
            "add_to_memory",
            {"content": "The user lives in Berlin", "category": "context", "subject": "home"},
        ),
        tool_use(
            "add_to_memory",
            {"content": "Sarah is a designer", "category": "person", "subject": "Sarah"},
        ),
        text("All saved."),
    )
    await harness.say(OWNER, "Remember all of this: ...")
    await harness.say(OWNER, "/new")
    await harness.say(OWNER, "hello")
    block = harness.system_block()
    headings = [line for line in block.splitlines() if line.startswith("### ")]
    assert headings == ["### Context", "### Person", "### Preference", "### Project"]
    assert [e[2] for e in block_entries(block)] == [
        "The user lives in Berlin",
        "Alec is the user's boss",
        "Sarah is a designer",
        "The user prefers short answers",
        "The user is launching Falcon",
    ]


async def test_memory_command_lists_by_category_without_the_model(harness):
    store = harness.store
    alec = await store.add(OWNER, "Alec is the user's boss", Category.PERSON, "Alec")
    tea = await store.add(OWNER, "The user likes green tea & <b>cake</b>", Category.PREFERENCE)
    [listing] = await harness.say(OWNER, "/memory")
    assert f"[{alec.id}] Alec is the user's boss (Alec)" in listing
    assert f"[{tea.id}] The user likes green tea & <b>cake</b>" in listing
    assert listing.index("Person") < listing.index(alec.id) < listing.index("Preference")
    assert await harness.say(OWNER, "/memory list") == [listing]
    assert harness.model.requests == []


async def test_memory_delete_forgets_and_leaves_the_next_prompt(harness):
    store = harness.store
    alec = await store.add(OWNER, "Alec is the user's boss", Category.PERSON, "Alec")
    keep = await store.add(OWNER, "The user likes green tea", Category.PREFERENCE)
    await harness.say(OWNER, "hi")
    assert alec.id in harness.system_block()

    assert await harness.say(OWNER, f"/memory delete {alec.id}") == [
        "Deleted: 'Alec is the user's boss'"
    ]
    [listing] = await harness.say(OWNER, "/memory")
    assert alec.id not in listing and keep.id in listing
    await harness.say(OWNER, "who is my boss?")
    assert alec.id not in harness.system_block() and keep.id in harness.system_block()
    await harness.say(OWNER, "/new")
    await harness.say(OWNER, "hello again")
    assert alec.id not in harness.system_block()
    assert len(harness.model.requests) == 3


async def test_memory_delete_with_unknown_missing_or_malformed_id_changes_nothing(harness):
    store = harness.store
    kept = await store.add(OWNER, "The user likes green tea", Category.PREFERENCE)
    [unknown] = await harness.say(OWNER, "/memory delete zzzzzzzz")
    assert "no memory with id zzzzzzzz" in unknown
    [missing] = await harness.say(OWNER, "/memory delete")
    assert "/memory delete a1b2c3d4" in missing
    [odd] = await harness.say(OWNER, "/memory delete <script>&")
    assert "no memory with id <script>&" in odd
    [frob] = await harness.say(OWNER, "/memory frobnicate")
    assert frob.startswith("Usage:")
    [two] = await harness.say(OWNER, f"/memory delete {kept.id} {kept.id}")
    assert "/memory delete a1b2c3d4" in two
    [nine] = await harness.say(OWNER, f"/memory delete {kept.id}x")
    assert f"no memory with id {kept.id}x" in nine
    assert [m.id for m in await memories(harness)] == [kept.id]
    assert harness.model.requests == []


async def test_one_owner_never_sees_anothers_memories(harness):
    store = harness.store
    secret = await store.add(OWNER, "The user's project codename is Falcon", Category.PROJECT)
    [listing] = await harness.say(FRIEND, "/memory")
    assert secret.id not in listing and "Falcon" not in listing
    [answer] = await harness.say(FRIEND, f"/memory delete {secret.id}")
    assert "no memory with id" in answer

    harness.model.script(
        tool_use("update_memory", {"memory_id": secret.id, "content": "Codename leaked to Bob"}),
        text("I couldn't find that."),
    )
    await harness.say(FRIEND, "update that memory")
    [result] = tool_results(harness.model.requests[-1])
    assert result["is_error"] is True and "Falcon" not in result["content"]
    assert "Falcon" not in harness.system_block(0)
    assert [(m.id, m.version) for m in await memories(harness)] == [(secret.id, 1)]


async def test_a_stranger_never_reaches_the_model_or_memory(harness):
    [answer] = await harness.say(STRANGER, "hello")
    assert "private bot" in answer and str(STRANGER) in answer
    # Told once; what follows within ten minutes gets no answer at all.
    for message in ("/memory", "/memory delete abcdefgh", "/new", "/start"):
        assert await harness.say(STRANGER, message) == []
    assert harness.model.requests == []
    async with harness.services.engine.connect() as connection:
        assert (await connection.execute(select(Conversation))).all() == []
        assert (await connection.execute(select(Turn))).all() == []


async def test_user_message_is_stored_before_the_model_answers(harness):
    # The model never answers (the SDK retries, and a stream that breaks early is asked again
    # once): the message must be stored all the same.
    harness.model.script(*[error(529, "overloaded_error", "Overloaded")] * 12)
    await harness.say(OWNER, "keep this")
    async with harness.services.engine.connect() as connection:
        turns = (await connection.execute(select(Turn.role, Turn.content).order_by(Turn.id))).all()
    assert [role for role, _ in turns] == ["user"]
    assert turns[0][1][0]["text"].endswith("\nkeep this")
