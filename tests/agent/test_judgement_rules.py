"""Issue 32's rules, each one rule everywhere: the instructions, the tool texts and the code.

Each test reads the rule where the model reads it (the instructions, a tool's description or
schema) and checks the code does what they say, so an edit to one side alone fails here.
"""

import re
from datetime import UTC, datetime

import pytest

from bot.agent.instructions import GROUP_RULES, STATIC_INSTRUCTIONS
from bot.agent.proposal_answers import Member, may_answer
from bot.agent.request import build_request
from bot.reminders.records import Place
from bot.reminders.store import ReminderStore
from bot.reminders.tools import REMINDER_TOOLS, ReminderTools
from bot.reminders.words import resolve_words
from memory.categories import Category
from memory.items import ProposalStatus
from memory.proposals import (
    MAX_FACTS,
    AskingBound,
    NewFact,
    Proposal,
    ProposalStore,
    ProposedFact,
)
from memory.tools import MEMORY_TOOLS, ToolContext, run_tool, tool_definitions
from memory.tools.proposal_texts import not_proposed
from tests.reminders.clock import FakeClock

FLAT = " ".join(STATIC_INSTRUCTIONS.split())
GROUP = " ".join(GROUP_RULES.split())
DEFINITIONS = {d["name"]: d for d in tool_definitions(MEMORY_TOOLS)}
REMINDERS = {t.name: " ".join(t.description.split()) for t in REMINDER_TOOLS}


def described(name: str) -> str:
    """Return a memory tool's description on one line."""
    return " ".join(DEFINITIONS[name]["description"].split())


def test_one_question_carries_every_fact_up_to_the_bound_in_code():
    facts = DEFINITIONS["propose_memory"]["input_schema"]["properties"]["facts"]
    assert facts["maxItems"] == MAX_FACTS
    assert f"one propose_memory call with every fact of that message (up to {MAX_FACTS}" in FLAT
    assert f"every fact (at most {MAX_FACTS}), a toggle each" in described("propose_memory")
    assert "at most one question per reply" in described("propose_memory")


def test_a_proposal_can_update_a_memory_shown_old_to_new():
    fact = DEFINITIONS["propose_memory"]["input_schema"]["properties"]["facts"]["items"]
    assert "memory_id" in fact["properties"] and "memory_id" not in fact["required"]
    assert "proposing an update of that memory (its memory_id; the user sees old -> new)" in FLAT
    assert "proposed as an update of that memory (its memory_id" in described("propose_memory")
    assert "shown old -> new" in described("propose_memory")


def test_in_a_group_only_the_member_it_is_about_answers_and_group_facts_need_no_name():
    schema = DEFINITIONS["propose_memory"]["input_schema"]["properties"]
    assert "only that member can answer" in schema["about"]["description"]
    assert "(only they can answer)" in described("propose_memory")
    assert "Only that member can answer its buttons" in GROUP
    assert "a fact about the whole group has no about and needs no name" in described(
        "propose_memory"
    )
    assert "needs no member's name" in GROUP and "the group's own facts need none" in FLAT
    # The code: the member it is about, never another one (not even who said it).
    fact = ProposedFact(1, "Bob is vegan", Category.PREFERENCE, "Bob: diet", ProposalStatus.PENDING)
    about_bob = Proposal(1, -1, 1, (fact,), about="Bob")
    assert may_answer(about_bob, Member(2, "Bob"))
    assert not may_answer(about_bob, Member(1, "Alice"))
    assert may_answer(Proposal(1, -1, 1, (fact,)), Member(1, "Alice"))


def test_the_group_section_is_sent_in_groups_only_and_is_static():
    assert GROUP_RULES not in STATIC_INSTRUCTIONS

    def system(group: bool) -> str:
        request = build_request(
            model="m", max_tokens=1, tools=[], memory_block="## Your Memory", summary=None,
            turns=[("user", [{"type": "text", "text": "hi"}])], group=group,
        )  # fmt: skip
        blocks = request["system"]
        assert isinstance(blocks, list)
        return blocks[0]["text"]

    assert system(True) == f"{STATIC_INSTRUCTIONS}\n{GROUP_RULES}"
    assert system(False) == STATIC_INSTRUCTIONS
    assert system(True) == system(True)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_dont_ask_again_means_in_this_conversation_everywhere(store, switch):
    assert "don't ask about it again in this conversation" in FLAT
    assert "don't ask about it again in this conversation" in described("propose_memory")
    assert "again in this conversation" in not_proposed(AskingBound.DECLINED, 3)
    # The code: a declined fact is refused in its conversation, and may be asked in the next.
    proposals = ProposalStore(store.sessionmaker)
    tea = NewFact("The user likes green tea", Category.PREFERENCE, "tea")
    asked = await proposals.propose(1, 10, 100, [tea])
    await proposals.answer(1, asked.facts[0].id, ProposalStatus.DECLINED)
    assert await proposals.propose(1, 10, 101, [tea]) is AskingBound.DECLINED
    assert not isinstance(await proposals.propose(1, 11, 102, [tea]), AskingBound)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_forgetting_is_only_when_asked_and_clear_sits_beside_delete_my_data(store, switch):
    forget = described("forget_memory")
    assert "only when the user asks you to" in forget and "never unasked" in forget
    assert "or when it no longer applies" not in forget
    assert "never forget a memory unasked" in FLAT
    for text in (FLAT, forget):
        assert "/memory clear" in text and "/delete_my_data" in text
    # The code: a forget needs an id of the owner's; nothing else is forgotten.
    kept = await store.add(1, "The user likes tea", Category.PREFERENCE, "tea")
    ctx = ToolContext(store, switch, 2)
    outcome = await run_tool(ctx, "forget_memory", {"memory_id": kept.id}, MEMORY_TOOLS)
    assert outcome.is_error and [m.id for m in await store.list_active(1)] == [kept.id]


NOW = datetime(2026, 11, 27, 13, 5, tzinfo=UTC)  # a Friday, 14:05 in Berlin


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_code_resolves_the_users_words_for_a_date_and_update_takes_only_what_changes(
    sessionmaker,
):
    assert "Never work out a date or time yourself: pass the user's own words" in FLAT
    assert "give only what changes" in FLAT
    for name in ("create_reminder", "update_reminder"):
        assert "never work out a date or time yourself" in REMINDERS[name]
        assert "never computed" not in REMINDERS[name]
    assert "give only what changes" in REMINDERS["update_reminder"]
    tools = ReminderTools(ReminderStore(sessionmaker), max_active=10, clock=FakeClock(NOW))
    ann = Place(owner_id=111, chat_id=111)
    await tools.store.set_zone(ann.owner_id, "Europe/Berlin")
    created = await tools.run(
        ann, "create_reminder", {"text": "call Sarah", "when": "next Friday at 9"}
    )
    assert not created.is_error and "Fri 4 Dec, 09:00" in created.content, created.content
    reminder_id = int(re.search(r"reminder (\d+)", created.content)[1])
    moved = await tools.run(ann, "update_reminder", {"reminder_id": reminder_id, "when": "5 pm"})
    assert not moved.is_error and "Fri 4 Dec, 17:00" in moved.content, moved.content
    both = {"text": "x", "when": "tomorrow at 9", "at_local": "2026-11-28T09:00"}
    refused = await tools.run(ann, "create_reminder", both)
    assert refused.is_error and "exactly one of when, at_local or in_duration" in refused.content
    no_time = await tools.run(ann, "create_reminder", {"text": "x", "when": "Friday"})
    assert no_time.is_error and "no time of day" in no_time.content


def test_the_users_words_for_a_date_are_read_against_the_local_clock():
    friday = datetime(2026, 11, 27, 14, 5)
    cases = {
        "next Friday at 9": datetime(2026, 12, 4, 9, 0),
        "on Friday at 9": datetime(2026, 12, 4, 9, 0),  # today's 9:00 is past
        "Friday at 9pm": datetime(2026, 11, 27, 21, 0),
        "tomorrow evening": datetime(2026, 11, 28, 18, 0),
        "tomorrow evening at 7": datetime(2026, 11, 28, 19, 0),
        "the day after tomorrow at noon": datetime(2026, 11, 29, 12, 0),
        "in 2 weeks at 8:30": datetime(2026, 12, 11, 8, 30),
        "3 December at 17:30": datetime(2026, 12, 3, 17, 30),
        "March 3 at 9": datetime(2027, 3, 3, 9, 0),
        "at 9": datetime(2026, 11, 28, 9, 0),
        "5 pm": datetime(2026, 11, 27, 17, 0),
    }
    assert {words: resolve_words(words, friday) for words in cases} == cases
    kept = datetime(2026, 12, 1, 9, 0)
    assert resolve_words("5 pm", friday, kept) == datetime(2026, 12, 1, 17, 0)
    assert resolve_words("Monday", friday, kept) == datetime(2026, 11, 30, 9, 0)
