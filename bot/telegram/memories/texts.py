"""What the bot says about memory: /memory and its buttons, and the change notices (HTML)."""

from collections.abc import Sequence
from datetime import tzinfo
from html import escape
from itertools import groupby

from memory.budget import BlockUsage, MemoryFull
from memory.items import (
    ChangeKind,
    MemoryChange,
    MemoryItem,
    MemoryVersionItem,
    UndoRefusal,
    UndoResult,
)
from memory.text import shorten

MEMORY_EMPTY = "I don't remember anything yet. Tell me something and ask me to remember it."
MEMORY_USAGE = (
    "Usage:\n"
    "/memory or /memory list: what I remember\n"
    "/memory delete &lt;id&gt;, /memory restore &lt;id&gt;, /memory history &lt;id&gt;\n"
    "/memory pin &lt;id&gt;, /memory unpin &lt;id&gt;\n"
    "/memory search &lt;words&gt;\n"
    "/memory clear, /memory export [markdown], /memory tidy, /memory import\n"
    "/memory off, /memory on\n"
    "For example <code>/memory delete a1b2c3d4</code>; /help explains each."
)
SEARCH_USAGE = "What should I look for? For example <code>/memory search Alec boss</code>."


def unknown_memory(memory_id: str) -> str:
    """Say an id names no memory."""
    return f"I have no memory with id <code>{escape(memory_id)}</code>. /memory shows the ids."


def deleted(item: MemoryItem) -> str:
    """Confirm a deletion with the content that was forgotten."""
    return f"Deleted: '{escape(item.content)}'"


def memory_line(item: MemoryItem, archived: bool = False) -> str:
    """Render one memory as `[id] content`, with its subject, and marked if pinned or archived."""
    subject = f" <i>({escape(item.subject)})</i>" if item.subject else ""
    pin = PINNED_MARK if item.pinned else ""
    tier = f" <i>{ARCHIVED_MARK}</i>" if archived else ""
    return f"{pin}<code>[{item.id}]</code> {escape(item.content)}{subject}{tier}"


# --- /memory and its buttons ----------------------------------------------------------

PREV_BUTTON = "« Prev"
NEXT_BUTTON = "Next »"
UNDO_BUTTON = "Undo"
PIN_BUTTON = "📌 Pin"
UNPIN_BUTTON = "Unpin"
PINNED_MARK = "📌 "
ARCHIVED_MARK = "· archived"
ARCHIVED_NOTICE = "Moved to the archive, still searchable: '{}'"
CLEAR_NO_BUTTON = "Cancel"
# Callback answers are plain text, at most 200 characters.
STALE_BUTTON = "This button no longer works."
MEMORY_GONE = "That memory is already gone."
ALREADY_UNDONE = "Already undone."
UNDONE_ALERT = "Undone."
PINNED_ALERT = "Pinned: it stays in the prompt."
UNPINNED_ALERT = "Unpinned."
CANNOT_UNDO = {
    UndoRefusal.DELETED: "That memory was deleted since, so there is nothing to undo.",
    UndoRefusal.CHANGED: "That memory changed since; /memory history shows every version.",
    UndoRefusal.RESTORED: "That memory is already back.",
    UndoRefusal.FULL: "Memory is full (MEMORY_MAX_ITEMS): forget one in /memory first.",
}
CLEAR_NOTHING = "There's nothing to clear: I don't remember anything."
CLEAR_CANCELLED = "Cancelled. I still remember everything."
EXPORT_EMPTY = "There's nothing to export: I have never saved a memory here."
NOTICE_CLIP = 120
BUTTON_CLIP = 28


def _clip(text: str, limit: int) -> str:
    """Shorten text to limit characters, marking the cut."""
    return shorten(" ".join(text.split()), limit)


def count_memories(count: int) -> str:
    """Say how many memories, in words: "1 memory", "3 memories"."""
    return f"{count} memor{'y' if count == 1 else 'ies'}"


def memory_state(usage: BlockUsage, enabled: bool) -> str:
    """Say how many memories there are, how many the prompt holds, and whether memory is on."""
    state = (
        "Memory is on."
        if enabled
        else "Memory is <b>off</b>: I don't use or save memories. /memory on turns it back on."
    )
    tokens = f"{usage.tokens:,} of {usage.budget:,} tokens"
    if usage.archived:
        tiers = f"{usage.in_block:,} in the prompt ({tokens}), the rest archived"
    else:
        tiers = f"all in the prompt ({tokens})"
    return f"<b>What I remember</b>: {count_memories(usage.count)}, {tiers}\n{state}"


def memory_sections(items: Sequence[MemoryItem], in_block: frozenset[str]) -> str:
    """Render memories grouped under their category headings, the archived ones marked."""
    sections = []
    for category, group in groupby(items, key=lambda item: item.category):
        lines = "\n".join(memory_line(item, item.id not in in_block) for item in group)
        sections.append(f"<b>{category.heading}</b>\n{lines}")
    return "\n\n".join(sections)


def memory_page_footer(page: int, pages: int) -> str:
    """Say where in the list this page is, and how to forget or pin a memory."""
    where = f"Page {page} of {pages}. " if pages > 1 else ""
    return (
        f"{where}{PINNED_MARK}pinned memories stay in the prompt; the newest fill the rest. "
        "Tap a button to forget or pin one, or send <code>/memory delete &lt;id&gt;</code>."
    )


def memory_empty(usage: BlockUsage, enabled: bool) -> str:
    """Say there is nothing in memory, and its state."""
    return f"{MEMORY_EMPTY}\n\n{memory_state(usage, enabled)}"


def pin_button(item: MemoryItem) -> str:
    """Label the button that pins a memory, or unpins a pinned one."""
    return UNPIN_BUTTON if item.pinned else PIN_BUTTON


def pinned(item: MemoryItem) -> str:
    """Confirm a memory is pinned: in the prompt before any unpinned one."""
    return (
        f"Pinned: '{escape(item.content)}'. It stays in the prompt from your next message, "
        "before any unpinned memory."
    )


def unpinned(item: MemoryItem) -> str:
    """Confirm a memory is no longer pinned."""
    return f"Unpinned: '{escape(item.content)}'. It takes its turn with the others by date."


def delete_button(item: MemoryItem) -> str:
    """Label the button that forgets one memory."""
    return f"Delete: {_clip(item.subject or item.content, BUTTON_CLIP)}"


def restored(item: MemoryItem) -> str:
    """Confirm a restore with the content that is back."""
    return f"Restored: '{escape(item.content)}'"


def not_deleted(memory_id: str) -> str:
    """Say a memory to restore is not deleted."""
    return f"<code>[{escape(memory_id)}]</code> is not deleted; /memory lists it."


def _which_memory(subcommand: str) -> str:
    """Ask which memory a subcommand is for."""
    return f"Which memory? Give its id: <code>/memory {subcommand} a1b2c3d4</code>."


def id_usage(subcommand: str) -> str:
    """Ask for the id a subcommand needs, and say where ids are shown."""
    return f"{_which_memory(subcommand)} /memory shows the ids."


def restore_usage(recently_deleted: Sequence[MemoryItem]) -> str:
    """Ask for an id to restore, listing recently deleted memories."""
    usage = _which_memory("restore")
    if not recently_deleted:
        return f"{usage} Nothing is deleted right now."
    lines = "\n".join(memory_line(item) for item in recently_deleted)
    return f"{usage}\n\n<b>Recently deleted</b>\n{lines}"


def history(item: MemoryItem, versions: Sequence[MemoryVersionItem], zone: tzinfo) -> str:
    """Render every version of a memory with its date, newest last."""
    subject = f" <i>({escape(item.subject)})</i>" if item.subject else ""
    state = ", deleted" if item.deleted_at else ""
    count = f"{len(versions)} version{'' if len(versions) == 1 else 's'}"
    lines = [
        f"<b>v{v.version_number}</b> · {v.created_at.astimezone(zone):%Y-%m-%d %H:%M %Z}\n"
        f"{escape(v.content)}"
        for v in versions
    ]
    head = f"<b>History of</b> <code>[{item.id}]</code>{subject} ({count}{state}, newest last)"
    return "\n\n".join([head, *lines])


def search_results(query: str, items: Sequence[MemoryItem], limit: int) -> str:
    """Render the memories matching a search, best first."""
    if not items:
        return f"No memory matches '{escape(query)}'. /memory lists them all."
    shown = "\n".join(memory_line(item) for item in items[:limit])
    more = f"\n… and {len(items) - limit} more." if len(items) > limit else ""
    return f"<b>Matching '{escape(query)}'</b>: {count_memories(len(items))}\n{shown}{more}"


def clear_question(count: int) -> str:
    """Ask before forgetting everything."""
    return (
        f"Forget all {count_memories(count)}? You can bring one back later with "
        "<code>/memory restore &lt;id&gt;</code>; <code>/memory export</code> saves a copy first."
    )


def clear_yes_button(count: int) -> str:
    """Label the button that confirms forgetting everything."""
    return f"Yes, forget {count_memories(count)}"


def cleared(count: int) -> str:
    """Confirm forgetting everything, with how many."""
    if count == 0:
        return "There was nothing left to forget."
    return (
        f"Forgot all {count_memories(count)}. <code>/memory restore &lt;id&gt;</code> "
        "brings one back."
    )


def export_caption(total: int, deleted_count: int, parts: int = 1, part: int = 1) -> str:
    """Describe the export file, or one of its parts."""
    about = f"{count_memories(total)} with every version ({deleted_count} of them deleted)."
    if parts == 1:
        return about
    if part == 1:
        return f"{about} Part 1 of {parts}: each part is a complete JSON document."
    return f"Part {part} of {parts} of the export."


def memory_off(changed: bool, count: int) -> str:
    """Confirm memory is off; the memories stay."""
    if not changed:
        return "Memory is already off. /memory on turns it back on."
    return (
        "Memory is off. I won't use or save memories until you send /memory on. "
        f"I keep the {count_memories(count)} I have, and our conversations are still kept."
    )


def memory_on(changed: bool) -> str:
    """Confirm memory is on."""
    if not changed:
        return "Memory is already on."
    return "Memory is on again: I use what I remember from your next message."


def change_line(change: MemoryChange | MemoryFull) -> str:
    """Describe one memory change the model made, or an add the cap refused."""
    if isinstance(change, MemoryFull):
        return (
            f"I keep at most {change.limit:,} memories and have {change.count:,}, so I couldn't "
            f"save: '{escape(_clip(change.content, NOTICE_CLIP))}'. Delete some with /memory."
        )
    return _change_line(change) + "".join(
        "\n" + ARCHIVED_NOTICE.format(escape(_clip(item.content, NOTICE_CLIP)))
        for item in change.archived
    )


def _change_line(change: MemoryChange) -> str:
    """Describe what one change did to its memory."""
    content = escape(_clip(change.item.content, NOTICE_CLIP))
    if change.kind is ChangeKind.UPDATED:
        previous = change.previous.content if change.previous else ""
        old = escape(_clip(previous, NOTICE_CLIP))
        return f"Updated memory: '{old}' → '{content}'"
    if change.kind is ChangeKind.FORGOTTEN:
        return f"Forgot: '{content}'"
    return f"Saved to memory: '{content}'"


def undo_button(number: int | None) -> str:
    """Label an Undo button, numbered when a notice lists several changes."""
    return UNDO_BUTTON if number is None else f"{UNDO_BUTTON} {number}"


def undone(result: UndoResult) -> str:
    """Say what an undo did."""
    if result.kind is ChangeKind.ADDED:
        return f"Undone: I no longer remember '{escape(result.before.content)}'."
    if result.kind is ChangeKind.FORGOTTEN:
        return f"Undone: I remember '{escape(result.after.content)}' again."
    return f"Undone: back to '{escape(result.after.content)}'."


def restore_full(limit: int) -> str:
    """Say a memory cannot come back while memory is full."""
    return (
        f"Memory is full ({limit} memories, MEMORY_MAX_ITEMS): forget one with /memory first, "
        "then restore this one."
    )
