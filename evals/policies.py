"""The memory policies the system prompt and the tool descriptions must both state.

A model reads the instructions once and a tool's description when it decides to call it, so
the two must not disagree. Each policy is a pair of patterns per tool: how the instructions
say it, and how that tool's description says it. A one-sided edit (a rule inverted in one
place only) leaves one pattern without a match.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

SECRET_KINDS = r"passwords, PINs, API keys, one-time codes, full card, bank or ID numbers"
SENSITIVE = r"Health, money, religion, politics: only when the user asks you to remember it"


@dataclass(frozen=True)
class Policy:
    """One rule, as the instructions state it and as each named tool states it."""

    name: str
    in_instructions: str
    in_tools: tuple[tuple[str, str], ...]  # (tool name, pattern in its description)


POLICIES = (
    Policy(
        "secrets",
        rf"\bNever save secrets, even when asked: {SECRET_KINDS}\.",
        (("add_to_memory", rf"\bNever for secrets, even when asked: {SECRET_KINDS}\b"),),
    ),
    Policy(
        "pointers",
        r"\bWhere a secret is kept is fine\b",
        (("add_to_memory", r"\(where one is kept is fine\)"),),
    ),
    Policy(
        "sensitive topics",
        rf"\b{SENSITIVE}; never offer\.",
        (("add_to_memory", rf"\b{SENSITIVE}\."),),
    ),
    Policy(
        "subjects",
        r"\bAlways give a subject\b[^#]*\(\"Ann: diet\"\)",
        (("add_to_memory", r"\bAlways give a subject \(in a group, 'Ann: diet' for Ann's\)"),),
    ),
    Policy(
        "asking",
        r"\bsaid in passing\b[^#]*\bdon't save it yet\. Answer, then ask with propose_memory\b"
        r"[^#]*\bonly at a natural pause, never mid-task and never in two replies in a row\b"
        r"[^#]*\bOnly a tap of Remember or a clear yes counts\b",
        (
            ("add_to_memory", r"\bat once when asked to remember something, or after a clear yes "),
            (
                "propose_memory",
                r"\bAsk only at a natural pause, never in two replies in a row, at most one "
                r"question per reply\b",
            ),
        ),
    ),
    Policy(
        "one fact never replaces another",
        r"\bnever losing the old one; one fact never replaces another, nor another person's\b",
        (
            ("update_memory", r"\bkeep the old fact in it\. Never replace another person's\b"),
            ("add_to_memory", r"\bhow to add to it without losing it\b"),
        ),
    ),
)


def policy_gaps(
    instructions: str, tools: Sequence[dict[str, Any]], policies: Sequence[Policy] = POLICIES
) -> list[str]:
    """Return where a policy is not stated as it should be: 'policy: place', one per gap."""
    flat = " ".join(instructions.split())
    descriptions = {tool["name"]: " ".join(tool.get("description", "").split()) for tool in tools}
    gaps = []
    for policy in policies:
        if not re.search(policy.in_instructions, flat):
            gaps.append(f"{policy.name}: the instructions")
        for tool, pattern in policy.in_tools:
            if not re.search(pattern, descriptions.get(tool, "")):
                gaps.append(f"{policy.name}: {tool}")
    return gaps
