"""Replies reach Telegram whole and well-formed; chats run concurrently, each in order."""

import re

import pytest

from tests.fakes.anthropic_server import text, tool_use
from tests.fakes.telegram_server import parse_html, utf16_len
from tests.harness import CROWD, OWNER


def visible(piece: str) -> str:
    return parse_html(piece)[0]


async def test_a_6000_character_reply_arrives_whole_in_pieces(harness):
    paragraphs = [f"Paragraph {i}: " + "lorem ipsum dolor sit amet " * 10 for i in range(22)]
    long_reply = "\n\n".join(paragraphs)
    assert len(long_reply) > 6000
    harness.model.script(text(long_reply))
    replies = await harness.say(OWNER, "tell me everything")
    assert len(replies) >= 2
    assert all(utf16_len(r) <= 4096 for r in replies)
    assert harness.tg.rejected == []
    assert " ".join(replies).split() == long_reply.split()


async def test_a_reply_full_of_markup_characters_is_accepted(harness):
    nasty = (
        "if a < b && c > d: use <div> & *stars* and _underscores_ and snake_case_name\n"
        "**bold** *italic* __under__ ~~gone~~ `x < y` and a lone * and ** and `\n\n"
        "```python\nprint('<b>not bold</b> & <i>', a_b * c_d)\n```\n"
        "```\nunterminated <fence> & stuff"
    )
    harness.model.script(text(nasty))
    replies = await harness.say(OWNER, "show me code")
    assert replies and harness.tg.rejected == []
    delivered = "\n".join(replies)
    for fragment in ("a < b && c > d", "<div>", "snake_case_name", "print('<b>not bold</b> & <i>'"):
        assert fragment in delivered
    sent = [m for m in harness.tg.sent if m["chat_id"] == OWNER]
    assert all(m.get("parse_mode") == "HTML" for m in sent)
    entity_types = {e["type"] for m in sent for e in m["result"].get("entities", [])}
    assert {"bold", "italic", "pre", "code"} <= entity_types


async def test_typing_indicator_is_shown_while_the_model_works(harness):
    # Longer than the indicator's first delay, which spares quick replies the API call.
    harness.model.latency = 1.0
    await harness.say(OWNER, "hi")
    assert {"chat_id": OWNER, "action": "typing"}.items() <= harness.tg.chat_actions[0].items()


def echo(request: dict):
    """Answer with the text of the newest user message, without its time line."""
    last = request["messages"][-1]["content"][-1]["text"]
    return text("echo: " + last.split("\n", 1)[1])


@pytest.mark.engines
async def test_twenty_chats_concurrently_and_one_chat_in_order(harness):
    # Long enough that all twenty overlap even on a busy machine.
    harness.model.latency = 1.0
    harness.model.default = echo
    chats = CROWD[:20]
    for n in range(3):
        harness.tg.push_message(OWNER, f"in order {n}")
    for chat_id in chats:
        harness.tg.push_message(chat_id, f"hello from {chat_id}")
    await harness.idle(timeout=30)
    assert harness.tg.messages_to(OWNER) == [f"echo: in order {n}" for n in range(3)]
    for chat_id in chats:
        assert harness.tg.messages_to(chat_id) == [f"echo: hello from {chat_id}"]
    # Chats overlapped at the model, while one chat's messages never did.
    assert harness.model.max_in_flight >= 15
    owner_requests = [
        r for r in harness.model.requests if re.search(r"in order \d", str(r["messages"]))
    ]
    assert [len(r["messages"]) for r in owner_requests] == [1, 3, 5]


@pytest.mark.engines
async def test_fifty_chats_writing_memory_at_once_hit_no_database_errors(harness, caplog):
    chats = CROWD[:50]
    harness.model.latency = 0.05

    def save_then_answer(request: dict):
        if request["messages"][-1]["content"][0].get("type") == "tool_result":
            return text("saved")
        return tool_use(
            "add_to_memory",
            {
                "content": "The user likes parallel tests",
                "category": "preference",
                "subject": "tests",
            },
        )

    harness.model.default = save_then_answer
    for chat_id in chats:
        harness.tg.push_message(chat_id, "remember that I like parallel tests")
    await harness.idle(timeout=60)
    for chat_id in chats:
        assert harness.tg.messages_to(chat_id)[0] == "saved"
        [memory] = await harness.store.list_active(chat_id)
        assert memory.version == 1
    problems = [r.getMessage() for r in caplog.records if r.levelname in ("WARNING", "ERROR")]
    assert not [p for p in problems if "locked" in p or "error" in p.lower()], problems
