"""Scripted models for the evaluation's tests: each answers a request body with a Reply.

A model here answers compaction's summary requests and the judge's questions itself, so a
script only describes the agent's side: what to do on a user's message and on a tool result.
"""

import re
from collections.abc import Callable, Sequence
from typing import Any

from bot.agent.history.compaction import SUMMARY_INSTRUCTIONS
from bot.conversations.content import result_text
from evals.judge import JUDGE_SYSTEM
from tests.fakes.anthropic_server import Reply, text, tool_use

Body = dict[str, Any]
Step = Reply | Callable[[Body], Reply]
Model = Callable[[Body], Reply]

SAVED_AS = re.compile(r"Saved as ([A-Za-z0-9]{8})")


def newest(body: Body) -> tuple[str, str]:
    """Return ("user", text without its date line) or ("result", tool result text)."""
    blocks = body["messages"][-1]["content"]
    results = [b for b in blocks if b.get("type") == "tool_result"]
    if results:
        return "result", "\n".join(result_text(b.get("content", "")) for b in results)
    said = "\n".join(b["text"] for b in blocks if b.get("type") == "text")
    return "user", said.split("\n", 1)[-1]


def all_text(body: Body) -> str:
    """Return every text and tool result of the messages, as one string."""
    parts = []
    for message in body["messages"]:
        for block in message["content"]:
            content = block.get("content")
            parts.append(str(block.get("text") or (content and result_text(content)) or ""))
    return "\n".join(parts)


def block_id(body: Body, pattern: str) -> str:
    """Return the id of the memory block's line that matches pattern (not the instructions')."""
    return _first_id(rf"^- \[id:(\w{{8}})\][^\n]*{pattern}", body["system"][1]["text"])


def ledger_id(body: Body, pattern: str) -> str:
    """Return the id of the summary's listed save whose line matches pattern."""
    return _first_id(rf"^- saved \[id:(\w{{8}})\][^\n]*{pattern}", body["system"][2]["text"])


def found_id(body: Body, pattern: str) -> str:
    """Return the id of the line of the newest search_memory result that matches pattern."""
    return _first_id(rf"^- \[id:(\w{{8}})\][^\n]*{pattern}", newest(body)[1])


def _first_id(pattern: str, text: str) -> str:
    """Return the id the first line matching pattern captures; fail the test if none does."""
    match = re.search(pattern, text, re.MULTILINE)
    assert match is not None, f"no line matches {pattern!r} in:\n{text}"
    return match.group(1)


def last_saved_id(body: Body) -> str:
    """Return the id the newest add_to_memory result in the history gave."""
    return SAVED_AS.findall(all_text(body))[-1]


def chat(
    on_user: list[tuple[str, Step]],
    on_result: Sequence[tuple[str, Step]] = (),
    after_tool: str = "Done.",
    otherwise: str = "Sure.",
) -> Model:
    """Return a model that answers the first step whose needle is in what it just got."""

    def respond(body: Body) -> Reply:
        if body.get("system") == SUMMARY_INSTRUCTIONS:
            return text("The user shared parts of an essay and got short feedback.")
        if body.get("system") == JUDGE_SYSTEM:
            return text("yes")
        kind, got = newest(body)
        steps = on_user if kind == "user" else on_result
        for needle, step in steps:
            if needle in got:
                return step(body) if callable(step) else step
        return text(after_tool if kind == "result" else otherwise)

    return respond


def add(content: str, category: str, subject: str | None = None, **extra: Any) -> Reply:
    """Return a reply that calls add_to_memory."""
    arguments = {"content": content, "category": category, **extra}
    if subject:
        arguments["subject"] = subject
    return tool_use("add_to_memory", arguments)


def saying(reply: str) -> Model:
    """Return a model that answers every agent request with the same text."""
    return chat([], after_tool=reply, otherwise=reply)


def eager(body: Body) -> Reply:
    """A model that saves whatever the user says, at once, and then asks to save more."""
    respond = chat(
        [
            (
                "",
                # A "Name: topic" subject, so a group's rule for subjects does not stop it.
                lambda b: add(
                    f"The user said: {newest(b)[1]}"[:500], "context", f"Said: {newest(b)[1][:90]}"
                ),
            )
        ],
        after_tool="Saved! Should I remember anything else?",
    )
    return respond(body)
