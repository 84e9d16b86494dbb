"""The memory changes of the turns compaction folds away, listed by code, word for word.

The memory block is made when a conversation starts, so what the model saves, updates or
forgets later exists only in its tool results; once compaction folds those away, a summariser
could drop or garble an id, and the model would then add a duplicate or ask again. So every
summary ends with this list, read from the stored tool calls and their results, and each
compaction carries the previous summary's list over before adding its own.
"""

from collections.abc import Iterable, Sequence

from anthropic.types import ToolResultBlockParam, ToolUseBlockParam

from bot.conversations.snapshot import StoredTurn
from memory.block import quoted
from memory.tools.texts import FORGOT_RESULT, SAVED_RESULT, UPDATED_RESULT

# A line of its own that no line of the list can equal (each of those starts "- ").
LEDGER_HEADING = (
    "Memory changes made earlier in this conversation, from your tool results (the memory "
    "block does not show them; use these ids):"
)


def _result_text(block: ToolResultBlockParam) -> str:
    """Return a tool_result's content as text."""
    content = block.get("content", "")
    if isinstance(content, str):
        return content
    return "\n".join(part["text"] for part in content if part["type"] == "text")


def _change_line(call: ToolUseBlockParam, result: str) -> str | None:
    """Return the list's line for one successful write, or None for anything else."""
    name, arguments = call["name"], call["input"]
    content = str(arguments.get("content", ""))
    if name == "add_to_memory" and (match := SAVED_RESULT.match(result)):
        subject = arguments.get("subject")
        about = f"{quoted(str(subject))}: " if subject else ""
        return f"- saved [id:{match.group(1)}] {about}{quoted(content)}"
    if name == "update_memory" and (match := UPDATED_RESULT.match(result)):
        return f"- updated [id:{match.group(1)}] to {quoted(content)}"
    if name == "forget_memory" and (match := FORGOT_RESULT.match(result)):
        return f"- forgot [id:{match.group(1)}] {quoted(match.group(2))}"
    return None


def memory_changes(turns: Sequence[StoredTurn]) -> list[str]:
    """Return a line per memory saved, updated or forgotten in the turns, in order."""
    blocks = [block for turn in turns for block in turn.content]
    results = {
        block["tool_use_id"]: block
        for block in blocks
        if block["type"] == "tool_result" and not block.get("is_error")
    }
    lines = []
    for block in blocks:
        if block["type"] != "tool_use" or (result := results.get(block["id"])) is None:
            continue
        if line := _change_line(block, _result_text(result)):
            lines.append(line)
    return lines


def split_summary(summary: str | None) -> tuple[str | None, list[str]]:
    """Return a stored summary's prose (None if it has none) and its list of changes."""
    if not summary:
        return None, []
    lines = summary.split("\n")
    # The last heading line is ours: prose may quote the heading, list lines cannot equal it.
    at = max((i for i, line in enumerate(lines) if line == LEDGER_HEADING), default=None)
    listed = [line for line in lines[at + 1 :] if line] if at is not None else []
    if at is None or not all(line.startswith("- ") for line in listed):
        return summary, []
    return "\n".join(lines[:at]).strip() or None, listed


def join_summary(prose: str | None, changes: Iterable[str]) -> str | None:
    """Return the summary to store: the prose, then the list of changes if there are any."""
    listed = list(changes)
    ledger = "\n".join([LEDGER_HEADING, *listed]) if listed else ""
    return "\n\n".join(part for part in (prose, ledger) if part) or None
