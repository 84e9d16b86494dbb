"""The memory budget, and the tools' guard for memory off: tool results, notices, /memory."""

import pytest

from bot.settings import SettingsError, load_settings
from memory.budget import MemoryFull, memory_tokens, new_memory_tokens, usage_of
from memory.categories import Category
from memory.store import MemoryStore
from memory.tools import ToolContext, run_tool, tool_definitions
from tests.fakes.anthropic_server import text, tool_use, tool_uses
from tests.harness import OWNER

BUDGET = 100
ALICE = 111
FACT = "The user fact number {:02d} is worth keeping"
# Longer than any FACT line, so it never fits in the room a full memory has left.
TEA = "The user likes green tea in the morning, jasmine tea after lunch and mint tea at night"


@pytest.fixture
async def small_harness(start_bot):
    return await start_bot(memory_token_budget=BUDGET)


async def fill(store: MemoryStore, owner: int) -> list:
    """Add memories until one more of the same size would not fit."""
    items = []
    while True:
        usage = usage_of(items, BUDGET)
        n = len(items)
        if not usage.fits(new_memory_tokens(FACT.format(n), None)):
            return items
        items.append(await store.add(owner, FACT.format(n), Category.CONTEXT))


def test_the_budget_setting_defaults_to_2000_and_is_validated(monkeypatch):
    monkeypatch.delenv("MEMORY_TOKEN_BUDGET", raising=False)  # a developer's own setting
    base = {"telegram_bot_token": "1:x", "anthropic_api_key": "k", "_env_file": None}
    assert load_settings(**base).memory_token_budget == 2000
    monkeypatch.setenv("MEMORY_TOKEN_BUDGET", "5000")
    assert load_settings(**base).memory_token_budget == 5000
    monkeypatch.setenv("MEMORY_TOKEN_BUDGET", "lots")
    with pytest.raises(SettingsError, match="MEMORY_TOKEN_BUDGET"):
        load_settings(**base)
    monkeypatch.setenv("MEMORY_TOKEN_BUDGET", "10")
    with pytest.raises(SettingsError, match="MEMORY_TOKEN_BUDGET"):
        load_settings(**base)


async def test_an_add_over_the_budget_is_refused_with_advice_to_consolidate(store, switch):
    items = await fill(store, ALICE)
    assert len(items) >= 3
    ctx = ToolContext(store, switch, ALICE, token_budget=BUDGET)
    outcome = await run_tool(ctx, "add_to_memory", {"content": TEA, "category": "context"})
    assert outcome.is_error and "memory is full" in outcome.content
    assert "update_memory" in outcome.content
    assert outcome.change is None
    assert outcome.refusal == MemoryFull(TEA, usage_of(items, BUDGET))
    assert len(await store.list_active(ALICE)) == len(items)

    # Updates stay possible, so the model can consolidate; then the add fits.
    merged = await run_tool(
        ctx, "update_memory", {"memory_id": items[0].id, "content": "Facts 0 and 1 merged"}
    )
    assert not merged.is_error
    for item in items[1:3]:
        assert not (await run_tool(ctx, "forget_memory", {"memory_id": item.id})).is_error
    added = await run_tool(ctx, "add_to_memory", {"content": TEA, "category": "context"})
    assert not added.is_error and added.change.kind == "added"


async def test_the_budget_is_per_owner(store, switch):
    await fill(store, ALICE)
    outcome = await run_tool(
        ToolContext(store, switch, 222, token_budget=BUDGET),
        "add_to_memory",
        {"content": "Bob likes jazz music", "category": "preference"},
    )
    assert not outcome.is_error


async def test_with_memory_off_every_tool_refuses_and_writes_nothing(store, switch):
    item = await store.add(ALICE, "The user likes green tea", Category.PREFERENCE)
    await switch.turn(ALICE, False)
    ctx = ToolContext(store, switch, ALICE)
    calls = [
        ("add_to_memory", {"content": "The user likes coffee", "category": "preference"}),
        ("update_memory", {"memory_id": item.id, "content": "The user likes coffee"}),
        ("forget_memory", {"memory_id": item.id}),
    ]
    for name, arguments in calls:
        outcome = await run_tool(ctx, name, arguments)
        assert outcome.is_error and "/memory off" in outcome.content and outcome.change is None
    assert [(m.id, m.version) for m in await store.list_active(ALICE)] == [(item.id, 1)]
    await switch.turn(ALICE, True)
    assert not (await run_tool(ctx, *calls[2])).is_error


async def test_memory_shows_tokens_of_the_budget(small_harness):
    store = small_harness.store
    items = await fill(store, OWNER)
    [listing] = await small_harness.say(OWNER, "/memory")
    tokens = sum(memory_tokens(item) for item in items)
    assert f"{len(items)} memories, about {tokens} of {BUDGET} tokens" in listing


async def test_the_user_is_told_when_memory_is_full(small_harness):
    await fill(small_harness.store, OWNER)
    small_harness.model.script(
        tool_use("add_to_memory", {"content": TEA, "category": "preference"}),
        text("My memory is full, sorry."),
    )
    [reply, notice] = await small_harness.say(OWNER, "remember I like green tea")
    assert reply == "My memory is full, sorry."
    assert notice.startswith("My memory is full (about ")
    assert f"of {BUDGET} tokens), so I couldn't save: '{TEA}'" in notice
    last = small_harness.tg.sent[-1]["result"]
    assert "reply_markup" not in last  # nothing to undo
    [result] = [
        b
        for b in small_harness.model.requests[-1]["messages"][-1]["content"]
        if b.get("type") == "tool_result"
    ]
    assert result["is_error"] is True and "update_memory" in result["content"]


async def test_a_consolidation_in_the_same_turn_hides_the_refusal(small_harness):
    store = small_harness.store
    items = await fill(store, OWNER)
    tea = {"content": TEA, "category": "preference"}
    small_harness.model.script(
        tool_use("add_to_memory", tea),
        tool_uses(
            [
                ("update_memory", {"memory_id": items[0].id, "content": "Facts 0 and 1 merged"}),
                ("forget_memory", {"memory_id": items[1].id}),
                ("forget_memory", {"memory_id": items[2].id}),
            ]
        ),
        tool_use("add_to_memory", tea),
        text("Merged two memories to make room, and saved it."),
    )
    [_, notice] = await small_harness.say(OWNER, "remember I like green tea")
    assert "full" not in notice
    assert notice.splitlines()[-1] == f"4. Saved to memory: '{TEA}'"


def test_tool_definitions_are_cached_but_each_caller_gets_its_own_copy():
    first = tool_definitions()
    assert [t["name"] for t in first] == ["add_to_memory", "update_memory", "forget_memory"]
    first[0]["input_schema"]["properties"].clear()
    first[-1]["cache_control"] = {"type": "ephemeral"}
    second = tool_definitions()
    assert second[0]["input_schema"]["properties"] and "cache_control" not in second[-1]
