"""Assemble the Messages API request in cache order: tools, system, messages."""

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

STATIC_INSTRUCTIONS = """\
You are a personal assistant in Telegram with a long-term memory. You help one person (or, \
in a group chat, one group) with whatever they ask: questions, writing, planning, thinking \
things through. Be warm, direct and brief; this is a chat, so answer in a few short \
paragraphs at most unless asked for more. You may use simple Markdown (bold, italics, \
inline code, code blocks, bullet lists, links); avoid tables and headings.

Each user message starts with a line in square brackets giving the current date and time \
(and, in groups, who is speaking). Use it to reason about time; never repeat it back.

# Your memory

Below these instructions is a memory block: facts you saved in earlier conversations, \
each with an id like [id:a1b2c3d4]. Use them naturally, without announcing that you \
remember. The user can list and delete memories with /memory, so keep every memory \
accurate and worth keeping.

You have three tools:
- add_to_memory(content, category, subject?) saves a new memory. category is one of \
person, preference, context, project. subject is a short key such as a person's name.
- update_memory(memory_id, content) replaces the content of an existing memory (same id, \
a new version is kept). Give the full new content.
- forget_memory(memory_id) forgets a memory when the user asks you to forget it ("forget \
that Alec is my boss"). The user can undo it.

When to save:
1. The user explicitly asks you to remember something ("remember that...", "from now on...", \
"note that I..."): save it at once with add_to_memory, then confirm briefly.
   Example: "Remember that I prefer Friday due dates" -> add_to_memory(content="The user \
prefers due dates on Fridays", category="preference"), then reply "Got it, I'll default to \
Fridays."
2. The user mentions a durable fact about their life that would help in future conversations \
(a person and their role, a lasting preference, their job, an ongoing project), without \
asking you to remember it: do not save it yet. Answer what they said, then ask in one short \
question whether you should remember it. Save it only after they say yes.
   Example: "Alec is my boss by the way" -> "Noted. Should I remember that Alec is your \
boss?" -> user: "yes" -> add_to_memory(content="Alec is the user's boss", \
category="person", subject="Alec"), then confirm.
3. The user declines ("no", "it's just for this task", "don't save that"): save nothing and \
do not ask again about the same fact in this conversation.
4. A fact you already have has changed or was wrong: call update_memory on that memory's id \
without asking, and mention the change in one short sentence.
   Example: the memory block has "[id:k9x2m4p1] [Sarah] Sarah is on the Platform team" and \
the user says "Sarah moved to the Design team" -> update_memory(memory_id="k9x2m4p1", \
content="Sarah is on the Design team").

Never save: passwords, keys, codes or other secrets; financial or health details unless the \
user explicitly asks you to; details of a one-off task; things only true for today; your \
own opinions; anything about a third party that the user would not expect you to keep. \
If add_to_memory says memory is full, merge related memories with update_memory or forget \
stale ones, then add again, and tell the user. \
Never save the same fact twice: if a memory with the same subject exists, update it. Write \
each memory as one self-contained sentence about the user in the third person ("The user \
..."). If a tool returns an error, read it, correct your call once if you can, otherwise \
tell the user briefly what went wrong. Memory ids are internal: mention one only when the \
user asks about their memories.
"""

# With memory off the block and the tools are left out, and the instructions above would
# mislead the model; this comes after them, so the cached instructions stay the same.
MEMORY_OFF_NOTE = (
    "Memory is off for this chat: you have no memory block and no memory tools, and nothing "
    "you are told is saved. Earlier memory tool calls in the history are only a record. If "
    "the user asks you to remember something, say memory is off and /memory on turns it "
    "back on."
)
CACHE_CONTROL = {"type": "ephemeral"}
SUMMARY_HEADER = "## Earlier in this conversation\n\n"


def time_context(now: datetime, sender_name: str | None = None) -> str:
    """Return the bracketed line that gives the model the time (and speaker) of a message."""
    stamp = now.strftime("%A, %d %B %Y, %H:%M %Z").strip().rstrip(",")
    speaker = f"; from {sender_name}" if sender_name else ""
    return f"[{stamp}{speaker}]"


def user_turn_content(text: str, now: datetime, sender_name: str | None = None) -> list[dict]:
    """Return the content blocks of a user's message, led by its time context."""
    return [{"type": "text", "text": f"{time_context(now, sender_name)}\n{text}"}]


def _tool_use_ids(content: list[dict]) -> list[str]:
    """Return the ids of the tool_use blocks in content."""
    return [block["id"] for block in content if block.get("type") == "tool_use"]


def normalize_history(turns: Sequence[tuple[str, list[dict]]]) -> list[dict[str, Any]]:
    """Make stored turns a valid message list: alternating roles, every tool_use answered."""
    messages: list[dict[str, Any]] = []
    for role, content in turns:
        # Blocks are shared, not copied: nothing below changes one in place.
        blocks = [b for b in content if b.get("type") != "text" or b.get("text")]
        if not blocks:
            continue
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})
    while messages and messages[0]["role"] != "user":
        messages.pop(0)
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        pending = _tool_use_ids(message["content"])
        if not pending:
            continue
        if index + 1 == len(messages):
            # A turn cut off after the model asked for tools: drop the unanswered request.
            message["content"] = [b for b in message["content"] if b.get("type") != "tool_use"]
            continue
        following = messages[index + 1]["content"]
        answered = {b.get("tool_use_id") for b in following if b.get("type") == "tool_result"}
        missing = [
            {
                "type": "tool_result",
                "tool_use_id": tool_use_id,
                "content": "Not run: the turn was interrupted.",
                "is_error": True,
            }
            for tool_use_id in pending
            if tool_use_id not in answered
        ]
        results = [b for b in following if b.get("type") == "tool_result"] + missing
        others = [b for b in following if b.get("type") != "tool_result"]
        messages[index + 1]["content"] = results + others
    return [m for m in messages if m["content"]]


def _with_cache_breakpoint(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mark the newest block so the next turn reads everything before it from the cache."""
    if not messages:
        return messages
    marked = [dict(m) for m in messages]
    last = dict(marked[-1])
    blocks = [dict(b) for b in last["content"]]
    blocks[-1]["cache_control"] = CACHE_CONTROL
    last["content"] = blocks
    marked[-1] = last
    return marked


def block_text(block: dict[str, Any]) -> str:
    """Return a content block as plain text: a text, a tool call or a tool result."""
    kind = block.get("type")
    if kind == "text":
        return block.get("text", "")
    if kind == "tool_use":
        return f"[called {block.get('name')} {json.dumps(block.get('input'), ensure_ascii=False)}]"
    if kind == "tool_result":
        return f"[tool result: {block.get('content')}]"
    return ""


def tool_blocks_as_text(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rewrite tool calls and results as text, for a request that offers no tools."""
    return [
        {
            **message,
            "content": [
                b if b.get("type") == "text" else {"type": "text", "text": block_text(b)}
                for b in message["content"]
            ],
        }
        for message in messages
    ]


def build_request(
    *,
    model: str,
    max_tokens: int,
    tools: list[dict[str, Any]],
    memory_block: str,
    summary: str | None,
    turns: Sequence[tuple[str, list[dict]]],
    force_answer: bool = False,
) -> dict[str, Any]:
    """Return the keyword arguments of messages.create for one model call.

    An empty memory_block (memory off) leaves the block out; no tools leaves tools out.
    """
    system = [{"type": "text", "text": STATIC_INSTRUCTIONS}]
    if memory_block:
        system.append({"type": "text", "text": memory_block, "cache_control": CACHE_CONTROL})
    else:
        system[0] = {**system[0], "cache_control": CACHE_CONTROL}
        system.append({"type": "text", "text": MEMORY_OFF_NOTE})
    if summary:
        system.append({"type": "text", "text": SUMMARY_HEADER + summary})
    messages = normalize_history(turns)
    if not tools:
        messages = tool_blocks_as_text(messages)
    request: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "system": system,
        "messages": _with_cache_breakpoint(messages),
    }
    if tools:
        request["tools"] = tools
        if force_answer:
            request["tool_choice"] = {"type": "none"}
    return request
