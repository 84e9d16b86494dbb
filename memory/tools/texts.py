"""What the memory tools tell the model: their descriptions, and every result they return."""

import re
from collections.abc import Sequence
from datetime import tzinfo

from memory.block import quoted
from memory.budget import MemoryFull
from memory.ids import ID_REGEX
from memory.items import MemoryChange, MemoryItem

# How a write's result begins, for code that reads stored results back (compaction's list of
# memory changes): kept beside the functions that write them, so the two stay in step.
SAVED_RESULT = re.compile(rf"^Saved as ({ID_REGEX})\b")
UPDATED_RESULT = re.compile(rf"^Updated ({ID_REGEX}) \(version \d+\)")
FORGOT_RESULT = re.compile(rf"^Forgot ({ID_REGEX}) \('(.*)'\)\. The user can undo", re.DOTALL)

ADD_DESCRIPTION = (
    "Save a new long-term memory about the user, kept across conversations. Use it when the "
    "user explicitly asks you to remember something, or after the user agreed when you asked. "
    "Never for one-off task details, and never for secrets (passwords, PINs, keys, codes, card "
    "or account numbers), even when asked. If a memory about the same subject exists, use "
    "update_memory instead. Returns the new memory's id."
)
UPDATE_DESCRIPTION = (
    "Replace the content of an existing memory when a fact has changed (e.g. someone moved "
    "teams) or should be corrected. Keeps the same id and records a new version. Give the "
    "complete new content, not a diff. Works on any memory id, in the block or found by "
    "search_memory."
)
FORGET_DESCRIPTION = (
    'Forget an existing memory when the user asks you to forget it ("forget that Alec is my '
    'boss") or says it no longer applies at all. Use update_memory instead when the fact '
    "changed. The user can undo this."
)
SEARCH_MEMORY_DESCRIPTION = (
    "Search all of your memories about the user, including the archived ones that are not in "
    "the memory block. Use it before saying you don't know something about the user. Returns "
    "up to 10 memories, best match first, each with its id, category, subject, content, last "
    "change date and whether it is in the block."
)
SEARCH_CONVERSATIONS_DESCRIPTION = (
    'Search what you and the user said in earlier conversations ("what did we say about the '
    'lease in March?"). Returns up to 10 matching messages, newest first, each with its date '
    "and who said it. Use words likely to appear in the messages."
)


def saved(change: MemoryChange) -> str:
    """Say which id a new memory was saved as."""
    return f"Saved as {change.item.id}{archived_note(change)}"


def updated(change: MemoryChange) -> str:
    """Say which memory was updated, from what to what."""
    before, after = change.previous, change.item
    return (
        f"Updated {after.id} (version {after.version}). "
        f"Old: '{before.content}'. New: '{after.content}'{archived_note(change)}."
    )


def forgot(item: MemoryItem) -> str:
    """Say which memory was forgotten, with its content."""
    return f"Forgot {item.id} ('{item.content}'). The user can undo this from the chat."


def same_subject(existing: MemoryItem) -> str:
    """Say a memory with this subject exists, and to update it instead."""
    return (
        f"Not saved: memory {existing.id} already has the subject '{existing.subject}' "
        f"('{existing.content}'). Call update_memory with memory_id '{existing.id}' and the "
        "full new content instead."
    )


def memory_full(refusal: MemoryFull) -> str:
    """Say the owner has as many memories as the bot keeps."""
    return (
        f"Not saved: the user has {refusal.count} memories, the most kept. Tell the user; "
        "they can delete some with /memory, or ask you to merge or forget some."
    )


def not_found(memory_id: str, alternative: str = "") -> str:
    """Say no memory has this id."""
    rest = f", {alternative} to save a new memory" if alternative else ""
    return (
        f"No memory with id '{memory_id}' exists. Use an id shown in the memory block or "
        f"returned by search_memory{rest}."
    )


def archived_note(change: MemoryChange) -> str:
    """Say which memories a change moved out of the block, if any."""
    if not change.archived:
        return ""
    ids = ", ".join(item.id for item in change.archived)
    return (
        f"; to make room, older memories left the prompt for the archive ({ids}), where "
        "search_memory finds them"
    )


def found_memories(
    query: str, items: Sequence[MemoryItem], in_block: set[str], zone: tzinfo
) -> str:
    """List the memories a search found, with what the model needs to act on each."""
    if not items:
        return f"No memory matches {quoted(query)}. Do not guess; say you don't know."
    lines = [f"{len(items)} memories match {quoted(query)}, best first:"]
    for item in items:
        subject = f", subject {quoted(item.subject)}" if item.subject else ""
        where = "in the block" if item.id in in_block else "archived"
        changed = item.updated_at.astimezone(zone).strftime("%Y-%m-%d")
        lines.append(
            f"- [id:{item.id}] {item.category.value}{subject}, changed {changed}, {where}: "
            f"{quoted(item.content)}"
        )
    return "\n".join(lines)


def found_turns(query: str, hits: Sequence, zone: tzinfo) -> str:
    """List the earlier messages a search found, newest first, with date and speaker."""
    if not hits:
        return f"No earlier message matches {quoted(query)}."
    lines = [f"{len(hits)} earlier messages match {quoted(query)}, newest first:"]
    for hit in hits:
        when = hit.said_at.astimezone(zone).strftime("%Y-%m-%d %H:%M")
        who = "the user" if hit.role == "user" else "you"
        lines.append(f"- {when}, {who} said: {quoted(hit.excerpt)}")
    return "\n".join(lines)
