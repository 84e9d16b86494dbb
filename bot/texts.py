"""What the bot says, other than the model's replies (HTML for Telegram)."""

from html import escape
from itertools import groupby

from memory.store import MemoryItem

START = (
    "Hi! I'm your personal assistant, and I remember things across conversations.\n\n"
    "Just talk to me. When you tell me something worth keeping, I'll ask before saving it, "
    "or save it straight away if you say <i>remember that…</i>. See /help for commands."
)

HELP = (
    "<b>Commands</b>\n"
    "/new: start a new conversation (I keep my memories, not the chat so far)\n"
    "/memory: list what I remember, with ids\n"
    "/memory delete &lt;id&gt;: forget one memory, e.g. <code>/memory delete a1b2c3d4</code>\n"
    "/help: this message\n\n"
    "<b>How my memory works</b>\n"
    'I save a memory when you ask me to ("remember that I prefer Friday due dates") or '
    'after I ask and you agree. When something changes ("Sarah moved to Design") I update '
    "the memory instead of adding another. Every new conversation starts with all my "
    "memories. Nothing is saved without you seeing it in /memory."
)

NEW_CONVERSATION = "Started a new conversation. I still remember what's in /memory."
MEMORY_EMPTY = "I don't remember anything yet. Tell me something and ask me to remember it."
MEMORY_USAGE = (
    "Usage:\n/memory: list what I remember\n/memory list: the same\n"
    "/memory delete &lt;id&gt;: forget one item, e.g. <code>/memory delete a1b2c3d4</code>"
)
DELETE_USAGE = (
    "Which memory? Give its id: <code>/memory delete a1b2c3d4</code>. /memory shows the ids."
)
MODEL_UNAVAILABLE = (
    "Sorry, I can't reach the model right now. Your message is saved; please try again in a minute."
)
EMPTY_REPLY = "(I have nothing to add.)"
NOT_TEXT = "I can only read text messages for now."
PRIVATE_BOT_ALERT = "This is a private bot."


def private_bot(user_id: int) -> str:
    """Tell a stranger the bot is private, and their id so the owner can add it."""
    return (
        "Sorry, this is a private bot. "
        f"If you are its owner, add your user id <code>{user_id}</code> to ALLOWED_USER_IDS."
    )


def unknown_memory(memory_id: str) -> str:
    """Say an id names no memory."""
    return f"I have no memory with id <code>{escape(memory_id)}</code>. /memory shows the ids."


def deleted(item: MemoryItem) -> str:
    """Confirm a deletion with the content that was forgotten."""
    return f"Deleted: '{escape(item.content)}'"


def memory_line(item: MemoryItem) -> str:
    """Render one memory as `[id] content`, with its subject."""
    subject = f" <i>({escape(item.subject)})</i>" if item.subject else ""
    return f"<code>[{item.id}]</code> {escape(item.content)}{subject}"


def memory_list(items: list[MemoryItem]) -> str:
    """Render the owner's memories grouped by category."""
    if not items:
        return MEMORY_EMPTY
    count = f"{len(items)} memor{'y' if len(items) == 1 else 'ies'}"
    sections = [f"<b>What I remember</b> ({count})"]
    for category, group in groupby(items, key=lambda item: item.category):
        lines = "\n".join(memory_line(item) for item in group)
        sections.append(f"<b>{category.heading}</b>\n{lines}")
    sections.append("Forget one with <code>/memory delete &lt;id&gt;</code>.")
    return "\n\n".join(sections)
