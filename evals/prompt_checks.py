"""What the model is told, as data to check: the instructions' rules and the tools' descriptions.

Each rule of the instructions (the group section's too) and each tool's description is
checked against its pinned words (evals/pins.py), whole: a rule inverted, a sentence added to
a rule that contradicts it, a rule dropped, added or moved, a tool description changed, each
breaks a check of its own. The policies both sides must state (evals/policies.py) are checked
too. The checks take a Prompt, so a test can hand them a mutated copy
(tests/evals/test_mutations.py).
"""

import dataclasses
from dataclasses import dataclass

from bot.agent.instructions import GROUP_SECTION, RULES
from bot.agent.rules import Rule, RuleName, joined
from bot.reminders.tools import REMINDER_TOOLS
from evals.pins import PINNED_RULES, PINNED_TOOLS
from evals.policies import policy_gaps
from memory.tools import MEMORY_TOOLS

# The rules of the group section: sent after the instructions, in group chats only.
GROUP_ONLY = frozenset(rule.name for rule in GROUP_SECTION)


@dataclass(frozen=True)
class Prompt:
    """The instructions as named rules (the group section's last), and each tool's description."""

    rules: tuple[Rule, ...]
    tools: tuple[tuple[str, str], ...]

    @property
    def instructions(self) -> str:
        """Return the instructions the rules make, as the bot sends them in every chat."""
        return joined(tuple(rule for rule in self.rules if rule.name not in GROUP_ONLY))

    @property
    def group_section(self) -> str:
        """Return the section the group rules make, sent after the instructions in groups."""
        return joined(tuple(rule for rule in self.rules if rule.name in GROUP_ONLY))

    def description(self, tool: str) -> str | None:
        """Return a tool's description, or None when there is no such tool."""
        return dict(self.tools).get(tool)

    def rule(self, name: RuleName) -> Rule | None:
        """Return the rule of that name, or None when there is none."""
        return next((rule for rule in self.rules if rule.name == name), None)

    def with_rule(self, name: RuleName, text: str | None) -> "Prompt":
        """Return a copy with one rule's words replaced, or the rule left out (None)."""
        if text is None:
            rules = tuple(rule for rule in self.rules if rule.name != name)
        else:
            rules = tuple(
                rule if rule.name != name else dataclasses.replace(rule, text=text)
                for rule in self.rules
            )
        return dataclasses.replace(self, rules=rules)

    def with_tool(self, tool: str, description: str) -> "Prompt":
        """Return a copy with one tool's description replaced."""
        tools = tuple((name, description if name == tool else old) for name, old in self.tools)
        return dataclasses.replace(self, tools=tools)


def current_prompt() -> Prompt:
    """Return what the bot tells the model today: its rules (a group's too) and its tools."""
    tools = [(tool.name, tool.description) for tool in MEMORY_TOOLS]
    tools += [(tool.name, tool.description) for tool in REMINDER_TOOLS]
    return Prompt((*RULES, *GROUP_SECTION), tuple(tools))


def _differs(what: str, said: str | None, pinned: str) -> str | None:
    """Say how a text differs from its pinned words, or None when it does not."""
    if said is None:
        return f"{what} is missing; pinned: {pinned!r}"
    return None if said == pinned else f"{what} says {said!r}; pinned: {pinned!r}"


def rule_break(prompt: Prompt, name: RuleName) -> str | None:
    """Say how a rule differs from its pinned words (whole), or None when it does not."""
    rule = prompt.rule(name)
    return _differs(f"rule {name.value}", rule.text if rule else None, PINNED_RULES[name])


def order_break(prompt: Prompt) -> str | None:
    """Say when the rules are not the pinned ones in the pinned order (one added, moved...)."""
    names = [rule.name for rule in prompt.rules]
    return None if names == list(PINNED_RULES) else f"rules in order: {names}"


def tool_break(prompt: Prompt, tool: str) -> str | None:
    """Say how a tool's description differs from its pinned words, or None."""
    return _differs(f"tool {tool}", prompt.description(tool), PINNED_TOOLS[tool])


def breaks(prompt: Prompt) -> dict[str, str]:
    """Return every check the prompt fails, by the check's name, with the reason."""
    found = {f"rule:{name.value}": rule_break(prompt, name) for name in RuleName}
    found["order"] = order_break(prompt)
    found |= {f"tool:{tool}": tool_break(prompt, tool) for tool in PINNED_TOOLS}
    if set(dict(prompt.tools)) != set(PINNED_TOOLS):
        found["tools"] = f"tools: {sorted(dict(prompt.tools))}"
    definitions = [{"name": name, "description": text} for name, text in prompt.tools]
    for gap in policy_gaps(prompt.instructions, definitions):
        found[f"policy:{gap}"] = "not stated as evals/policies.py says"
    return {name: reason for name, reason in found.items() if reason is not None}
