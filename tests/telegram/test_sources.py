"""A reply's sources, end to end: "Based on N memories" under a reply that drew on memories.

Searched memories are cited by the API's search_result citations (the fake makes them from
the request, as the API does), block memories by the model's [[mem:<id>]] markers, which no
message and no draft ever shows.
"""

import pytest

from bot.agent.citations import source_of
from memory.categories import Category
from tests.buttons import button, buttons, last_answer, last_to, press, sent_to
from tests.fakes.anthropic_server import citing, paced, text, tool_use
from tests.harness import FRIEND, OWNER

SQLITE_ONLY = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
UNKNOWN_ID = "Zz9Zz9Zz"


async def sister(harness):
    return await harness.store.add(OWNER, "The user's sister is called Mia", Category.PERSON, "Mia")


def search_then_cite(memory_id: str):
    """Script a search for the sister, then an answer that cites what it found."""
    return (
        tool_use("search_memory", {"query": "sister"}),
        citing("Your sister is ", ("called Mia", source_of(memory_id)), "."),
    )


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
async def test_a_reply_citing_a_searched_memory_shows_it_under_a_button(start_bot, streamed):
    harness = await start_bot(stream_replies=streamed)
    mia = await sister(harness)
    harness.model.script(*search_then_cite(mia.id))
    assert await harness.say(OWNER, "what's my sister's name?") == ["Your sister is called Mia."]
    reply = last_to(harness, OWNER)
    [(label, data)] = buttons(reply)
    assert label == "Based on 1 memory" and data.startswith("s:")
    assert harness.model.requests[-1].get("stream") is (True if streamed else None)

    # The search went to the model as a search result it can cite, with the memory as source.
    [result] = harness.model.requests[-1]["messages"][-1]["content"]
    found = [b for b in result["content"] if b["type"] == "search_result"]
    assert found == [
        {
            "type": "search_result",
            "source": f"memory:{mia.id}",
            "title": found[0]["title"],
            "content": [{"type": "text", "text": "The user's sister is called Mia"}],
            "citations": {"enabled": True},
        }
    ]
    assert found[0]["title"].startswith(f'[id:{mia.id}] person, subject "Mia", changed ')

    [listed] = await press(harness, reply, data)
    assert f"[{mia.id}]" in listed and "The user's sister is called Mia" in listed
    assert f"changed {mia.updated_at.astimezone(harness.settings.zone):%Y-%m-%d}" in listed
    shown = last_to(harness, OWNER)
    assert buttons(shown) == [
        (f"Forget [{mia.id}]", f"s:d:{mia.id}:{data[2:]}"),
        ("📌 Pin", f"s:+:{mia.id}:{data[2:]}"),
    ]

    # The reply is stored as the user saw it, one text block without citations: the next
    # request sends it back so, and the API accepts it.
    await harness.say(OWNER, "thanks")
    assert harness.model.invalid == []
    answered = harness.model.requests[-1]["messages"][-2]
    assert answered == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Your sister is called Mia."}],
    }


@SQLITE_ONLY
async def test_a_marker_never_shows_in_a_draft_or_the_reply(start_bot, fakes):
    tg, model = fakes
    harness = await start_bot()
    alec = await harness.store.add(OWNER, "Alec is the user's boss", Category.PERSON, "Alec")
    await harness.say(OWNER, "hi")
    assert alec.id in harness.system_block()
    # The fake streams 16 characters a delta: "Alec,[[mem:" and the rest of the marker
    # arrive apart, over a second each, so a draft is taken while only half of it is there.
    said = f"Your boss is Alec,[[mem:{alec.id}]] and he likes short emails."
    model.script(paced(said, first_delay=0.1, duration=5.0))
    [reply] = await harness.say(OWNER, "who is my boss?")
    assert reply == "Your boss is Alec, and he likes short emails."
    drafts = tg.drafts_to(OWNER)
    assert "Your boss is Alec," in drafts  # the draft taken while the marker was half there
    assert not any("[" in draft or "mem:" in draft for draft in drafts)
    assert all(reply.startswith(draft) for draft in drafts)
    [(label, _)] = buttons(last_to(harness, OWNER))
    assert label == "Based on 1 memory"


async def test_a_block_memory_cited_by_marker_is_listed(harness):
    alec = await harness.store.add(OWNER, "Alec is the user's boss", Category.PERSON, "Alec")
    tea = await harness.store.add(OWNER, "The user likes green tea", Category.PREFERENCE)
    await harness.say(OWNER, "hi")
    harness.model.script(
        text(f"[[mem:{alec.id}]] Alec is your boss [[mem:{alec.id}]].\n\nTea? [[mem:{tea.id}]]")
    )
    assert await harness.say(OWNER, "who is my boss?") == ["Alec is your boss.\n\nTea?"]
    reply = last_to(harness, OWNER)
    [listed] = await press(harness, reply, button(reply, "Based on 2 memories"))
    assert listed.index(alec.id) < listed.index(tea.id)
    assert "Alec is the user's boss" in listed and "The user likes green tea" in listed
    # The history keeps the reply as shown, markers cut.
    await harness.say(OWNER, "ok")
    assert "[[mem:" not in str(harness.model.requests[-1]["messages"])


async def test_another_owners_or_an_unknown_id_shows_nothing(harness):
    theirs = await harness.store.add(FRIEND, "Friend's secret project X", Category.PROJECT)
    mine = await harness.store.add(OWNER, "The user likes green tea", Category.PREFERENCE)
    harness.model.script(
        text(f"Project X [[mem:{theirs.id}]] and Y [[mem:{UNKNOWN_ID}]]."),
        text(f"Tea [[mem:{mine.id}]], not X [[mem:{theirs.id}]]."),
    )
    assert await harness.say(OWNER, "what do you know?") == ["Project X and Y."]
    assert buttons(last_to(harness, OWNER)) == []
    assert await harness.say(OWNER, "and?") == ["Tea, not X."]
    reply = last_to(harness, OWNER)
    [listed] = await press(harness, reply, button(reply, "Based on 1 memory"))
    assert mine.id in listed and theirs.id not in listed and "project X" not in listed


async def test_no_memory_used_no_button(harness):
    await sister(harness)
    harness.model.script(tool_use("search_memory", {"query": "sister"}), text("I don't know."))
    assert await harness.say(OWNER, "what's my sister's name?") == ["I don't know."]
    assert buttons(last_to(harness, OWNER)) == []
    assert await harness.say(OWNER, "hello") == ["OK"]
    assert buttons(last_to(harness, OWNER)) == []


async def test_forget_and_pin_from_the_list_and_a_stale_press(harness):
    mia = await sister(harness)
    harness.model.script(*search_then_cite(mia.id))
    await harness.say(OWNER, "what's my sister's name?")
    reply = last_to(harness, OWNER)
    data = button(reply, "Based on")
    await press(harness, reply, data)
    listed = last_to(harness, OWNER)

    assert await press(harness, listed, button(listed, "📌 Pin")) == []
    assert last_answer(harness)["text"] == "Pinned: it stays in the prompt."
    assert (await harness.store.find(OWNER, mia.id)).pinned
    refreshed = harness.tg.message(OWNER, listed["message_id"])
    assert button(refreshed, "Unpin") == f"s:-:{mia.id}:{data[2:]}"

    assert await press(harness, refreshed, button(refreshed, "Forget")) == [
        "Deleted: 'The user's sister is called Mia'"
    ]
    assert await harness.store.list_active(OWNER) == []
    refreshed = harness.tg.message(OWNER, listed["message_id"])
    assert "forgotten" in refreshed["text"] and buttons(refreshed) == []
    # The list's old Forget, pressed again: the memory is gone, and the list says so.
    assert await press(harness, listed, f"s:d:{mia.id}:{data[2:]}", as_is=True) == []
    assert last_answer(harness)["text"] == "That memory is already gone."


async def test_presses_that_are_not_the_owners_are_stale(harness):
    mia = await sister(harness)
    theirs = await harness.store.add(FRIEND, "Friend's secret project X", Category.PROJECT)
    harness.model.script(*search_then_cite(mia.id))
    await harness.say(OWNER, "what's my sister's name?")
    data = button(last_to(harness, OWNER), "Based on")
    turn = data[2:]
    await harness.say(FRIEND, "hi")
    theirs_chat = last_to(harness, FRIEND)
    for pressed in (data, f"s:d:{mia.id}:{turn}", f"s:+:{mia.id}:{turn}", "s:99999999", "s:x"):
        before = len(harness.tg.sent)
        await press(harness, theirs_chat, pressed)
        assert last_answer(harness)["text"] == "This button no longer works."
        assert harness.tg.sent[before:] == []
    # The owner's own turn, but a memory it did not cite: nothing happens to it either.
    reply = last_to(harness, OWNER)
    await press(harness, reply, f"s:d:{theirs.id}:{turn}")
    assert last_answer(harness)["text"] == "This button no longer works."
    assert [m.id for m in await harness.store.list_active(FRIEND)] == [theirs.id]
    assert [m.id for m in await harness.store.list_active(OWNER)] == [mia.id]


@pytest.mark.engines
async def test_the_button_works_after_a_restart(harness):
    mia = await sister(harness)
    harness.model.script(*search_then_cite(mia.id))
    await harness.say(OWNER, "what's my sister's name?")
    reply = last_to(harness, OWNER)
    await harness.restart()
    [listed] = await press(harness, reply, button(reply, "Based on 1 memory"))
    assert mia.id in listed and "The user's sister is called Mia" in listed
    assert len(sent_to(harness, OWNER)) == 2
