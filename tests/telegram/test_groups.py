"""Group chats: answered only when addressed, with the group's own memory."""

from memory.categories import Category
from tests.fakes.anthropic_server import text, tool_use
from tests.harness import FRIEND, OWNER, STRANGER

GROUP = -100123


def group_say(harness, text_, user_id=OWNER, first_name="Alice", **kwargs):
    return harness.say(
        GROUP, text_, user_id=user_id, chat_type="supergroup", first_name=first_name, **kwargs
    )


async def test_group_messages_are_answered_only_when_addressed(harness):
    harness.model.default = text("at your service")
    assert await group_say(harness, "just chatting among ourselves") == []
    assert harness.model.requests == []

    assert await group_say(harness, "@memory_test_bot what's up?") == ["at your service"]
    bot_message_id = harness.tg.sent[-1]["result"]["message_id"]
    assert await group_say(harness, "and you?", reply_to_message=bot_message_id) == [
        "at your service"
    ]
    assert await group_say(harness, "@someone_else hi") == []
    assert len(harness.model.requests) == 2
    # The speaker's name travels in the newest message, never in the system prompt.
    assert "from Alice" in harness.model.requests[-1]["messages"][-1]["content"][-1]["text"]
    assert "Alice" not in str(harness.model.requests[-1]["system"])


async def test_group_memory_is_the_groups_own(harness):
    store = harness.store
    await store.add(OWNER, "Alice's private note about her health", Category.CONTEXT)
    harness.model.script(
        tool_use(
            "add_to_memory",
            {
                "content": "The team ships on Thursdays",
                "category": "project",
                "subject": "shipping",
            },
        ),
        text("Saved for the group."),
    )
    await group_say(harness, "@memory_test_bot remember we ship on Thursdays")
    assert [m.content for m in await store.list_active(GROUP)] == ["The team ships on Thursdays"]
    assert [m.content for m in await store.list_active(OWNER)] == [
        "Alice's private note about her health"
    ]
    assert "private note" not in harness.system_block()
    [listing] = await group_say(harness, "/memory", user_id=FRIEND, first_name="Bob")
    assert "Thursdays" in listing and "private note" not in listing


async def test_strangers_in_a_group_cannot_trigger_the_bot(harness):
    assert await group_say(harness, "random talk", user_id=STRANGER, first_name="Eve") == []
    [answer] = await group_say(harness, "@memory_test_bot hi", user_id=STRANGER, first_name="Eve")
    assert "private bot" in answer
    # Told once per chat in ten minutes: the next command gets nothing.
    assert await group_say(harness, "/memory", user_id=STRANGER, first_name="Eve") == []
    assert harness.model.requests == []
