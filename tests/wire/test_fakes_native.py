"""The fake Bot API speaks Bot API 10.1-10.3 as documented: rich messages, rich drafts, Stop."""

import pytest
from telegram import Update
from telegram.error import BadRequest

from bot.telegram import native
from bot.telegram.format.rich import fits, rich_reply, structured

TABLE = "| a | b |\n| --- | --- |\n| 1 | 2 |"


async def test_a_rich_message_is_parsed_into_blocks_and_replaces_the_draft(tg, bot):
    await native.send_draft(bot, 42, 7, markdown="# Title\n\npartial", can_stop=True)
    assert tg.shown_drafts[42]["blocks"][0] == {"type": "heading", "level": 1, "text": "Title"}
    message = await native.send_rich_message(bot, 42, f"# Title\n\n{TABLE}\n\n- x\n- y")
    assert message.chat.id == 42 and 42 not in tg.shown_drafts
    [blocks] = tg.rich_to(42)
    assert [b["type"] for b in blocks] == ["heading", "table", "list_item", "list_item"]
    assert blocks[1]["rows"] == [["a", "b"], ["1", "2"]]


@pytest.mark.parametrize(
    ("markdown", "refusal"),
    [
        ("", "rich_message_content_required"),
        ("x" * 32_769, "rich_message_too_long"),
        ("\n\n".join(f"line {i}" for i in range(501)), "rich_message_too_many_blocks"),
        ("| " + " | ".join("c" * 21) + " |\n|" + " --- |" * 21, "rich_message_table_too_wide"),
        ("\n".join(" " * (2 * i) + f"- level {i}" for i in range(20)), "rich_message_too_deep"),
    ],
)
async def test_rich_messages_past_the_documented_limits_are_refused(tg, bot, markdown, refusal):
    with pytest.raises(BadRequest) as caught:
        await native.send_rich_message(bot, 42, markdown)
    assert refusal in caught.value.message.lower()
    assert tg.rich == [] and [m for m, _, _ in tg.rejected] == ["sendRichMessage"]


async def test_rich_drafts_are_for_private_chats_with_a_draft_id(tg, bot):
    with pytest.raises(BadRequest, match=r"(?i)textdraft_peer_invalid"):
        await native.send_draft(bot, -100, 7, markdown=TABLE)
    with pytest.raises(BadRequest, match=r"(?i)random_id_invalid"):
        await native.send_draft(bot, 42, 0, markdown=TABLE)
    with pytest.raises(BadRequest, match=r"(?i)content_required"):
        await bot.do_api_request(
            "sendRichMessageDraft",
            api_kwargs={
                "chat_id": 42,
                "draft_id": 1,
                "rich_message": {"html": "a", "markdown": "a"},
            },
        )


async def test_stop_is_pressed_only_on_a_draft_with_the_button_and_reaches_the_bot(tg, bot):
    await native.send_draft(bot, 42, 5, html="no button")
    with pytest.raises(AssertionError, match="no draft with a Stop button"):
        tg.press_stop(42)
    await native.send_draft(bot, 42, 6, html="with a button", can_stop=True)
    assert tg.drafts[-1]["params"]["keep_on_stop"] is True
    tg.press_stop(42)
    assert 42 in tg.shown_drafts  # kept on stop
    # Withheld from a bot that did not ask for it: PTB's own list lacks it.
    assert await bot.get_updates(allowed_updates=Update.ALL_TYPES) == ()
    [update] = await bot.get_updates(allowed_updates=native.ALLOWED_UPDATES)
    stop = native.stopped_generation(update)
    assert stop is not None and (stop.chat.id, stop.draft_id) == (42, 6)


def test_structure_makes_a_reply_rich_and_the_limits_are_counted_from_above():
    assert rich_reply(TABLE) and rich_reply("## Plan\n\ntext") and rich_reply("$$x^2$$")
    assert rich_reply("\n".join(f"- item {i}" for i in range(8)))
    assert not rich_reply("Just a sentence, with a | pipe.")
    assert not rich_reply("- one\n- two") and not rich_reply("```\n# not a heading\n```")
    assert structured("| a |\n| --- |\n" + "| x |\n" * 600) and not fits("| x |\n" * 600)
    assert not fits("| " + " | ".join("c" * 21) + " |") and not fits("x" * 32_769)


async def test_a_message_is_edited_into_a_rich_one_as_documented(tg, bot):
    sent = await bot.send_message(42, "plain")
    await native.edit_rich_message(bot, 42, sent.message_id, TABLE)
    edited = tg.message(42, sent.message_id)
    assert "text" not in edited and edited["rich_message"]["blocks"][0]["type"] == "table"
    [(_, params)] = [(m, p) for m, p in tg.calls if m == "editMessageText"]
    assert "text" not in params and params["rich_message"] == {"markdown": TABLE}
    with pytest.raises(BadRequest, match="not modified"):
        await native.edit_rich_message(bot, 42, sent.message_id, TABLE)
    with pytest.raises(BadRequest, match="can't be used together"):
        await bot.edit_message_text("x", 42, sent.message_id, api_kwargs={"rich_message": {}})
    with pytest.raises(BadRequest, match="not found"):
        await native.edit_rich_message(bot, 42, 999, TABLE)
    # Edited with text again, it is a text message once more.
    await bot.edit_message_text("plain again", 42, sent.message_id)
    assert "rich_message" not in tg.message(42, sent.message_id)
