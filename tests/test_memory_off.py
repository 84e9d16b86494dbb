"""/memory off and on: the state each owner's conversations see."""

from bot.agent.instructions import MEMORY_OFF_NOTE
from bot.reminders.tools import ReminderTools
from memory.categories import Category
from tests.fakes.anthropic_server import text
from tests.harness import FRIEND, OWNER


async def test_on_and_off_are_direct_changes_that_re_render_the_block(harness):
    store = harness.store
    harness.model.default = text("ok")
    await harness.say(OWNER, "hi")
    tea = await store.add(OWNER, "The user likes green tea", Category.PREFERENCE)
    await harness.say(OWNER, "still there?")
    assert tea.id not in harness.system_block()  # a write behind the block's back

    await harness.say(OWNER, "/memory off")
    await harness.say(OWNER, "/memory on")
    await harness.say(OWNER, "and now?")
    assert tea.id in harness.system_block()


async def test_the_control_service_tells_the_agent_whether_memory_is_on(harness):
    control = harness.services.memory_control
    assert (await control.overview(OWNER)).enabled is True
    await harness.say(OWNER, "/memory off")
    assert (await control.overview(OWNER)).enabled is False
    assert (await control.overview(FRIEND)).enabled is True


async def test_with_memory_off_the_model_gets_no_memory_block_and_no_tools(harness):
    store = harness.store
    tea = await store.add(OWNER, "The user likes green tea", Category.PREFERENCE)
    harness.model.default = text("ok")
    await harness.say(OWNER, "/memory off")
    await harness.say(OWNER, "what do I like?")
    request = harness.model.requests[-1]
    # Reminders and the web are not memory: only their tools are offered.
    reminders = [t["name"] for t in ReminderTools.definitions()]
    assert [t["name"] for t in request["tools"]] == [*reminders, "web_search", "web_fetch"]
    assert "Your Memory" not in str(request["system"]) and tea.id not in str(request)
    assert MEMORY_OFF_NOTE in str(request["system"])

    await harness.say(OWNER, "/memory on")
    await harness.say(OWNER, "and now?")
    request = harness.model.requests[-1]
    assert [t["name"] for t in request["tools"]] == [
        "add_to_memory",
        "update_memory",
        "forget_memory",
        "search_memory",
        "search_conversations",
        "propose_memory",
        *(t["name"] for t in ReminderTools.definitions()),
        "web_search",
        "web_fetch",
    ]
    assert tea.id in harness.system_block()


async def test_with_memory_off_the_model_is_told_conversations_are_still_kept(harness):
    harness.model.default = text("ok")
    await harness.say(OWNER, "/memory off")
    await harness.say(OWNER, "remember that I like tea")
    note = harness.model.requests[-1]["system"][-1]["text"]
    # Memory is off, but the conversation is stored as always: no promise that nothing is.
    assert note.startswith("Memory is off") and "Conversations are still kept" in note
    assert "nothing you are told is saved" not in note
