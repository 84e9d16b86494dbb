"""Memory questions with Remember and No buttons (propose_memory), the bounds on asking, and
the notes that tell the model what the user tapped (Remember, No, Undo) in its next request."""

import re
from dataclasses import replace

import pytest

from bot.agent.proposal_answers import Member, may_answer
from memory.categories import Category
from memory.items import ProposalStatus
from memory.proposals import Proposal
from tests.builders import tool_results
from tests.buttons import button, buttons, last_answer, last_to, press
from tests.fakes.anthropic_server import text, tool_use
from tests.harness import FRIEND, OWNER

TEA = {"content": "The user likes green tea", "category": "preference", "subject": "tea"}
QUESTION = "Remember this? 'The user likes green tea'"


def fact(number: int) -> dict:
    """Return add_to_memory's arguments for a distinct fact."""
    return {"content": f"The user has hobby number {number}", "category": "context",
            "subject": f"hobby {number}"}  # fmt: skip


async def propose(harness, arguments: dict = TEA, words: str = "I always drink green tea"):
    """Have the model propose a memory while answering; return the question it shows."""
    harness.model.script(tool_use("propose_memory", arguments), text("Noted, tea it is."))
    said = await harness.say(OWNER, words)
    assert said[0] == "Noted, tea it is."
    return last_to(harness, OWNER)


def newest_user_texts(harness, index: int = -1) -> list[str]:
    """Return the text blocks of a request's newest user message."""
    newest = harness.model.requests[index]["messages"][-1]
    assert newest["role"] == "user"
    return [b["text"] for b in newest["content"] if b["type"] == "text"]


def result_of(harness, index: int = -1) -> dict:
    """Return the one tool result a request answers the model with."""
    [result] = tool_results(harness.model.requests[index])
    return result


async def test_a_proposal_shows_remember_and_no_under_the_reply(harness):
    question = await propose(harness)
    assert question["text"] == QUESTION
    assert [label for label, _ in buttons(question)] == ["Remember", "No"]
    assert all(re.fullmatch(r"p:\d+:[yn]", data) for _, data in buttons(question))
    result = result_of(harness)
    assert result["content"].startswith("Proposed, not saved") and not result.get("is_error")
    assert await harness.store.list_active(OWNER) == []
    # Offered last, so the definitions before it stay as they were (the cached prefix).
    assert harness.model.tool_names()[5] == "propose_memory"


async def test_remember_saves_at_once_with_notice_and_undo_and_no_model_call(harness):
    question = await propose(harness)
    calls = len(harness.model.requests)
    assert await press(harness, question, button(question, "Remember")) == [
        "Saved to memory: 'The user likes green tea'"
    ]
    assert len(harness.model.requests) == calls
    assert last_answer(harness)["text"] == "Saved."
    notice = last_to(harness, OWNER)
    assert [label for label, _ in buttons(notice)] == ["Undo"]
    settled = harness.tg.message(OWNER, question["message_id"])
    assert settled["text"] == f"{QUESTION}\nRemembered." and buttons(settled) == []
    [saved] = await harness.store.list_active(OWNER)
    assert (saved.content, saved.subject) == ("The user likes green tea", "tea")

    # A second tap (a stale client) saves nothing more, and says why.
    assert await press(harness, question, button(question, "Remember"), as_is=True) == []
    answer = last_answer(harness)
    assert answer["text"] == "Already answered: it was saved." and answer["show_alert"]
    assert len(await harness.store.list_active(OWNER)) == 1

    # The model learns it in its next request, in the user's turn, once; never in system.
    note = (
        '[Since your last reply the user tapped Remember on your memory question "The user '
        f'likes green tea": saved as [id:{saved.id}].]'
    )
    await harness.say(OWNER, "what do I drink?")
    assert newest_user_texts(harness)[-1] == note
    assert "tapped Remember on" not in harness.model.system_text()
    await harness.say(OWNER, "thanks")
    assert all("tapped" not in t for t in newest_user_texts(harness))
    history = str(harness.model.last_request["messages"])
    assert history.count("tapped Remember") == 1  # kept in its turn: the prefix stays cached


async def test_no_records_the_decline_and_the_fact_is_never_proposed_again(harness):
    question = await propose(harness)
    assert await press(harness, question, button(question, "No")) == []
    assert last_answer(harness)["text"] == "Not saved."
    settled = harness.tg.message(OWNER, question["message_id"])
    assert settled["text"] == f"{QUESTION}\nNot remembered." and buttons(settled) == []
    assert await harness.store.list_active(OWNER) == []

    # The same fact, spelled a little differently, is refused; the model hears of the No.
    again = {**TEA, "content": "the user likes green tea.", "subject": "Tea"}
    harness.model.script(tool_use("propose_memory", again), text("Sure."))
    assert await harness.say(OWNER, "more tea please") == ["Sure."]
    assert "tapped No on your memory question" in newest_user_texts(harness, -2)[-1]
    result = result_of(harness)
    assert result["is_error"] is True and "declined" in result["content"]


async def test_one_proposal_per_reply_even_across_tool_rounds(harness):
    harness.model.script(
        tool_use("propose_memory", TEA),
        tool_use("propose_memory", fact(1)),
        text("Done."),
    )
    assert await harness.say(OWNER, "I drink green tea and collect stamps") == [
        "Done.",
        QUESTION,
    ]
    first, second = result_of(harness, -2), result_of(harness, -1)
    assert not first.get("is_error")
    assert second["is_error"] is True and "one question per reply" in second["content"]


async def test_an_unanswered_question_expires_when_the_user_moves_on(harness):
    question = await propose(harness)
    # Open while the model answers the next message: no second question in that reply.
    harness.model.script(tool_use("propose_memory", fact(1)), text("Nice."))
    assert await harness.say(OWNER, "I also collect stamps") == ["Nice."]
    result = result_of(harness)
    assert result["is_error"] is True and "still unanswered" in result["content"]

    # That message did not answer it: it expired, and its buttons say so.
    assert await press(harness, question, button(question, "Remember")) == []
    answer = last_answer(harness)
    assert answer["show_alert"] and "expired" in answer["text"]
    settled = harness.tg.message(OWNER, question["message_id"])
    assert settled["text"] == f"{QUESTION}\nExpired: not remembered." and buttons(settled) == []
    assert await harness.store.list_active(OWNER) == []

    # It no longer blocks another question; the same fact is not asked again.
    harness.model.script(tool_use("propose_memory", fact(1)), text("Nice."))
    assert await harness.say(OWNER, "stamps, really") == [
        "Nice.",
        "Remember this? 'The user has hobby number 1'",
    ]
    await press(harness, last_to(harness, OWNER), button(last_to(harness, OWNER), "No"))
    harness.model.script(tool_use("propose_memory", TEA), text("Sure."))
    assert await harness.say(OWNER, "tea again") == ["Sure."]
    assert "left the question unanswered" in result_of(harness)["content"]


async def test_at_most_three_proposals_per_conversation(harness):
    for number in (1, 2, 3):
        question = await propose(harness, fact(number), f"hobby {number}")
        await press(harness, question, button(question, "No"))
    harness.model.script(tool_use("propose_memory", fact(4)), text("Fun."))
    assert await harness.say(OWNER, "hobby 4") == ["Fun."]
    result = result_of(harness)
    assert result["is_error"] is True and "3 memory questions" in result["content"]

    # A new conversation may ask again.
    await harness.say(OWNER, "/new")
    question = await propose(harness, fact(4), "hobby 4 again")
    assert buttons(question)


async def test_the_setting_bounds_the_proposals(start_bot):
    harness = await start_bot(max_memory_proposals=0)
    harness.model.script(tool_use("propose_memory", TEA), text("Tea."))
    assert await harness.say(OWNER, "I drink green tea") == ["Tea."]
    assert "0 memory questions" in result_of(harness)["content"]


async def test_a_yes_in_words_saves_and_answers_the_question(harness):
    question = await propose(harness)
    harness.model.script(tool_use("add_to_memory", TEA), text("Saved."))
    assert await harness.say(OWNER, "yes") == [
        "Saved.",
        "Saved to memory: 'The user likes green tea'",
    ]
    assert await press(harness, question, button(question, "Remember")) == []
    assert last_answer(harness)["text"] == "Already answered: it was saved."
    assert len(await harness.store.list_active(OWNER)) == 1
    # Answered, so the model may ask about something else.
    harness.model.script(tool_use("propose_memory", fact(1)), text("Nice."))
    await harness.say(OWNER, "I collect stamps")
    assert not result_of(harness).get("is_error")


async def test_stale_taps_say_why_and_lose_nothing(harness):
    question = await propose(harness)
    remember = button(question, "Remember")

    # Another owner's tap: not found, never a leak; the question still works for its owner.
    await harness.say(FRIEND, "hi")
    assert await press(harness, last_to(harness, FRIEND), remember) == []
    assert last_answer(harness)["text"] == "This button no longer works."

    # Memory off: nothing saved, the buttons stay for a tap once it is on again.
    await harness.say(OWNER, "/memory off")
    assert await press(harness, question, remember) == []
    assert "Memory is off" in last_answer(harness)["text"]
    assert buttons(harness.tg.message(OWNER, question["message_id"]))
    assert await harness.store.list_active(OWNER) == []
    await harness.say(OWNER, "/memory on")
    assert await press(harness, question, remember) == [
        "Saved to memory: 'The user likes green tea'"
    ]


async def test_a_memory_with_the_subject_first_makes_the_tap_refuse(harness):
    question = await propose(harness)
    await harness.store.add(OWNER, "The user prefers black tea", Category.PREFERENCE, "tea")
    assert await press(harness, question, button(question, "Remember")) == []
    assert "already remember something about 'tea'" in last_answer(harness)["text"]
    assert [m.content for m in await harness.store.list_active(OWNER)] == [
        "The user prefers black tea"
    ]
    await harness.say(OWNER, "ok")
    assert "nothing was saved" in newest_user_texts(harness)[-1]


@pytest.mark.engines
async def test_an_undo_tap_is_told_to_the_model_next_turn(harness):
    harness.model.script(tool_use("add_to_memory", TEA), text("Noted."))
    await harness.say(OWNER, "remember I like green tea")
    notice = last_to(harness, OWNER)
    [saved] = await harness.store.list_active(OWNER)
    await press(harness, notice, button(notice, "Undo"))
    await harness.say(OWNER, "what do I like?")
    assert newest_user_texts(harness)[-1] == (
        f'[Since your last reply the user tapped Undo on your save of [id:{saved.id}] "The '
        "user likes green tea\": it is not remembered. Don't redo it unasked.]"
    )
    assert "tapped Undo on your" not in harness.model.system_text()


async def test_a_tap_never_saves_a_secret_a_proposal_holds(harness):
    # A question asked before secrets were refused in code still holds one.
    question = await propose(harness)
    consent = harness.services.proposal_answers
    tea_id = int(button(question, "No").split(":")[1])
    await press(harness, question, button(question, "No"))
    tea = await consent.proposals.find(OWNER, tea_id)
    pin = ("The user's bank PIN is 4821", Category.CONTEXT, "bank PIN")
    secret = await consent.proposals.propose(OWNER, tea.conversation_id, None, pin)
    assert await press(harness, question, f"p:{secret.id}:y", as_is=True) == []
    answer = last_answer(harness)
    assert answer["show_alert"] and "looks like a secret" in answer["text"]
    assert await harness.store.list_active(OWNER) == []
    await harness.say(OWNER, "ok")
    assert "it looks like a PIN, and secrets are never kept" in newest_user_texts(harness)[-1]


GROUP = -100456


async def test_in_a_group_only_the_member_it_is_about_or_who_said_it_may_answer(harness):
    def ask(words: str, subject: str, content: str, user_id: int, name: str):
        harness.model.script(
            tool_use("propose_memory", {"content": content, "category": "preference",
                                        "subject": subject}),
            text("Noted."),
        )  # fmt: skip
        return harness.say(GROUP, f"@memory_test_bot {words}", user_id=user_id,
                           chat_type="supergroup", first_name=name)  # fmt: skip

    # Bob speaks about himself: Alice may neither accept nor decline it for him.
    await ask("I'm vegan", "Bob: diet", "Bob is vegan", FRIEND, "Bob")
    question = last_to(harness, GROUP)
    assert question["text"] == "Remember this? 'Bob is vegan'"
    for label in ("Remember", "No"):
        assert await press(harness, question, button(question, label), OWNER) == []
        answer = last_answer(harness)
        assert answer["show_alert"] and "Only the member this is about" in answer["text"]
    assert buttons(harness.tg.message(GROUP, question["message_id"]))
    assert await harness.store.list_active(GROUP) == []
    await press(harness, question, button(question, "Remember"), FRIEND, first_name="Bob")
    assert [m.content for m in await harness.store.list_active(GROUP)] == ["Bob is vegan"]

    # Alice says something about Bob: Bob, whom it is about, may accept it.
    await ask("Bob hates cilantro", "Bob: herbs", "Bob hates cilantro", OWNER, "Alice")
    question = last_to(harness, GROUP)
    await press(harness, question, button(question, "Remember"), FRIEND, first_name="Bob")
    assert last_answer(harness)["text"] == "Saved."
    assert len(await harness.store.list_active(GROUP)) == 2


def test_who_may_answer_a_groups_question():
    about_bob = Proposal(1, GROUP, 1, "Bob is vegan", Category.PREFERENCE, "Bob: diet",
                         ProposalStatus.PENDING, turn_id=9)  # fmt: skip
    alice, bob, carol = Member(OWNER, "Alice"), Member(FRIEND, "Bob Smith"), Member(3, "Carol")
    assert may_answer(about_bob, OWNER, alice)  # who said it
    assert may_answer(about_bob, OWNER, bob)  # whom it is about, by first name
    assert not may_answer(about_bob, OWNER, carol)
    shipping = replace(about_bob, category=Category.PROJECT, subject="shipping")
    assert may_answer(shipping, OWNER, alice) and not may_answer(shipping, OWNER, bob)
    person = replace(about_bob, category=Category.PERSON, subject="Carol")
    assert may_answer(person, OWNER, carol) and not may_answer(person, OWNER, bob)
