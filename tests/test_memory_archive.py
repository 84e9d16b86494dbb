"""Memory without a ceiling: the block always fits, the rest is archived and searchable."""

import re
from datetime import UTC, datetime, timedelta

import pytest

from bot.conversations.retention import FORGET_BATCH
from bot.conversations.search import ConversationSearch
from bot.conversations.snapshot import ChatThread
from bot.conversations.store import ConversationStore
from bot.settings import SettingsError, load_settings
from memory.categories import Category
from memory.db import create_sessionmaker
from memory.tokens import count_tokens
from memory.tools import MEMORY_TOOLS, ToolContext, run_tool, tool_definitions
from tests.fakes.anthropic_server import text, tool_use
from tests.harness import FRIEND, OWNER, block_entries

BUDGET = 300
ALICE, BOB = 111, 222
TOOL_NAMES = [
    "add_to_memory",
    "update_memory",
    "forget_memory",
    "search_memory",
    "search_conversations",
    "propose_memory",
]


def fact(n: int) -> str:
    return f"The user's fact number {n:03d} is about the {['lake', 'hill', 'city'][n % 3]}"


async def run(ctx, name, **arguments):
    return await run_tool(ctx, name, arguments, MEMORY_TOOLS)


def test_the_settings_default_and_are_validated(monkeypatch):
    for name in ("MEMORY_TOKEN_BUDGET", "MEMORY_MAX_ITEMS", "CONVERSATION_RETENTION_DAYS"):
        monkeypatch.delenv(name, raising=False)  # a developer's own settings
    base = {"telegram_bot_token": "1:x", "anthropic_api_key": "k", "_env_file": None}
    settings = load_settings(**base)
    assert (settings.memory_token_budget, settings.memory_max_items) == (2000, 10_000)
    assert settings.conversation_retention_days is None
    monkeypatch.setenv("CONVERSATION_RETENTION_DAYS", "")
    assert load_settings(**base).conversation_retention_days is None
    for name, bad in (("MEMORY_TOKEN_BUDGET", "120"), ("CONVERSATION_RETENTION_DAYS", "0")):
        monkeypatch.setenv(name, bad)
        with pytest.raises(SettingsError, match=name):
            load_settings(**base)
        monkeypatch.delenv(name)


def test_the_tools_come_in_a_fixed_order_and_each_caller_gets_a_copy():
    first = tool_definitions(MEMORY_TOOLS)
    assert [t["name"] for t in first] == TOOL_NAMES
    first[0]["input_schema"]["properties"].clear()
    assert tool_definitions(MEMORY_TOOLS)[0]["input_schema"]["properties"]


async def test_saving_far_more_than_the_budget_refuses_nothing_and_the_block_fits(
    sessionmaker, switch
):
    from memory.store import MemoryStore

    store = MemoryStore(sessionmaker, BUDGET)
    ctx = ToolContext(store, switch, ALICE)
    archived_seen = []
    for n in range(40):
        outcome = await run(
            ctx, "add_to_memory", content=fact(n), category="context", subject=f"fact {n}"
        )
        assert not outcome.is_error, outcome.content
        archived_seen += [item.content for item in outcome.change.archived]
    block = (await store.block(ALICE)).text
    assert count_tokens(block) <= BUDGET
    in_block = [content for _, _, content in block_entries(block)]
    assert 5 <= len(in_block) < 40
    # The newest are in the block; what a save pushed out was the oldest there.
    assert set(in_block) == {fact(n) for n in range(40 - len(in_block), 40)}
    assert archived_seen == [fact(n) for n in range(40 - len(in_block))]
    assert f"You have {40 - len(in_block)} more in your archive" in block
    assert await store.count_active(ALICE) == 40


async def test_an_archived_memory_is_found_by_search_and_updated_by_id(sessionmaker, switch):
    from memory.store import MemoryStore

    store = MemoryStore(sessionmaker, BUDGET)
    ctx = ToolContext(store, switch, ALICE)
    lake = await store.add(ALICE, "The user's cabin is by Lake Bled", Category.CONTEXT, "cabin")
    for n in range(30):
        await store.add(ALICE, fact(n), Category.CONTEXT)
    assert lake.id not in (await store.block(ALICE)).memory_ids
    found = await run(ctx, "search_memory", query="cabin")
    assert found.content == '1 memories match "cabin", best first:'
    [result] = found.found
    assert result.memory_id == lake.id and result.content == "The user's cabin is by Lake Bled"
    assert result.title.startswith(f'[id:{lake.id}] context, subject "cabin", changed ')
    assert result.title.endswith(", archived")
    updated = await run(
        ctx, "update_memory", memory_id=lake.id, content="The user's cabin is by Lake Bohinj"
    )
    assert not updated.is_error
    # Changed just now, so it is among the newest and back in the block.
    assert "Lake Bohinj" in (await store.block(ALICE)).text
    same = await run(ctx, "add_to_memory", content="Another cabin", category="context",
                     subject="CABIN")  # fmt: skip
    assert lake.id in same.content and same.change is None


async def test_pinned_memories_stay_in_the_block_whatever_is_newer(sessionmaker):
    from memory.store import MemoryStore

    store = MemoryStore(sessionmaker, BUDGET)
    old = await store.add(ALICE, "The user's passport name is Alice Liddell", Category.CONTEXT)
    await store.pin(ALICE, old.id, True)
    for n in range(30):
        await store.add(ALICE, fact(n), Category.CONTEXT)
    assert old.id in (await store.block(ALICE)).memory_ids
    await store.pin(ALICE, old.id, False)
    assert old.id not in (await store.block(ALICE)).memory_ids


async def test_the_cap_refuses_with_a_clear_answer(store, switch):
    ctx = ToolContext(store, switch, ALICE, memory_limit=3)
    for n in range(3):
        assert not (
            await run(
                ctx, "add_to_memory", content=fact(n), category="context", subject=f"fact {n}"
            )
        ).is_error
    refused = await run(ctx, "add_to_memory", content=fact(9), category="context", subject="fact 9")
    assert refused.is_error and "the most kept" in refused.content
    assert (refused.refusal.count, refused.refusal.limit) == (3, 3)
    other = ToolContext(store, switch, BOB, memory_limit=3)
    assert not (
        await run(other, "add_to_memory", content=fact(9), category="context", subject="fact 9")
    ).is_error


async def test_with_memory_off_every_tool_refuses_and_reads_or_writes_nothing(store, switch):
    item = await store.add(ALICE, "The user likes green tea", Category.PREFERENCE)
    await switch.turn(ALICE, False)
    ctx = ToolContext(store, switch, ALICE)
    calls = [
        (
            "add_to_memory",
            {"content": "The user likes coffee", "category": "preference", "subject": "coffee"},
        ),
        ("update_memory", {"memory_id": item.id, "content": "The user likes coffee"}),
        ("forget_memory", {"memory_id": item.id}),
        ("search_memory", {"query": "tea"}),
        ("search_conversations", {"query": "tea"}),
    ]
    for name, arguments in calls:
        outcome = await run_tool(ctx, name, arguments, MEMORY_TOOLS)
        assert outcome.is_error and "/memory off" in outcome.content and outcome.change is None
        assert "green tea" not in outcome.content
    assert [(m.id, m.version) for m in await store.list_active(ALICE)] == [(item.id, 1)]


@pytest.fixture
async def small_harness(start_bot):
    return await start_bot(memory_token_budget=BUDGET)


async def test_the_user_sees_the_tiers_and_pins_from_the_list(small_harness):
    store = small_harness.store
    items = [await store.add(OWNER, fact(n), Category.CONTEXT) for n in range(30)]
    [listing] = await small_harness.say(OWNER, "/memory")
    block = (await store.block(OWNER)).text
    shown = len(block_entries(block))
    assert re.search(
        rf"30 memories, {shown} in the prompt \({count_tokens(block)} of 300 tokens\), the rest "
        "archived",
        listing,
    )
    assert "· archived" in listing
    [answer] = await small_harness.say(OWNER, f"/memory pin {items[0].id}")
    assert answer.startswith("Pinned: ")
    assert items[0].id in (await store.block(OWNER)).memory_ids
    [answer] = await small_harness.say(OWNER, f"/memory unpin {items[0].id}")
    assert answer.startswith("Unpinned: ")
    [answer] = await small_harness.say(OWNER, "/memory pin zzzzzzzz")
    assert "no memory with id" in answer


async def test_a_save_that_archives_says_so_in_the_notice(small_harness):
    store = small_harness.store
    for n in range(12):
        await store.add(OWNER, fact(n), Category.CONTEXT)
    long = "The user keeps a long list of favourite hiking routes in the Julian Alps " * 3
    small_harness.model.script(
        tool_use(
            "add_to_memory",
            {"content": long.strip()[:480], "category": "context", "subject": "long"},
        ),
        text("Saved."),
    )
    before = {content for _, _, content in block_entries((await store.block(OWNER)).text)}
    [_, notice] = await small_harness.say(OWNER, "remember my hiking routes")
    after = {content for _, _, content in block_entries((await store.block(OWNER)).text)}
    left = sorted(before - after)
    assert left and notice.splitlines()[0].startswith("Saved to memory: ")
    assert notice.splitlines()[1:] == [
        f"Moved to the archive, still searchable: '{content}'" for content in left
    ]


async def test_memory_off_hides_the_search_tools(harness):
    harness.model.default = text("ok")
    await harness.say(OWNER, "hello")
    assert harness.model.tool_names()[: len(TOOL_NAMES)] == TOOL_NAMES
    await harness.say(OWNER, "/memory off")
    await harness.say(OWNER, "hello again")
    assert not set(harness.model.tool_names()) & set(TOOL_NAMES)


@pytest.mark.engines
async def test_a_phrase_from_three_conversations_ago_is_found_with_its_date(harness):
    harness.model.default = text("ok")
    await harness.say(OWNER, "The lease on the flat ends in March, remind me to negotiate")
    for words in ("new topic", "another one", "and a third"):
        await harness.say(OWNER, "/new")
        await harness.say(OWNER, words)
    await harness.say(FRIEND, "My lease ends in March too")  # another owner's words
    harness.model.script(tool_use("search_conversations", {"query": "lease"}), text("March."))
    await harness.say(OWNER, "what did we say about the lease?")
    [result] = [
        b for b in harness.model.requests[-1]["messages"][-1]["content"]
        if b.get("type") == "tool_result"
    ]  # fmt: skip
    content = result["content"]
    assert content.startswith('1 earlier messages match "lease", best matches first:')
    assert re.search(r"- \d{4}-\d\d-\d\d \d\d:\d\d, the user said: \".*lease on the flat", content)
    assert "too" not in content


@pytest.mark.engines
async def test_conversations_quiet_longer_than_the_retention_are_deleted_but_memories_stay(
    start_bot,
):
    bot = await start_bot(conversation_retention_days=30)
    bot.model.default = text("ok")
    await bot.say(OWNER, "The lease ends in March")
    await bot.store.add(OWNER, "The user's lease ends in March", Category.CONTEXT)
    conversations = bot.services.conversations
    assert await conversations.forget_before(bot_now() - timedelta(days=30)) == 0
    # Still open (the next message continues it): kept, whatever the cutoff.
    assert await conversations.forget_before(bot_now() + timedelta(minutes=1)) == 0
    later = ConversationStore(
        create_sessionmaker(bot.services.engine), timedelta(minutes=120),
        clock=lambda: bot_now() + timedelta(days=31),
    )  # fmt: skip
    assert await later.forget_before(bot_now() + timedelta(minutes=1)) == 1
    past = ConversationSearch(create_sessionmaker(bot.services.engine))
    assert await past.search(OWNER, "lease", 10) == []
    assert [m.content for m in await bot.store.list_active(OWNER)] == [
        "The user's lease ends in March"
    ]
    assert bot.app.job_queue.jobs()[0].callback.__name__ == "forget_old_conversations"


def bot_now():
    from memory.models import utcnow

    return utcnow()


async def test_retention_never_deletes_an_open_conversation_and_deletes_in_batches(sessionmaker):
    now = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
    # Idle time (three days) longer than the retention (one day): a conversation two days
    # quiet is still open, and the next message continues it.
    idle = timedelta(days=3)

    def at(when: datetime) -> ConversationStore:
        return ConversationStore(sessionmaker, idle, clock=lambda: when)

    said = [{"type": "text", "text": "old"}]
    for chat in range(1000, 1000 + FORGET_BATCH * 2 + 1):
        await at(now - timedelta(days=5)).store_user_message(ChatThread(chat), chat, said)
    hello = [{"type": "text", "text": "hi"}]
    await at(now - timedelta(days=2)).store_user_message(ChatThread(OWNER), OWNER, hello)
    assert await at(now).forget_before(now - timedelta(days=1)) == FORGET_BATCH * 2 + 1
    again = [{"type": "text", "text": "and?"}]
    snapshot = await at(now).store_user_message(ChatThread(OWNER), OWNER, again)
    assert [t.content[0]["text"] for t in snapshot.turns] == ["hi", "and?"]
