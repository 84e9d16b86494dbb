"""search_conversations: which turns it finds, and how it says who said them."""

import re
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from bot.conversations.said_by import SaidBy
from bot.conversations.search import (
    EXCERPT_CHARACTERS,
    RESULT_CHARACTERS,
    TURN_CHARACTERS,
    ConversationSearch,
)
from bot.conversations.snapshot import ChatThread, MessageRef
from bot.conversations.store import ConversationStore
from bot.migrations import upgrade_engine
from memory.db import create_engine, create_sessionmaker
from memory.search_terms import owner_mark
from tests.fakes.anthropic_server import text as reply
from tests.fakes.anthropic_server import tool_use
from tests.harness import FRIEND, OWNER

GROUP = -4002


def said(text: str) -> list[dict]:
    """Return the content of a user's text message, with its time line."""
    return [{"type": "text", "text": f"[Monday, 23 November 2026, 10:00 UTC]\n{text}"}]


async def test_the_conversation_in_progress_is_searched_where_folded_into_its_summary(
    sessionmaker,
):
    conversations = ConversationStore(sessionmaker, timedelta(minutes=30))
    await conversations.store_user_message(ChatThread(OWNER), OWNER, said("Old lease talk"))
    await conversations.end(ChatThread(OWNER))
    folded = await conversations.store_user_message(
        ChatThread(OWNER), OWNER, said("The lease ends in March")
    )
    for n in range(25):  # more than any slack: the model has these, they never crowd out
        await conversations.store_user_message(ChatThread(OWNER), OWNER, said(f"lease {n}"))
    await conversations.compact(folded.conversation.id, "They talked.", folded.turns[-1].id, [])
    hits = await ConversationSearch(sessionmaker).search(
        OWNER, "lease", 10, skip_conversation=folded.conversation.id, order="newest"
    )
    assert [hit.excerpt for hit in hits] == ["The lease ends in March", "Old lease talk"]
    everything = await ConversationSearch(sessionmaker).search(OWNER, "lease", 30)
    assert len(everything) == 27


def tool_result(harness) -> str:
    """Return the text of the last tool result the model was sent."""
    [result] = [
        block for block in harness.model.requests[-1]["messages"][-1]["content"]
        if block.get("type") == "tool_result"
    ]  # fmt: skip
    return result["content"]


@pytest.mark.engines
async def test_a_forwarded_strangers_words_are_never_the_users_in_results(harness):
    harness.model.default = reply("I see.")
    origin = {"type": "hidden_user", "sender_user_name": "Mallory", "date": 1763000000}
    long = "words " * 150 + "and the lease ends in March"  # the marker is far before the match
    harness.tg.push_message(OWNER, long, forward_origin=origin)
    await harness.idle()
    await harness.say(OWNER, "/new")
    harness.model.script(tool_use("search_conversations", {"query": "lease"}), reply("March."))
    await harness.say(OWNER, "what about the lease?")
    found = tool_result(harness).splitlines()[1]
    assert re.fullmatch(
        r"- \S+ \S+, \"Mallory\"'s words, forwarded by the user: \"….*the lease ends in March\"",
        found,
    ), found


@pytest.mark.engines
async def test_in_a_group_each_members_words_keep_their_name_and_quotes_their_author(harness):
    harness.model.default = reply("ok")
    bot = "@memory_test_bot"
    await harness.say(GROUP, f"{bot} the lease of the office ends", user_id=FRIEND,
                      chat_type="group", first_name="Bob")  # fmt: skip
    carol = harness.tg.push_message(GROUP, "I think the rent is too high", user_id=OWNER,
                                    chat_type="group", first_name="Carol")  # fmt: skip
    replied = carol["message"]["message_id"]
    await harness.say(GROUP, f"{bot} agreed", user_id=FRIEND, chat_type="group",
                      first_name="Bob", reply_to_message=replied)  # fmt: skip
    await harness.say(GROUP, "/new", user_id=FRIEND, chat_type="group", first_name="Bob")
    past = ConversationSearch(create_sessionmaker(harness.services.engine))
    [rent] = await past.search(GROUP, "rent", 10)
    assert rent.who == '"Bob" said, replying to "Carol"\'s message'
    assert rent.quote_excerpt == "I think the rent is too high"
    assert rent.excerpt.endswith("agreed") and "rent" not in rent.excerpt
    [lease] = await past.search(GROUP, "lease", 10)
    assert (lease.who, lease.quote_excerpt) == ('"Bob" said', None)
    assert lease.excerpt.endswith("the lease of the office ends")
    [_, answer] = await past.search(GROUP, "ok", 10)
    assert answer.who == "you said"


async def test_a_group_turn_stored_before_said_by_is_named_by_its_time_line(sessionmaker):
    conversations = ConversationStore(sessionmaker, timedelta(minutes=30))
    line = "[Monday, 23 November 2026, 10:00 UTC; from Bob [he/him]]\nThe lease ends in May"
    await conversations.store_user_message(
        ChatThread(GROUP), GROUP, [{"type": "text", "text": line}]
    )
    [hit] = await ConversationSearch(sessionmaker).search(GROUP, "lease", 10)
    assert (hit.who, hit.excerpt) == ('"Bob [he/him]" said', "The lease ends in May")


async def _store_apart(sessionmaker, owner, texts):
    """Store each text as a user's message of its own conversation, a day apart, in order."""
    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    conversations = ConversationStore(sessionmaker, timedelta(minutes=30), clock=lambda: now[0])
    for words in texts:
        await conversations.store_user_message(ChatThread(owner), owner, said(words))
        now[0] += timedelta(days=1)


async def test_a_relevant_old_turn_outranks_newer_ones_sharing_one_common_word(sessionmaker):
    await _store_apart(
        sessionmaker,
        OWNER,
        [
            "The landlord said the heating in the flat gets fixed on Tuesday",
            *[f"I fixed the bike's chain, part {n}" for n in range(12)],
        ],
    )
    past = ConversationSearch(sessionmaker)
    hits = await past.search(OWNER, "When did the landlord say the heating gets fixed?", 10)
    assert hits[0].excerpt.startswith("The landlord said the heating")
    newest = await past.search(OWNER, "landlord heating fixed", 3, order="newest")
    assert newest[0].excerpt == "I fixed the bike's chain, part 11"


async def test_inflected_words_names_and_file_names_find_their_turns(sessionmaker):
    conversations = ConversationStore(sessionmaker, timedelta(minutes=30))
    melanie = MessageRef(said_by=SaidBy(speaker="Melanie"))
    line = "[Monday, 23 November 2026, 10:00 UTC; from Melanie]\nWe camped by the lake"
    await conversations.store_user_message(
        ChatThread(GROUP), GROUP, [{"type": "text", "text": line}], melanie
    )
    photo = {
        "type": "file",
        "kind": "image",
        "media_type": "image/jpeg",
        "name": "sunset_pier.jpg",
        "file_id": "F1",
        "sha256": "0" * 64,
        "size": 9,
    }
    await conversations.store_user_message(
        ChatThread(GROUP), GROUP, [photo, *said("look at this")]
    )  # fmt: skip
    past = ConversationSearch(sessionmaker)
    [camping] = await past.search(GROUP, "Where did Melanie go camping?", 10)
    assert camping.excerpt == "We camped by the lake"
    [sunset] = await past.search(GROUP, "sunset photo", 10)
    assert sunset.excerpt == "look at this [image: sunset_pier.jpg]"


async def test_german_and_russian_words_stay_findable_inflected_or_not(sessionmaker):
    await _store_apart(
        sessionmaker,
        OWNER,
        [
            "Der Vermieter hat die Wohnungsschlüssel am Freitag gebracht",
            "Хозяин квартиры принёс ключи в пятницу",
            "Unrelated words about the garden",
        ],
    )
    past = ConversationSearch(sessionmaker)
    for query in ("Vermieter", "Wohnungsschlüssel", "Wohnungs", "Freitag"):
        [hit] = await past.search(OWNER, query, 10)
        assert hit.excerpt.startswith("Der Vermieter"), query
    for query in ("квартира", "квартиру", "хозяином", "ключ", "пятница"):
        [hit] = await past.search(OWNER, query, 10)
        assert hit.excerpt.startswith("Хозяин"), query


async def test_each_hit_shows_its_whole_turn_up_to_a_bound_and_all_within_one(sessionmaker):
    middle = "word " * 100 + "the door fits"
    await _store_apart(sessionmaker, OWNER, [middle, *["a door " + "x" * 2000] * 19])
    past = ConversationSearch(sessionmaker)
    [fits] = await past.search(OWNER, "fits", 10)
    assert fits.excerpt == middle.strip()  # 513 characters: whole
    hits = await past.search(OWNER, "door", 20)
    assert len(hits) == 20
    assert max(len(hit.excerpt) for hit in hits) <= TURN_CHARACTERS + 2
    assert sum(len(hit.excerpt) for hit in hits) <= RESULT_CHARACTERS + 20 * EXCERPT_CHARACTERS


async def test_turns_and_memories_indexed_before_0020_are_found_by_stem_and_speaker(
    empty_database_url,
):
    engine = create_engine(empty_database_url)
    try:
        await upgrade_engine(engine, "0017")
        content = '[{"type": "text", "text": "[Monday; from Melanie]\\nWe camped by the lake"}]'
        mark = owner_mark(GROUP)
        async with engine.begin() as connection:
            await connection.execute(
                text(
                    "INSERT INTO conversations (id, chat_id, owner_id, memory_block, started_at, "
                    "last_activity_at) VALUES (1, :owner, :owner, '', :when, :when)"
                ),
                {"owner": GROUP, "when": datetime(2026, 1, 1)},
            )
            await connection.execute(
                text(
                    "INSERT INTO conversation_turns (conversation_id, role, content, tokens, "
                    "created_at, owner_id, search_text, said_by) VALUES (1, 'user', :content, 9, "
                    ":when, :owner, :words, :said_by)"
                ),
                {
                    "content": content,
                    "when": datetime(2026, 1, 1),
                    "owner": GROUP,
                    # As 0009 wrote it: unstemmed, no speaker.
                    "words": " ".join(mark + w for w in "we camped by the lake".split()),
                    "said_by": '{"speaker": "Melanie"}',
                },
            )
        await upgrade_engine(engine)
        past = ConversationSearch(create_sessionmaker(engine))
        [hit] = await past.search(GROUP, "Melanie camping", 10)
        assert hit.excerpt == "We camped by the lake"
        assert await past.search(GROUP, "Melanie", 10) == [hit]
    finally:
        await engine.dispose()


@pytest.mark.engines
async def test_the_tool_says_its_order_and_gives_the_newest_first_when_asked(harness):
    harness.model.default = reply("I see.")
    await harness.say(OWNER, "The lease of the flat on Birch Lane ends in March")
    await harness.say(OWNER, "/new")
    await harness.say(OWNER, "The lease question again")
    await harness.say(OWNER, "/new")
    harness.model.script(
        tool_use("search_conversations", {"query": "lease Birch Lane"}), reply("March.")
    )
    await harness.say(OWNER, "when does it end?")
    best = tool_result(harness).splitlines()
    assert best[0].endswith("best matches first:") and "Birch Lane" in best[1]
    harness.model.script(
        tool_use("search_conversations", {"query": "lease Birch Lane", "order": "newest"}),
        reply("March."),
    )
    await harness.say(OWNER, "and the latest?")
    newest = tool_result(harness).splitlines()
    assert newest[0].endswith("newest first:")
    assert "The lease question again" in newest[1] and "Birch Lane" in newest[2]
