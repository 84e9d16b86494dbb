"""Search by meaning: turn vectors filled in the background, fused with the words' ranking.

The vectors come from the fake OpenAI-compatible embeddings server (tests/fakes) through
the real openai SDK, whose thesaurus puts "automobile" beside "car" with no word shared.
"""

import asyncio
import logging
from datetime import timedelta

import numpy as np
import pytest
from sqlalchemy import event, text

from bot.conversations.blocks import Content
from bot.conversations.fusion import OwnerWindow, fused_ranks
from bot.conversations.search import ConversationSearch
from bot.conversations.snapshot import ChatThread
from bot.conversations.store import ConversationStore
from bot.conversations.vector_setup import conversation_search, embedder_of
from bot.conversations.vectors import (
    BATCH,
    TurnVectors,
    pack,
    vector_text,
)
from bot.settings import Settings
from memory.embeddings import ApiEmbedder
from tests.fakes.embeddings_server import FakeEmbeddings
from tests.harness import FRIEND, OWNER

MODEL = "embed-small"


def said(words: str) -> Content:
    """Return the content of a user's text message, with its time line."""
    return [{"type": "text", "text": f"[Monday, 23 November 2026, 10:00 UTC]\n{words}"}]


@pytest.fixture
async def server():
    async with FakeEmbeddings(models=(MODEL,)) as fake:
        yield fake


def settings_for(server: FakeEmbeddings, **more) -> Settings:
    """Return Settings that use the fake embeddings server."""
    values = {
        "telegram_bot_token": "1:x",
        "anthropic_api_key": "sk-ant-x",
        "embeddings_base_url": server.base_url,
        "embeddings_api_key": server.api_key,
        "embeddings_model": MODEL,
    }
    return Settings(_env_file=None, **(values | more))


async def stored_and_embedded(sessionmaker, server, *messages: tuple[int, str]):
    """Store each (owner, words) through the store, hooked as the bot is; wait for the vectors."""
    conversations = ConversationStore(sessionmaker, timedelta(minutes=30))
    search = conversation_search(settings_for(server), conversations)
    for owner, words in messages:
        await conversations.store_user_message(ChatThread(owner), owner, said(words))
    vectors = search._vectors
    assert vectors is not None
    await vectors.drained.wait()
    return search, vectors


async def test_a_turn_found_by_meaning_shares_no_word_with_the_question(sessionmaker, server):
    search, _ = await stored_and_embedded(
        sessionmaker, server,
        (OWNER, "I finally bought the automobile I wanted"),
        (OWNER, "The weather was grey all week"),
        (OWNER, "We watched a film about the sea"),
    )  # fmt: skip
    hits = await search.search(OWNER, "my new car", 5)
    assert hits[0].excerpt == "I finally bought the automobile I wanted"
    # By words alone, nothing: no turn holds "car" (nor "new").
    assert await ConversationSearch(sessionmaker).search(OWNER, "my new car", 5) == []


async def test_vectors_are_filled_after_storing_off_the_reply_path(sessionmaker, server):
    _, _vectors = await stored_and_embedded(
        sessionmaker, server, *[(OWNER, f"note number {n} about dogs") for n in range(BATCH + 3)]
    )
    async with sessionmaker() as session:
        rows = (
            await session.execute(text("SELECT embedding, embedding_model FROM conversation_turns"))
        ).all()
    assert len(rows) == BATCH + 3
    assert {model for _, model in rows} == {MODEL}
    assert all(len(vector) == 2 * 64 for vector, _ in rows)  # float16 values
    # Two batches at least: the work per model call is bounded.
    assert sum(len(r.inputs) for r in server.requests) == BATCH + 3
    assert max(len(r.inputs) for r in server.requests) <= BATCH


async def test_another_owners_turns_never_come_back_by_meaning(sessionmaker, server):
    search, _ = await stored_and_embedded(
        sessionmaker, server,
        (FRIEND, "My automobile broke down on the motorway"),
        (OWNER, "The weather was grey all week"),
    )  # fmt: skip
    hits = await search.search(OWNER, "car trouble", 5)
    assert "automobile" not in " ".join(hit.excerpt for hit in hits)


async def test_a_failing_server_leaves_the_words_search(sessionmaker, server):
    search, _vectors = await stored_and_embedded(
        sessionmaker, server, (OWNER, "The lease ends in March"), (OWNER, "Cats sleep a lot")
    )
    server.fail_always(500)
    hits = await search.search(OWNER, "lease", 5)
    assert [hit.excerpt for hit in hits] == ["The lease ends in March"]


async def test_a_failed_batch_is_embedded_on_the_next_turn(sessionmaker, server):
    server.fail_always(503)
    conversations = ConversationStore(sessionmaker, timedelta(minutes=30))
    search = conversation_search(settings_for(server), conversations)
    vectors = search._vectors
    assert vectors is not None
    await conversations.store_user_message(ChatThread(OWNER), OWNER, said("An automobile"))
    await vectors.drained.wait()
    server.recover()
    await conversations.store_user_message(ChatThread(OWNER), OWNER, said("More words"))
    await vectors.drained.wait()
    async with sessionmaker() as session:
        models = await session.execute(text("SELECT embedding_model FROM conversation_turns"))
        assert [model for (model,) in models] == [MODEL, MODEL]


async def test_vectors_of_another_model_are_never_compared_and_are_made_again(sessionmaker, server):
    search, _vectors = await stored_and_embedded(
        sessionmaker, server, (OWNER, "I finally bought the automobile I wanted")
    )
    async with sessionmaker.begin() as session:
        await session.execute(text("UPDATE conversation_turns SET embedding_model = 'old'"))
    assert await search.search(OWNER, "car", 5) == []
    fresh = TurnVectors(sessionmaker, ApiEmbedder(server.base_url, server.api_key, MODEL))
    fresh.poke()
    await fresh.drained.wait()
    found = await ConversationSearch(sessionmaker, fresh).search(OWNER, "car", 5)
    assert [hit.excerpt for hit in found] == ["I finally bought the automobile I wanted"]


async def test_the_conversation_in_progress_stays_out_by_meaning_too(sessionmaker, server):
    search, _ = await stored_and_embedded(
        sessionmaker, server, (OWNER, "I finally bought the automobile I wanted")
    )
    async with sessionmaker() as session:
        (conversation,) = (await session.execute(text("SELECT id FROM conversations"))).one()
    assert await search.search(OWNER, "car", 5, skip_conversation=conversation) == []


def test_a_turns_neighbour_in_its_conversation_shares_its_score():
    vector = pack([1.0, 0.0])
    other = pack([0.0, 1.0])
    # Turns 1-3 in conversation 7, turn 4 in conversation 8; only turn 2 matches at all.
    rows = [(1, 7, other), (2, 7, vector), (3, 7, other), (4, 8, other)]
    query = np.array([1.0, 0.0], dtype=np.float32)
    # Its neighbours 1 and 3 gain a share (the newer first); 4, in another conversation, is
    # not its neighbour, and matches nothing.
    assert fused_ranks(OwnerWindow.of_rows(rows, 0.0), query, [2], 4) == [2, 3, 1]


def test_what_a_turns_vector_is_made_of():
    bob = {"speaker": "Bob"}
    assert vector_text("user", said("Hello  there"), bob) == 'Bob said, "Hello there"'
    assert vector_text("user", said("Hi"), None) == 'The user said, "Hi"'
    assert vector_text("assistant", [{"type": "text", "text": "Hi"}], None) == (
        'The assistant said, "Hi"'
    )
    assert vector_text("assistant", [{"type": "tool_use", "id": "t", "name": "x"}], None) == ""


def test_the_api_is_chosen_only_when_set_wholly(server):
    chosen = embedder_of(settings_for(server))
    assert isinstance(chosen, ApiEmbedder) and chosen.name == MODEL
    with pytest.raises(ValueError, match="EMBEDDINGS_MODEL not set"):
        settings_for(server, embeddings_model=None)


async def test_a_replaced_turn_is_found_by_its_new_words_and_meaning_only(sessionmaker, server):
    search, vectors = await stored_and_embedded(
        sessionmaker, server, (OWNER, "I finally bought the automobile I wanted")
    )
    conversations = ConversationStore(sessionmaker, timedelta(minutes=30))
    conversations.changed = vectors.changed
    async with sessionmaker() as session:
        (turn_id,) = (await session.execute(text("SELECT id FROM conversation_turns"))).one()
    assert [hit.turn_id for hit in await search.search(OWNER, "car", 5)] == [turn_id]
    server.hold()  # the new vector waits: in between, the turn has none
    await conversations.replace_content(turn_id, said("A note: the puppy slept"))
    async with sessionmaker() as session:
        stored = await session.execute(
            text("SELECT embedding, embedding_model FROM conversation_turns")
        )
        assert tuple(stored.one()) == (None, None)
    server.release()
    # Neither the old words nor the old meaning find it; the new ones do, once made again.
    assert await search.search(OWNER, "automobile", 5) == []
    await vectors.drained.wait()
    assert await search.search(OWNER, "car", 5) == []
    assert [hit.turn_id for hit in await search.search(OWNER, "dog", 5)] == [turn_id]
    assert [hit.turn_id for hit in await search.search(OWNER, "puppy", 5)] == [turn_id]


async def test_the_question_is_embedded_before_a_connection_is_taken(sessionmaker, server):
    search, _ = await stored_and_embedded(
        sessionmaker, server, (OWNER, "I finally bought the automobile I wanted")
    )
    engine = sessionmaker.kw["bind"].sync_engine
    held = []
    event.listen(engine, "checkout", lambda *_: held.append(1))
    event.listen(engine, "checkin", lambda *_: held.pop())
    server.hold()
    server.arrived.clear()
    searching = asyncio.create_task(search.search(OWNER, "my new car", 5))
    await server.arrived.wait()
    assert held == []  # no connection waits on the model
    server.release()
    assert [hit.excerpt for hit in await searching] == ["I finally bought the automobile I wanted"]
    # Asked again, the question's vector is not made again.
    asked = len(server.requests)
    await search.search(OWNER, "my new car", 5)
    assert len(server.requests) == asked


async def test_stopping_ends_the_fill_at_once_without_a_warning(sessionmaker, server, caplog):
    conversations = ConversationStore(sessionmaker, timedelta(minutes=30))
    search = conversation_search(settings_for(server), conversations)
    vectors = search._vectors
    assert vectors is not None
    server.hold()
    server.arrived.clear()
    await conversations.store_user_message(ChatThread(OWNER), OWNER, said("An automobile"))
    await server.arrived.wait()  # the fill waits on the server, as a slow model would
    with caplog.at_level(logging.DEBUG, logger="bot.conversations.vectors"):
        await asyncio.wait_for(conversations.close(), timeout=5)
    assert vectors.drained.is_set()
    # The bot's own records only: a client another test left open may be collected now,
    # and asyncio reports that under its own name.
    ours = [r for r in caplog.records if r.name.startswith(("bot.", "memory."))]
    assert [r for r in ours if r.levelno >= logging.WARNING] == []
    # Nothing more is started after it.
    await conversations.store_user_message(ChatThread(OWNER), OWNER, said("More words"))
    assert vectors.drained.is_set()
    server.release()


async def test_past_the_window_a_turn_counts_by_meaning_only_when_its_words_match(
    sessionmaker, server
):
    await stored_and_embedded(
        sessionmaker, server,
        (OWNER, "I finally bought the automobile I wanted, a red one"),
        (OWNER, "The weather was grey all week"),
        (OWNER, "We watched a film about the sea"),
    )  # fmt: skip
    embedder = ApiEmbedder(server.base_url, server.api_key, MODEL)
    search = ConversationSearch(sessionmaker, TurnVectors(sessionmaker, embedder, window=2))
    # The two newest are compared with every question; the oldest is not...
    assert await search.search(OWNER, "my new car", 5) == []
    # ...unless the words find it (then its vector is read by its key and fused too).
    found = await search.search(OWNER, "red car", 5)
    assert found[0].excerpt == "I finally bought the automobile I wanted, a red one"


def test_the_nearest_are_chosen_as_a_stable_sort_of_all_would_ties_included():
    from bot.conversations.fusion import _best

    rng = np.random.default_rng(3)
    for _ in range(50):
        similarity = rng.choice([0.1, 0.5, 0.5, 0.7, 0.9], size=200).astype(np.float32)
        expected = np.argsort(-similarity, kind="stable")[:50].tolist()
        assert _best(similarity, 50) == expected
