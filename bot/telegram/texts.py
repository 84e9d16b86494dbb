"""What the bot says, other than the model's replies and /memory (HTML for Telegram)."""

import html

from bot.agent.account import AccountProblem

START = (
    "Hi! I'm your personal assistant, and I remember things across conversations.\n\n"
    "Just talk to me. When you tell me something worth keeping, I'll ask before saving it, "
    "or save it straight away if you say <i>remember that…</i>. See /help for commands."
)

HELP = (
    "Talk to me like to any assistant. Say <i>remember that I prefer Friday due dates</i> and "
    "I save it; mention something lasting and I ask first. Whenever I save, change or forget "
    "something, I tell you, with an <b>Undo</b> button.\n\n"
    "<b>Commands</b>\n"
    "/new: start a new conversation; my memories stay\n"
    "/memory: what I remember, a page at a time, with a Delete button on each\n"
    "/memory delete &lt;id&gt;: forget one memory, e.g. <code>/memory delete a1b2c3d4</code>\n"
    "/memory search &lt;words&gt;: find memories, e.g. <code>/memory search Alec boss</code>\n"
    "/memory history &lt;id&gt;: every version of a memory, e.g. "
    "<code>/memory history a1b2c3d4</code>\n"
    "/memory restore &lt;id&gt;: bring back a deleted memory, e.g. "
    "<code>/memory restore a1b2c3d4</code>\n"
    "/memory pin &lt;id&gt; and /memory unpin &lt;id&gt;: keep a memory in the prompt, or let it "
    "take its turn, e.g. <code>/memory pin a1b2c3d4</code>\n"
    "/memory clear: forget everything (I ask first), e.g. <code>/memory clear</code>\n"
    "/memory export: a JSON file of every memory with all its versions, e.g. "
    "<code>/memory export</code>\n"
    "/memory tidy: a plan to merge duplicates, update what changed and archive what expired; "
    "you apply it (or skip lines), and <b>Undo all</b> reverts it, e.g. "
    "<code>/memory tidy</code>\n"
    "/memory import: bring what another assistant remembers (paste it after the command, or "
    "send my export or a Markdown list with it as the caption), e.g. <code>/memory import</code>\n"
    "/memory export markdown: your memories as a readable Markdown file\n"
    "/memory off and /memory on: stop or resume using and saving memories; nothing is deleted, "
    "e.g. <code>/memory off</code>\n"
    "/reminders: your next reminders, with a Cancel button on each. Set them in words: "
    "<i>remind me on Friday at 9 to call Sarah</i>\n"
    "/timezone &lt;city&gt;: the time zone reminders use, e.g. <code>/timezone Berlin</code>\n"
    "/delete_my_data: delete everything I keep for you (in a group: for the group, by its "
    "admins): memories, conversations, reminders, files. I offer an export first and ask "
    "before; it cannot be undone\n"
    "/help: this message\n\n"
    "<b>How my memory works</b>\n"
    "Every new conversation starts with the memories that fit in my prompt: the pinned ones, "
    "then the newest. The rest are archived, and I search them when I need them; I also search "
    "our earlier conversations. When something changes "
    '("Sarah moved to Design") I update the memory instead of adding another, and keep the old '
    'version. Ask me to forget something ("forget that Alec is my boss") and I do. In a group, '
    "the memories belong to the group."
)

# The command menu Telegram shows next to the message box.
COMMANDS = (
    ("start", "What I am"),
    ("help", "Commands, with examples"),
    ("new", "Start a new conversation"),
    ("memory", "What I remember (also: search, pin, history, restore, tidy, export, off)"),
    ("reminders", "Your next reminders, with Cancel buttons"),
    ("timezone", "Show or set your time zone: /timezone Berlin"),
    ("delete_my_data", "Delete everything I keep for you (asks first; cannot be undone)"),
)

NEW_CONVERSATION = "Started a new conversation. I still remember what's in /memory."
MODEL_UNAVAILABLE = (
    "Sorry, I can't reach the model right now. Your message is saved; please try again in a minute."
)
# A problem with the bot's model account: said once an hour per chat, since waiting never helps.
ACCOUNT_PROBLEMS = {
    AccountProblem.WRONG_KEY: "the bot's Anthropic API key is not valid. Only the bot's owner "
    "can fix this, in the bot's settings (ANTHROPIC_API_KEY)",
    AccountProblem.UNKNOWN_MODEL: "the model the bot is set to use does not exist, or its API "
    "key cannot use it. Only the bot's owner can fix this, in the bot's settings "
    "(ANTHROPIC_MODEL)",
    AccountProblem.NO_CREDITS: "the bot's Anthropic account has run out of credits. Only the "
    "bot's owner can fix this, by adding credits at console.anthropic.com",
    AccountProblem.NO_PERMISSION: "the bot's Anthropic API key is not allowed to use the model. "
    "Only the bot's owner can fix this, in the Anthropic Console",
}
TOOK_TOO_LONG = (
    "Sorry, the model took too long with that, so I stopped. Your message is saved; please "
    "try again."
)
EMPTY_REPLY = "(I have nothing to add.)"
# After what the model wrote before the user pressed Stop (Markdown: the reply's own format).
STOPPED = "_(stopped)_"
SOMETHING_WENT_WRONG = "Sorry, something went wrong on my side."
DATABASE_DOWN = (
    "I can't reach my database right now, so I can't read or save anything. I've kept your "
    "message, and I'll answer it as soon as the database is back."
)
DATABASE_GAVE_UP = (
    "My database is still out of reach, so I couldn't answer your message. Please send it "
    "again in a few minutes."
)
NOT_TEXT = "I can read text, photos, images, PDFs and voice notes, not this kind of message."
PRIVATE_BOT_ALERT = "This is a private bot."

# What a streamed reply's draft says while the model calls a tool, by tool name.
TOOL_STATUS = {
    "add_to_memory": "Saving to memory…",
    "update_memory": "Updating memory…",
    "forget_memory": "Removing from memory…",
    "search_memory": "Searching memory…",
    "search_conversations": "Looking through past conversations…",
    "propose_memory": "Asking about memory…",
    "web_search": "Searching the web…",
    "web_fetch": "Reading a web page…",
}
# What the draft says once a web tool's query, or the page's domain, is known.
WEB_STATUS = {"web_search": "Searching the web: {}…", "web_fetch": "Reading {}…"}
WEB_SUBJECT_CHARS = 80
TOOL_STATUS_OTHER = "Working on it…"


def account_problem(problem: AccountProblem) -> str:
    """Tell the user what is wrong with the bot's model account, and who must fix it."""
    return f"Sorry, I can't answer: {ACCOUNT_PROBLEMS[problem]}. Your message is saved."


def tool_status(name: str, subject: str | None = None) -> str:
    """Say in a few words, as HTML, what the model is doing with the tool (about subject)."""
    if subject and name in WEB_STATUS:
        cut = subject if len(subject) <= WEB_SUBJECT_CHARS else subject[:WEB_SUBJECT_CHARS] + "…"
        return f"<i>{html.escape(WEB_STATUS[name].format(cut))}</i>"
    return f"<i>{TOOL_STATUS.get(name, TOOL_STATUS_OTHER)}</i>"


def private_bot(user_id: int) -> str:
    """Tell a stranger the bot is private, and their id so the owner can add it."""
    return (
        "Sorry, this is a private bot. "
        f"If you are its owner, add your user id <code>{user_id}</code> to ALLOWED_USER_IDS."
    )
