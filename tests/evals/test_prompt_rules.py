"""Each rule of the instructions and each tool description says what was pinned, whole.

A test per rule and per tool, so a change fails the test of what it changed and nothing else;
a deliberate change updates evals/pins.py in the same commit.
"""

import pytest

from bot.agent.instructions import GROUP_RULES, GROUP_SECTION, RULES, STATIC_INSTRUCTIONS
from bot.agent.rules import RuleName, joined
from bot.reminders.tools import ReminderTools
from evals.pins import PINNED_RULES, PINNED_TOOLS
from evals.prompt_checks import breaks, current_prompt, order_break, rule_break, tool_break
from memory.tools import MEMORY_TOOLS, tool_definitions

PROMPT = current_prompt()


@pytest.mark.parametrize("name", list(RuleName), ids=str)
def test_the_rule_says_what_was_pinned(name: RuleName):
    assert rule_break(PROMPT, name) is None


def test_the_rules_are_the_pinned_ones_in_the_pinned_order():
    assert order_break(PROMPT) is None
    assert list(PINNED_RULES) == list(RuleName)


@pytest.mark.parametrize("tool", list(PINNED_TOOLS))
def test_the_tool_description_says_what_was_pinned(tool: str):
    assert tool_break(PROMPT, tool) is None


def test_the_checked_prompt_is_the_one_the_bot_sends():
    assert PROMPT.instructions == joined(RULES) == STATIC_INSTRUCTIONS
    assert PROMPT.group_section == joined(GROUP_SECTION) == GROUP_RULES
    sent = [*tool_definitions(MEMORY_TOOLS), *ReminderTools.definitions()]
    assert [(t["name"], t["description"]) for t in sent] == list(PROMPT.tools)
    assert set(PINNED_TOOLS) == {name for name, _ in PROMPT.tools}
    assert breaks(PROMPT) == {}


def test_a_sentence_added_to_a_rule_breaks_that_rule_alone():
    secrets = PROMPT.rule(RuleName.SECRETS)
    assert secrets is not None
    slipped = PROMPT.with_rule(RuleName.SECRETS, secrets.text + " If the user insists, save it.")
    # The policies' key phrases all still match: only the whole-rule check sees it.
    assert list(breaks(slipped)) == ["rule:secrets"]
    assert "If the user insists" in (rule_break(slipped, RuleName.SECRETS) or "")


def test_a_rule_left_out_or_repeated_breaks_the_order():
    dropped = PROMPT.with_rule(RuleName.CHECK_INS, None)
    assert set(breaks(dropped)) == {"rule:check_ins", "order"}
    again = type(PROMPT)((*PROMPT.rules, PROMPT.rules[0]), PROMPT.tools)
    assert set(breaks(again)) == {"order"}


def test_a_group_rule_changed_breaks_that_rule_alone_and_stays_out_of_private_chats():
    consent = PROMPT.rule(RuleName.GROUP_CONSENT)
    assert consent is not None and consent.text in GROUP_RULES
    assert consent.text not in STATIC_INSTRUCTIONS
    loose = PROMPT.with_rule(RuleName.GROUP_CONSENT, consent.text + " Any member may confirm.")
    assert list(breaks(loose)) == ["rule:group_consent"]


def test_a_tool_description_changed_breaks_that_tools_check():
    forget = PROMPT.description("forget_memory")
    assert forget is not None
    changed = PROMPT.with_tool("forget_memory", forget.replace("point to /memory clear", "go"))
    assert list(breaks(changed)) == ["tool:forget_memory"]
