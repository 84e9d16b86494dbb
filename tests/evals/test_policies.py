"""The system prompt and the tool descriptions state the same policies; a one-sided edit fails.

The mutations are the regressions a paid run would otherwise be the first to notice.
"""

import pytest

from bot.agent.instructions import STATIC_INSTRUCTIONS
from evals.policies import POLICIES, policy_gaps
from memory.tools import MEMORY_TOOLS, ToolDefinition, tool_definitions

TOOLS = tool_definitions(MEMORY_TOOLS)


def described(tool: str, old: str, new: str) -> list[ToolDefinition]:
    """Return the tool definitions with one description edited (it must contain old)."""
    tools = tool_definitions(MEMORY_TOOLS)
    [definition] = [t for t in tools if t["name"] == tool]
    assert old in definition["description"]
    definition["description"] = definition["description"].replace(old, new)
    return tools


def instructed(old: str, new: str) -> str:
    """Return the instructions with one passage edited (it must contain old)."""
    flat = " ".join(STATIC_INSTRUCTIONS.split())
    assert old in flat
    return flat.replace(old, new)


def test_the_instructions_and_the_tools_state_every_policy():
    assert policy_gaps(STATIC_INSTRUCTIONS, TOOLS) == []
    assert {p.name for p in POLICIES} >= {
        "secrets", "pointers", "sensitive topics", "subjects", "asking"
    }  # fmt: skip


MUTATIONS = [
    pytest.param(
        instructed("Never save secrets, even when asked:", "Save secrets when asked:"),
        TOOLS,
        ["secrets: the instructions"],
        id="inverted secrets rule",
    ),
    pytest.param(
        instructed(
            "don't save it yet. Answer, then ask with propose_memory,",
            "save it at once without asking,",
        ),
        TOOLS,
        ["asking: the instructions"],
        id="inverted ask-first rule",
    ),
    pytest.param(
        STATIC_INSTRUCTIONS,
        described("add_to_memory", "Never for secrets, even when asked", "Also for secrets"),
        ["secrets: add_to_memory"],
        id="a tool description that allows secrets",
    ),
    pytest.param(
        STATIC_INSTRUCTIONS,
        described("add_to_memory", "or after a clear yes to your question", "or unasked"),
        ["asking: add_to_memory"],
        id="a tool description that saves unasked",
    ),
    pytest.param(
        instructed("never mid-task and never in two replies in a row", "whenever you like"),
        TOOLS,
        ["asking: the instructions"],
        id="asking in every reply allowed in the instructions",
    ),
    pytest.param(
        STATIC_INSTRUCTIONS,
        described("propose_memory", "never in two replies in a row, ", ""),
        ["asking: propose_memory"],
        id="asking in every reply allowed by propose_memory",
    ),
    pytest.param(
        instructed("Health, money, religion, politics:", "Health, money:"),
        TOOLS,
        ["sensitive topics: the instructions"],
        id="sensitive topics narrowed in one place",
    ),
    pytest.param(
        STATIC_INSTRUCTIONS,
        described("add_to_memory", "(where one is kept is fine)", ""),
        ["pointers: add_to_memory"],
        id="pointers dropped from the tool",
    ),
    pytest.param(
        instructed("Always give a subject", "Give a subject if you like"),
        TOOLS,
        ["subjects: the instructions"],
        id="subjects made optional in one place",
    ),
    pytest.param(
        STATIC_INSTRUCTIONS,
        described("update_memory", "Never replace another person's memory.", ""),
        ["one fact never replaces another: update_memory"],
        id="another person's memory replaceable",
    ),
]


@pytest.mark.parametrize(("instructions", "tools", "gaps"), MUTATIONS)
def test_a_one_sided_edit_is_a_gap(instructions, tools, gaps):
    assert policy_gaps(instructions, tools) == gaps
