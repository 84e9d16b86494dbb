"""The memory tools: schemas from Pydantic, validation, dispatch, error results."""

import re

from memory.categories import Category
from memory.proposals import MAX_FACTS, ProposalStore
from memory.tools import MEMORY_TOOLS, ToolContext, run_tool, tool_definitions

ALICE, BOB = 111, 222


def test_definitions_are_fixed_and_self_contained():
    tools = tool_definitions(MEMORY_TOOLS)
    assert [t["name"] for t in tools] == [
        "add_to_memory",
        "update_memory",
        "forget_memory",
        "search_memory",
        "search_conversations",
        "propose_memory",
    ]
    add, update, forget, search, past, propose = (t["input_schema"] for t in tools)
    # A proposal's facts are adds the user answers (or an update of one, by its memory_id).
    fact = propose["properties"]["facts"]["items"]
    assert {k: v for k, v in fact["properties"].items() if k != "memory_id"} == add["properties"]
    assert fact["required"] == add["required"] and propose["required"] == ["facts"]
    assert propose["properties"]["facts"]["maxItems"] == MAX_FACTS == 5
    assert search["required"] == past["required"] == ["query"]
    assert search["properties"]["query"]["maxLength"] == 300
    assert add["required"] == ["content", "category", "subject"]
    assert add["properties"]["category"]["enum"] == ["context", "person", "preference", "project"]
    assert add["properties"]["content"]["minLength"] == 5
    assert add["properties"]["content"]["maxLength"] == 500
    assert update["required"] == ["memory_id", "content"]
    assert forget["required"] == ["memory_id"]
    assert "$defs" not in str(tools) and "$ref" not in str(tools)
    assert tools == tool_definitions(MEMORY_TOOLS)


async def test_add_returns_the_new_id(store, switch):
    outcome = await run_tool(
        ToolContext(store, switch, ALICE, 3),
        "add_to_memory",
        {
            "content": "  The user prefers Friday due dates ",
            "category": "preference",
            "subject": "due dates",
        },
        MEMORY_TOOLS,
    )
    assert not outcome.is_error
    memory_id = re.fullmatch(r"Saved as ([A-Za-z0-9]{8})", outcome.content).group(1)
    saved = await store.find(ALICE, memory_id)
    assert (saved.content, saved.category) == (
        "The user prefers Friday due dates",
        Category.PREFERENCE,
    )
    assert outcome.change.kind == "added"


async def test_add_with_existing_subject_points_to_update(store, switch):
    existing = await store.add(ALICE, "Sarah is on the Platform team", Category.PERSON, "Sarah")
    outcome = await run_tool(
        ToolContext(store, switch, ALICE),
        "add_to_memory",
        {"content": "Sarah is on the Design team", "category": "person", "subject": "sarah"},
        MEMORY_TOOLS,
    )
    assert existing.id in outcome.content and "update_memory" in outcome.content
    assert outcome.change is None
    assert len(await store.list_active(ALICE)) == 1


async def test_an_existing_subject_matches_in_any_case_and_script(store, switch):
    existing = await store.add(ALICE, "Émile is the user's cousin", Category.PERSON, "Émile")
    outcome = await run_tool(
        ToolContext(store, switch, ALICE),
        "add_to_memory",
        {"content": "Émile lives in Lyon", "category": "person", "subject": "ÉMILE"},
        MEMORY_TOOLS,
    )
    assert existing.id in outcome.content and outcome.change is None
    assert len(await store.list_active(ALICE)) == 1


async def test_update_reports_old_and_new(store, switch):
    existing = await store.add(ALICE, "Sarah is on the Platform team", Category.PERSON, "Sarah")
    outcome = await run_tool(
        ToolContext(store, switch, ALICE),
        "update_memory",
        {"memory_id": existing.id, "content": "Sarah is on the Design team"},
        MEMORY_TOOLS,
    )
    assert not outcome.is_error
    assert existing.id in outcome.content
    assert "Sarah is on the Platform team" in outcome.content
    assert "Sarah is on the Design team" in outcome.content
    assert (await store.find(ALICE, existing.id)).version == 2


async def test_bad_input_is_an_error_result_and_writes_nothing(store, switch):
    ctx = ToolContext(store, switch, ALICE)
    bad_calls = [
        ("add_to_memory", {"content": "hi", "category": "person"}),
        ("add_to_memory", {"content": "x" * 501, "category": "person"}),
        ("add_to_memory", {"content": "A valid fact", "category": "hobby"}),
        ("add_to_memory", {"content": "A valid fact", "category": "person", "subject": "s" * 201}),
        ("add_to_memory", {"category": "person"}),
        ("add_to_memory", "not an object"),
        ("add_to_memory", {"content": "A valid fact", "category": "person", "extra": 1}),
        ("update_memory", {"memory_id": "short", "content": "A valid fact"}),
        ("update_memory", {"memory_id": "abcdefgh", "content": "A valid fact"}),
        ("delete_everything", {}),
    ]
    for name, tool_input in bad_calls:
        outcome = await run_tool(ctx, name, tool_input, MEMORY_TOOLS)
        assert outcome.is_error, (name, tool_input)
        assert outcome.change is None
    assert await store.list_active(ALICE) == []


async def test_another_owners_id_is_unknown(store, switch):
    alices = await store.add(ALICE, "Alice's boss is Alec", Category.PERSON, "Alec")
    outcome = await run_tool(
        ToolContext(store, switch, BOB),
        "update_memory",
        {"memory_id": alices.id, "content": "Bob rewrote this"},
        MEMORY_TOOLS,
    )
    assert outcome.is_error and "No memory" in outcome.content
    assert alices.content not in outcome.content
    assert (await store.find(ALICE, alices.id)).version == 1


async def test_control_characters_in_a_tool_argument_are_a_tool_error_and_write_nothing(
    store, switch
):
    ctx = ToolContext(store, switch, ALICE)
    nul = {"content": "The user likes \x00tea", "category": "preference", "subject": "tea"}
    escape = {"content": "Alec is the boss", "category": "person", "subject": "A\x1b"}
    for arguments in (nul, escape):
        outcome = await run_tool(ctx, "add_to_memory", arguments, MEMORY_TOOLS)
        assert outcome.is_error and "control characters" in outcome.content, outcome.content
        assert outcome.change is None
    surrogate = {"content": "The user likes \ud800 tea", "category": "preference", "subject": "t"}
    assert (await run_tool(ctx, "add_to_memory", surrogate, MEMORY_TOOLS)).is_error
    item = await store.add(ALICE, "The user likes green tea", Category.PREFERENCE)
    update = {"memory_id": item.id, "content": "The user likes\x00 black tea"}
    assert (await run_tool(ctx, "update_memory", update, MEMORY_TOOLS)).is_error
    assert [(m.id, m.version) for m in await store.list_active(ALICE)] == [(item.id, 1)]
    # Tabs and newlines are plain text.
    fine = {"content": "The user likes:\n\tgreen tea", "category": "preference", "subject": "tea"}
    assert not (await run_tool(ctx, "add_to_memory", fine, MEMORY_TOOLS)).is_error


async def test_every_model_write_refuses_a_secret_but_keeps_where_one_is_kept(store, switch):
    proposals = ProposalStore(store.sessionmaker)
    ctx = ToolContext(store, switch, ALICE, 3, proposals=proposals, turn_id=1)
    kept = await store.add(ALICE, "The user banks with Nordbank", Category.CONTEXT, "bank")
    writes = [
        ("add_to_memory", {"content": "The user's bank PIN is 4821", "category": "context",
                           "subject": "bank PIN"}),
        ("propose_memory", {"facts": [{"content": "Wi-Fi password: hunter2",
                                       "category": "context", "subject": "wifi"}]}),
        ("update_memory", {"memory_id": kept.id,
                           "content": "The Nordbank API key is sk-live-AbCdEf0123456789xyz"}),
    ]  # fmt: skip
    for name, arguments in writes:
        outcome = await run_tool(ctx, name, arguments, MEMORY_TOOLS)
        assert outcome.is_error, name
        assert "secrets are never kept in memory" in outcome.content and "password manager" in (
            outcome.content
        )
    assert [(m.id, m.content) for m in await store.list_active(ALICE)] == [
        (kept.id, "The user banks with Nordbank")
    ]
    pointer = {"content": "The Wi-Fi password is on the router", "category": "context",
               "subject": "wifi"}  # fmt: skip
    pointed = {"facts": [pointer]}
    assert not (await run_tool(ctx, "propose_memory", pointed, MEMORY_TOOLS)).is_error
    manager = {"content": "The user's password manager is 1Password", "category": "preference",
               "subject": "password manager"}  # fmt: skip
    assert not (await run_tool(ctx, "add_to_memory", manager, MEMORY_TOOLS)).is_error
