"""search_conversations: which turns it finds, and how it says who said them."""

from datetime import timedelta

from bot.conversations.search import ConversationSearch
from bot.conversations.snapshot import ChatThread
from bot.conversations.store import ConversationStore

OWNER = 111


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
    await conversations.compact(folded.conversation.id, "They talked.", folded.turns[-1].id)
    hits = await ConversationSearch(sessionmaker).search(
        OWNER, "lease", 10, skip_conversation=folded.conversation.id
    )
    assert [hit.excerpt for hit in hits] == ["The lease ends in March", "Old lease talk"]
    everything = await ConversationSearch(sessionmaker).search(OWNER, "lease", 30)
    assert len(everything) == 27
