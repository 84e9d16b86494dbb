"""What the memory tools tell the model: their descriptions, and every result they return."""

from collections.abc import Sequence
from datetime import tzinfo

from memory.block import quoted
from memory.budget import MemoryFull
from memory.items import MemoryChange, MemoryItem
from memory.tools.base import FoundTurn

# The same policy as the system prompt (bot/agent/instructions.py), in the same words: a
# model reads a tool's description when it decides to call it, so the two must not disagree.
ADD_DESCRIPTION = (
    "Save a new long-term memory: at once when asked to remember something, or after a "
    "clear yes to your question (propose_memory). Never for secrets, even when asked: "
    "passwords, PINs, API keys, one-time codes, full card, bank or ID numbers (where one is"
    " kept is fine). Health, money, religion, politics: only when the user asks you to "
    "remember it. Always give a subject (in a group, 'Ann: diet' for Ann's); if a memory "
    "has it, shown or archived, nothing is saved and you are told how to add to it without "
    "losing it. Returns the new id (the block shows it only from the next conversation)."
)
PROPOSE_DESCRIPTION = (
    "Ask whether to remember the lasting facts of the user's message said in passing: one "
    "question under your reply shows every fact (at most 5), a toggle each, with Remember and "
    "No buttons, and saves the chosen ones only on a tap of Remember or a clear yes. Use this "
    "to ask, never a question in words. A fact about a subject you already have is proposed "
    "as an update of that memory (its memory_id, content keeping the old fact), shown old -> "
    "new. Each fact follows add_to_memory's rules: never secrets; health, money, religion, "
    "politics: never offer. In a group, about names the member the facts are about (only "
    "they can answer); a fact about the whole group has no about and needs no name. Ask only "
    "at a natural pause, never in two replies in a row, at most one question per reply; a "
    "no, or no answer in the user's next message (the question then expires), means don't ask "
    "about it again in this conversation. Returns whether it is shown."
)
UPDATE_DESCRIPTION = (
    "Replace a memory's content when a fact changed or was wrong; the id stays, a new version "
    "is kept. Give the complete new content; to add another fact about the same subject, "
    "keep the old fact in it. Never replace another person's memory. Any id: from the "
    "memory block, this conversation's tool results or summary, or search_memory."
)
FORGET_DESCRIPTION = (
    'Forget one memory only when the user asks you to ("forget that Alec is my boss"), never '
    'unasked: a fact that changed is updated instead (update_memory). For "forget everything", '
    "point to /memory clear instead (it forgets every memory; conversations are still kept), "
    "or /delete_my_data to delete everything the bot keeps. The user can undo this."
)
SEARCH_MEMORY_DESCRIPTION = (
    "Search all memories, archived ones too. Call it before saying you don't know something "
    "about the user, and before adding when some are archived. Returns up to 10, best first, "
    "each a search result: its title has the id, category, subject, last change date and "
    "whether it is in the block; its text is the content."
)
SEARCH_CONVERSATIONS_DESCRIPTION = (
    'Search what you and the user said in earlier conversations ("what did we say about the '
    'lease in March?"), and earlier in this one where only its summary is left. Returns up to '
    "10 messages, best matches first (by their words, and by meaning when that is on), each "
    "whole (long ones cut) with date and speaker, a short one with the message before it; "
    'order "newest" gives the latest first ("what did we last say about ..."). Use words '
    "likely to appear in them, and names."
)


def saved(change: MemoryChange) -> str:
    """Say which id a new memory was saved as."""
    return f"Saved as {change.item.id}{archived_note(change)}"


def updated(change: MemoryChange) -> str:
    """Say which memory was updated, from what to what."""
    after = change.item
    before = change.previous.content if change.previous else ""
    return (
        f"Updated {after.id} (version {after.version}). "
        f"Old: '{before}'. New: '{after.content}'{archived_note(change)}."
    )


def forgot(item: MemoryItem) -> str:
    """Say which memory was forgotten, with its content."""
    return f"Forgot {item.id} ('{item.content}'). The user can undo this from the chat."


def same_subject(existing: MemoryItem, others: str | None = None) -> str:
    """Say a memory with this subject exists: update it, add to it, or pick another subject.

    others names the group member the memory belongs to when it is not the speaker's.
    """
    head = (
        f"Not saved: memory {existing.id} already has the subject '{existing.subject}' "
        f"('{existing.content}')."
    )
    if others:
        return (
            f"{head} It is {others}'s memory: never replace or change it for someone else's "
            "fact. Call add_to_memory again with a subject that starts with the name of the "
            "person this fact is about."
        )
    return (
        f"{head} If the same thing changed or was wrong, call update_memory on "
        f"'{existing.id}' with the new content. If this is another fact about the same "
        f"subject, call update_memory on '{existing.id}' with content that keeps the old "
        "fact and adds the new one (unless the user asked you to remember it, ask first: "
        f"propose_memory with memory_id '{existing.id}'). If it is about something else, call "
        "add_to_memory again with a more specific subject. Never drop the old fact to make "
        "room for the new one."
    )


def needs_person(subject: str, person: str) -> str:
    """Say a group member's own preference or context needs their name in its subject."""
    return (
        "In a group, the subject of a member's own preference or context starts with their "
        f"name, such as '{person}: {subject}' for {person}, whom it is about (a fact about the "
        "whole group needs no name: then leave about out)."
    )


def secret_refused(what: str) -> str:
    """Say a memory was refused because it holds a secret, and what to tell the user."""
    return (
        f"Not saved: this looks like {what}, and secrets are never kept in memory. Tell the "
        "user memory is not the place for it and suggest a password manager; where it is "
        "kept ('the Wi-Fi password is on the router') may be saved."
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


def found_memories(query: str, count: int) -> str:
    """Say how many memories a search found; each follows as a search result to cite."""
    if not count:
        return f"No memory matches {quoted(query)}. Do not guess; say you don't know."
    return f"{count} memories match {quoted(query)}, best first:"


def found_title(item: MemoryItem, in_block: bool, zone: tzinfo) -> str:
    """Title a memory a search found with what the model needs to act on it, its id first."""
    subject = f", subject {quoted(item.subject)}" if item.subject else ""
    where = "in the block" if in_block else "archived"
    changed = item.updated_at.astimezone(zone).strftime("%Y-%m-%d")
    return f"[id:{item.id}] {item.category.value}{subject}, changed {changed}, {where}"


def found_turns(
    query: str, hits: Sequence[FoundTurn], zone: tzinfo, order: str = "relevance"
) -> str:
    """List the earlier messages a search found, best (or newest) first, with date and speaker."""
    if not hits:
        return f"No earlier message matches {quoted(query)}."
    first = "newest first" if order == "newest" else "best matches first"
    lines = [f"{len(hits)} earlier messages match {quoted(query)}, {first}:"]
    for hit in hits:
        when = hit.said_at.astimezone(zone).strftime("%Y-%m-%d %H:%M")
        quote = f" (quoting it: {quoted(hit.quote_excerpt)})" if hit.quote_excerpt else ""
        near = getattr(hit, "context", None)  # (where, who, words) of a short hit's neighbour
        beside = f" ({near[0]}, {near[1]}: {quoted(near[2])})" if near else ""
        lines.append(f"- {when}, {hit.who}{quote}: {quoted(hit.excerpt)}{beside}")
    return "\n".join(lines)
