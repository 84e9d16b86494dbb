"""What a turn is found by besides its words: its month and year, "assistant" for the bot's."""

from datetime import UTC, datetime, timedelta

from bot.conversations.blocks import Content
from bot.conversations.search import ConversationSearch
from bot.conversations.snapshot import ChatThread
from bot.conversations.store import ConversationStore
from tests.harness import OWNER


def said(words: str) -> Content:
    """Return the content of a user's text message, with its time line."""
    return [{"type": "text", "text": f"[Monday, 1 May 2023, 10:00 UTC]\n{words}"}]


async def test_a_turn_is_found_by_its_month_and_year(sessionmaker):
    now = [datetime(2023, 5, 8, 12, tzinfo=UTC)]
    conversations = ConversationStore(sessionmaker, timedelta(minutes=30), lambda: now[0])
    await conversations.store_user_message(ChatThread(OWNER), OWNER, said("We planted tomatoes"))
    now[0] = datetime(2024, 6, 3, 12, tzinfo=UTC)
    await conversations.store_user_message(ChatThread(OWNER), OWNER, said("We planted beans"))
    search = ConversationSearch(sessionmaker)
    hits = await search.search(OWNER, "what did we plant in May", 5)
    assert hits[0].excerpt == "We planted tomatoes"
    hits = await search.search(OWNER, "planted 2024", 5)
    assert hits[0].excerpt == "We planted beans"
    # The date words are searched, never shown.
    assert all("2023" not in hit.excerpt for hit in hits)


async def test_the_bots_words_are_found_as_the_assistants(sessionmaker):
    conversations = ConversationStore(sessionmaker, timedelta(minutes=30))
    snapshot = await conversations.store_user_message(ChatThread(OWNER), OWNER, said("Ideas?"))
    await conversations.append(
        snapshot.conversation, "assistant", [{"type": "text", "text": "Try a garden of herbs."}]
    )
    await conversations.store_user_message(ChatThread(OWNER), OWNER, said("The garden is done"))
    hits = await ConversationSearch(sessionmaker).search(
        OWNER, "what did the assistant say about the garden", 5
    )
    assert (hits[0].who, hits[0].excerpt) == ("you said", "Try a garden of herbs.")


async def test_a_short_hit_shows_the_message_before_it(sessionmaker):
    from datetime import UTC as utc

    from memory.tools.texts import found_turns

    conversations = ConversationStore(sessionmaker, timedelta(minutes=30))
    snapshot = await conversations.store_user_message(
        ChatThread(OWNER), OWNER, said("Did you ever go camping by the lake with the kids?")
    )
    await conversations.append(
        snapshot.conversation, "assistant", [{"type": "text", "text": "Yes, twice: in June."}]
    )
    long = "June was busy " + "with work and travel " * 10
    await conversations.store_user_message(ChatThread(OWNER), OWNER, said(long))
    hits = await ConversationSearch(sessionmaker).search(OWNER, "twice", 5)
    assert hits[0].context == (
        "just before it",
        "the user said",
        "Did you ever go camping by the lake with the kids?",
    )
    listed = found_turns("twice", hits, utc)
    assert '(just before it, the user said: "Did you ever go camping' in listed
    # A long hit speaks for itself.
    hits = await ConversationSearch(sessionmaker).search(OWNER, "travel", 5)
    assert hits[0].context is None
