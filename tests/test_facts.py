"""One fact never overwrites another: subjects, the same-subject refusal, group members' facts."""

from memory.categories import Category
from tests.fakes.anthropic_server import text, tool_use
from tests.harness import FRIEND, OWNER

GROUP = -100777


def group_say(harness, words, user_id, first_name):
    return harness.say(GROUP, words, user_id=user_id, chat_type="supergroup", first_name=first_name)


def add(content: str, category: str, subject: str | None = None):
    arguments = {"content": content, "category": category}
    if subject is not None:
        arguments["subject"] = subject
    return tool_use("add_to_memory", arguments)


def results(harness) -> list[dict]:
    """Return every tool result the model was sent, in order."""
    return [
        block
        for request in harness.model.requests
        for block in request["messages"][-1]["content"]
        if block.get("type") == "tool_result"
    ]


async def test_a_save_without_a_subject_is_refused_and_saves_nothing(harness):
    harness.model.script(
        add("The user prefers Friday due dates", "preference"), text("I could not save it.")
    )
    await harness.say(OWNER, "Remember that I prefer Friday due dates")
    [result] = results(harness)
    assert result.get("is_error") and "subject" in result["content"]
    assert await harness.store.list_active(OWNER) == []


async def test_two_group_members_on_one_topic_keep_a_memory_each(harness):
    harness.model.script(add("Ann is vegetarian", "preference", "Ann: diet"), text("Noted, Ann."))
    await group_say(harness, "@memory_test_bot remember that I'm vegetarian", OWNER, "Ann")
    [saved] = results(harness)
    assert saved["content"].startswith("Saved as ")

    harness.model.script(
        add("Bob is vegan", "preference", "Ann: diet"),
        add("Bob is vegan", "preference", "Bob: diet"),
        text("Noted, Bob."),
    )
    await group_say(harness, "@memory_test_bot remember that I'm vegan", FRIEND, "Bob")
    _, others, bobs = results(harness)
    # Ann's memory is Ann's: the refusal offers no update of it, only another subject.
    assert "It is Ann's memory" in others["content"] and "update_memory" not in others["content"]
    assert bobs["content"].startswith("Saved as ")
    kept = {(m.subject, m.content, m.version) for m in await harness.store.list_active(GROUP)}
    assert kept == {("Ann: diet", "Ann is vegetarian", 1), ("Bob: diet", "Bob is vegan", 1)}


async def test_a_second_fact_about_a_known_person_is_added_not_swapped(harness):
    boss = await harness.store.add(OWNER, "Alec is the user's boss", Category.PERSON, "Alec")
    both = "Alec is the user's boss; his birthday is 3 May"
    harness.model.script(
        add("Alec's birthday is 3 May", "person", "Alec"),
        tool_use("update_memory", {"memory_id": boss.id, "content": both}),
        text("Noted: Alec's birthday is 3 May."),
    )
    await harness.say(OWNER, "Remember that Alec's birthday is 3 May")
    refusal, updated = results(harness)
    # The refusal tells the three cases apart instead of "update with the full new content".
    assert "keeps the old fact and adds the new one" in refusal["content"]
    assert "more specific subject" in refusal["content"]
    assert "changed or was wrong" in refusal["content"]
    assert updated["content"].startswith(f"Updated {boss.id} (version 2)")
    [memory] = await harness.store.list_active(OWNER)
    assert (memory.content, memory.version) == (both, 2)


async def test_in_a_private_chat_a_topic_needs_no_name(harness):
    harness.model.script(add("The user is vegetarian", "preference", "diet"), text("Noted."))
    await harness.say(OWNER, "Remember that I'm vegetarian")
    [memory] = await harness.store.list_active(OWNER)
    assert memory.subject == "diet"


async def test_a_group_person_or_project_subject_needs_no_prefix(harness):
    harness.model.script(
        add("Alec is Ann's boss", "person", "Alec"),
        add("The team ships on Thursdays", "project", "shipping"),
        text("Noted."),
    )
    await group_say(
        harness, "@memory_test_bot remember Alec is my boss, we ship Thursdays", OWNER, "Ann"
    )
    assert {m.subject for m in await harness.store.list_active(GROUP)} == {"Alec", "shipping"}
