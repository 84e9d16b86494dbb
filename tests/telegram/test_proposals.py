"""Memory questions with Remember and No buttons (propose_memory), the bounds on asking, and
the notes that tell the model what the user tapped (Remember, No, Undo) in its next request."""

import re
from dataclasses import replace

import pytest

from bot.agent.instructions import GROUP_RULES
from bot.agent.proposal_answers import Member, may_answer
from memory.categories import Category
from memory.items import ProposalStatus
from memory.proposals import NewFact, Proposal, ProposedFact
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


def asked(*facts: dict, about: str | None = None) -> dict:
    """Return propose_memory's arguments: one question of these facts."""
    return {"facts": list(facts), **({"about": about} if about else {})}


async def propose(harness, arguments: dict = TEA, words: str = "I always drink green tea"):
    """Have the model propose a memory while answering; return the question it shows."""
    if "facts" not in arguments:
        arguments = asked(arguments)
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
        '[Since your last reply the user tapped Remember on your memory question: "The user '
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
    harness.model.script(tool_use("propose_memory", asked(again)), text("Sure."))
    assert await harness.say(OWNER, "more tea please") == ["Sure."]
    assert "tapped No on your memory question" in newest_user_texts(harness, -2)[-1]
    result = result_of(harness)
    assert result["is_error"] is True and "declined" in result["content"]


async def test_one_proposal_per_reply_even_across_tool_rounds(harness):
    harness.model.script(
        tool_use("propose_memory", asked(TEA)),
        tool_use("propose_memory", asked(fact(1))),
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
    harness.model.script(tool_use("propose_memory", asked(fact(1))), text("Nice."))
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
    harness.model.script(tool_use("propose_memory", asked(fact(1))), text("Nice."))
    assert await harness.say(OWNER, "stamps, really") == [
        "Nice.",
        "Remember this? 'The user has hobby number 1'",
    ]
    await press(harness, last_to(harness, OWNER), button(last_to(harness, OWNER), "No"))
    harness.model.script(tool_use("propose_memory", asked(TEA)), text("Sure."))
    assert await harness.say(OWNER, "tea again") == ["Sure."]
    assert "left the question unanswered" in result_of(harness)["content"]


async def test_at_most_three_proposals_per_conversation(harness):
    for number in (1, 2, 3):
        question = await propose(harness, fact(number), f"hobby {number}")
        await press(harness, question, button(question, "No"))
    harness.model.script(tool_use("propose_memory", asked(fact(4))), text("Fun."))
    assert await harness.say(OWNER, "hobby 4") == ["Fun."]
    result = result_of(harness)
    assert result["is_error"] is True and "3 memory questions" in result["content"]

    # A new conversation may ask again.
    await harness.say(OWNER, "/new")
    question = await propose(harness, fact(4), "hobby 4 again")
    assert buttons(question)


async def test_the_setting_bounds_the_proposals(start_bot):
    harness = await start_bot(max_memory_proposals=0)
    harness.model.script(tool_use("propose_memory", asked(TEA)), text("Tea."))
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
    harness.model.script(tool_use("propose_memory", asked(fact(1))), text("Nice."))
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
    pin = NewFact("The user's bank PIN is 4821", Category.CONTEXT, "bank PIN")
    secret = await consent.proposals.propose(OWNER, tea.conversation_id, None, [pin])
    assert await press(harness, question, f"p:{secret.id}:y", as_is=True) == []
    answer = last_answer(harness)
    assert answer["show_alert"] and "looks like a secret" in answer["text"]
    assert await harness.store.list_active(OWNER) == []
    await harness.say(OWNER, "ok")
    assert "it looks like a PIN, and secrets are never kept" in newest_user_texts(harness)[-1]


GROUP = -100456


def in_group(harness, words: str, user_id: int, name: str):
    """Say words to the bot in the group as a member."""
    return harness.say(GROUP, f"@memory_test_bot {words}", user_id=user_id,
                       chat_type="supergroup", first_name=name)  # fmt: skip


async def test_in_a_group_only_the_member_a_question_is_about_may_answer_it(harness):
    # Alice says something about Bob: only Bob may answer, not Alice who said it.
    bob_diet = {"content": "Bob is vegan", "category": "preference", "subject": "Bob: diet"}
    harness.model.script(tool_use("propose_memory", asked(bob_diet, about="Bob")), text("Noted."))
    await in_group(harness, "Bob is vegan", OWNER, "Alice")
    question = last_to(harness, GROUP)
    assert question["text"] == "Remember this? 'Bob is vegan'"
    assert "Only Bob can answer it" in result_of(harness)["content"]
    for label in ("Remember", "No"):
        assert await press(harness, question, button(question, label), OWNER) == []
        answer = last_answer(harness)
        assert answer["show_alert"] and "Only the member this is about" in answer["text"]
    assert buttons(harness.tg.message(GROUP, question["message_id"]))
    assert await harness.store.list_active(GROUP) == []
    await press(harness, question, button(question, "Remember"), FRIEND, first_name="Bob")
    assert last_answer(harness)["text"] == "Saved."
    assert [m.content for m in await harness.store.list_active(GROUP)] == ["Bob is vegan"]
    # The group's own section of the instructions is sent in the group only.
    assert GROUP_RULES in harness.model.requests[-1]["system"][0]["text"]
    await harness.say(OWNER, "hi")
    assert GROUP_RULES not in harness.model.requests[-1]["system"][0]["text"]

    # A subject that names a member makes the question theirs, about or not; one member each.
    herbs = {"content": "Bob hates cilantro", "category": "preference", "subject": "Bob: herbs"}
    ann = {"content": "Ann likes basil", "category": "preference", "subject": "Ann: herbs"}
    harness.model.script(
        tool_use("propose_memory", asked(herbs, ann)),
        tool_use("propose_memory", asked(herbs)),
        text("Noted."),
    )
    await in_group(harness, "Bob hates cilantro, Ann likes basil", OWNER, "Alice")
    mixed, alone = result_of(harness, -2), result_of(harness, -1)
    assert mixed["is_error"] and "one question is about one member" in mixed["content"]
    assert "Only Bob can answer it" in alone["content"]


async def test_a_fact_about_the_whole_group_needs_no_name_and_any_member_answers(harness):
    meets = {"content": "The group meets every Thursday evening", "category": "context",
             "subject": "meeting day"}  # fmt: skip
    harness.model.script(tool_use("propose_memory", asked(meets)), text("Nice."))
    await in_group(harness, "we meet every Thursday evening", OWNER, "Alice")
    assert not result_of(harness).get("is_error")
    question = last_to(harness, GROUP)
    await press(harness, question, button(question, "Remember"), FRIEND, first_name="Bob")
    assert [m.subject for m in await harness.store.list_active(GROUP)] == ["meeting day"]
    # A member's own preference named in about needs their name in its subject.
    tea = {**TEA, "content": "Bob likes green tea"}
    harness.model.script(tool_use("propose_memory", asked(tea, about="Bob")), text("Ok."))
    await in_group(harness, "I like green tea", FRIEND, "Bob")
    result = result_of(harness)
    assert result["is_error"] and "'Bob: tea' for Bob" in result["content"]
    # add_to_memory saves the group's own fact without a name too.
    walk = {"content": "The group walks on Sundays", "category": "context", "subject": "walks"}
    harness.model.script(tool_use("add_to_memory", walk), text("Saved."))
    await in_group(harness, "remember we walk on Sundays", FRIEND, "Bob")
    assert not result_of(harness).get("is_error")


def test_who_may_answer_a_groups_question():
    fact = ProposedFact(1, "Bob is vegan", Category.PREFERENCE, "Bob: diet", ProposalStatus.PENDING)
    about_bob = Proposal(1, GROUP, 1, (fact,), turn_id=9, about="Bob")
    alice, bob, carol = Member(OWNER, "Alice"), Member(FRIEND, "Bob Smith"), Member(3, "Carol")
    assert may_answer(about_bob, bob)  # whom it is about, by first name
    assert not may_answer(about_bob, alice) and not may_answer(about_bob, carol)
    groups = replace(about_bob, about=None)
    assert all(may_answer(groups, m) for m in (alice, bob, carol))


async def test_one_question_carries_several_facts_each_with_a_toggle(harness):
    facts = asked(TEA, fact(1), fact(2))
    question = await propose(harness, facts, "I drink green tea and have two hobbies")
    assert question["text"] == (
        "Remember these?\n1. 'The user likes green tea'\n2. 'The user has hobby number 1'\n"
        "3. 'The user has hobby number 2'"
    )
    labels = [label for label, _ in buttons(question)]
    assert labels == [
        "\u2705 1. The user likes green tea", "\u2705 2. The user has hobby number 1",
        "\u2705 3. The user has hobby number 2", "Remember", "No",
    ]  # fmt: skip
    # The second fact toggled off: Remember saves the other two, each with its notice.
    toggle = buttons(question)[1][1]
    assert re.fullmatch(r"p:\d+:t", toggle)
    await press(harness, question, toggle)
    shown = harness.tg.message(OWNER, question["message_id"])
    assert buttons(shown)[1][0].startswith("\u2b1c 2.")
    said = await press(harness, shown, button(shown, "Remember"))
    assert said == [
        "1. Saved to memory: 'The user likes green tea'\n"
        "2. Saved to memory: 'The user has hobby number 2'"
    ]
    saved = {m.content for m in await harness.store.list_active(OWNER)}
    assert saved == {"The user likes green tea", "The user has hobby number 2"}
    await harness.say(OWNER, "ok")
    note = newest_user_texts(harness)[-1]
    assert 'hobby number 1": toggled off, not saved' in note and note.count("saved as") == 2


async def test_a_question_is_bounded_and_bad_arguments_get_a_clear_error(harness):
    harness.model.script(
        tool_use("propose_memory", asked(*(fact(n) for n in range(1, 7)))),
        tool_use("propose_memory", {"facts": ["The user likes tea"]}),
        tool_use("propose_memory", asked(TEA, {**fact(1), "subject": "Tea"})),
        text("Ok."),
    )
    assert await harness.say(OWNER, "so many hobbies") == ["Ok."]
    too_many, not_a_fact, same = (result_of(harness, i) for i in (-3, -2, -1))
    assert (
        too_many["is_error"] and "facts: List should have at most 5 items" in (too_many["content"])
    )
    assert not_a_fact["is_error"] and "facts.0" in not_a_fact["content"]
    assert same["is_error"] and "two facts have the subject" in same["content"]


async def test_a_question_can_update_a_memory_shown_old_to_new_with_undo(harness):
    old = await harness.store.add(OWNER, "The user likes green tea", Category.PREFERENCE, "tea")
    both = "The user likes green tea and, in the evening, chamomile"
    update = {**TEA, "content": both, "memory_id": old.id}
    question = await propose(harness, update, "chamomile in the evenings")
    assert question["text"] == f"Update this memory? 'The user likes green tea' \u2192 '{both}'"
    said = await press(harness, question, button(question, "Remember"))
    assert len(said) == 1 and both in said[0]
    notice = last_to(harness, OWNER)
    assert [label for label, _ in buttons(notice)] == ["Undo"]
    [memory] = await harness.store.list_active(OWNER)
    assert (memory.content, memory.version) == (both, 2)
    # An id that is not the owner's is refused before anything is asked.
    harness.model.script(
        tool_use("propose_memory", asked({**update, "memory_id": "ZZZZZZZZ"})), text("Hm.")
    )
    await harness.say(OWNER, "and mint")
    assert "No memory with id 'ZZZZZZZZ'" in result_of(harness)["content"]
