"""Prove the fake servers speak the real wire formats, using the real PTB and anthropic clients."""

import asyncio
import time

import aiohttp
import anthropic
import pytest
from aiohttp import web
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, MessageEntity, Update
from telegram.error import BadRequest, Conflict, InvalidToken, RetryAfter
from telegram.ext import Application, CommandHandler

from tests.fakes.anthropic_server import (
    InvalidRequest,
    error,
    text,
    tool_use,
    tool_uses,
    validate,
)
from tests.fakes.telegram_server import HTMLParseError, parse_html, utf16_len
from tests.wire.requests import MODEL, ask

# --- HTML validator -----------------------------------------------------------------------


def test_nested_tags_give_entities_in_utf16_units():
    plain, entities = parse_html("👍 <b>bold <i>both</i></b>!")
    assert plain == "👍 bold both!"
    assert entities == [
        {"type": "bold", "offset": 3, "length": 9},
        {"type": "italic", "offset": 8, "length": 4},
    ]


@pytest.mark.parametrize(
    ("html", "plain"),
    [
        ("a &amp; b &lt;c&gt; &quot;d&quot;", 'a & b <c> "d"'),
        ("&#128512; &#x1F600;", "😀 😀"),
        ("1 > 0", "1 > 0"),  # Telegram tolerates a bare '>'
        ("<B>shout</B>", "shout"),
    ],
)
def test_entities_and_tolerated_characters(html, plain):
    assert parse_html(html)[0] == plain


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ("a &nbsp; b", 'Unsupported HTML entity "&nbsp;"'),
        ("fish & chips", 'Character "&" must be escaped'),
        ("a < b", 'Unsupported start tag "" at byte offset 2'),
        ("<foo>x</foo>", 'Unsupported start tag "foo" at byte offset 0'),
        ("<b>open", 'Can\'t find end tag corresponding to start tag "b"'),
        ("<b><i>x</b></i>", 'Unmatched end tag at byte offset 7, expected "</i>"'),
        ("x</b>", "Unexpected end tag at byte offset 1"),
        ("<span>x</span>", 'Tag "span" must have class "tg-spoiler"'),
        ("<b", "Unclosed start tag"),
        ("é<b", "Unclosed start tag at byte offset 2"),  # offsets count UTF-8 bytes
    ],
)
def test_invalid_html_is_rejected(html, expected):
    with pytest.raises(HTMLParseError) as caught:
        parse_html(html)
    assert expected in str(caught.value)


def test_pre_code_language_becomes_one_pre_entity():
    plain, entities = parse_html('<pre><code class="language-python">x = 1</code></pre>')
    assert plain == "x = 1"
    assert entities == [{"type": "pre", "offset": 0, "length": 5, "language": "python"}]


def test_links_spoilers_and_blockquotes():
    html = (
        '<a href="https://e.x/?a=1&amp;b=2">link</a> <span class="tg-spoiler">s</span> '
        "<tg-spoiler>t</tg-spoiler> <blockquote expandable>q</blockquote>"
        ' <tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>'
    )
    plain, entities = parse_html(html)
    assert plain == "link s t q 👍"
    assert [e["type"] for e in entities] == [
        "text_link", "spoiler", "spoiler", "expandable_blockquote", "custom_emoji",
    ]  # fmt: skip
    assert entities[0]["url"] == "https://e.x/?a=1&b=2"
    assert entities[-1]["length"] == 2


def test_utf16_length():
    assert utf16_len("a👍é") == 4


# --- Telegram through the real PTB client -------------------------------------------------


async def test_get_me_and_send_html(tg, bot):
    assert bot.username == "memory_test_bot"
    message = await bot.send_message(42, "<b>Hi</b> &amp; 👍 <i>there</i>", parse_mode="HTML")
    assert message.text == "Hi & 👍 there"
    assert message.from_user.id == tg.bot_id and message.chat.id == 42
    assert message.entities == (
        MessageEntity(MessageEntity.BOLD, 0, 2),
        MessageEntity(MessageEntity.ITALIC, 8, 5),
    )
    second = await bot.send_message(42, "plain <b> is fine without parse_mode")
    assert second.message_id == message.message_id + 1
    assert tg.messages_to(42) == ["Hi & 👍 there", "plain <b> is fine without parse_mode"]
    assert tg.sent[0]["parse_mode"] == "HTML" and tg.sent[0]["result"]["message_id"] == 1


async def test_nesting_telegram_forbids_is_accepted_but_recorded_as_dropped(tg, bot):
    await bot.send_message(42, "<b>run <code>make</code></b>", parse_mode="HTML")
    await bot.send_message(
        42, '<a href="javascript:x">x</a> <i>ok <b>fine</b></i>', parse_mode="HTML"
    )
    assert tg.messages_to(42) == ["run make", "x ok fine"]
    assert tg.mangled == ["code inside bold at 4", "link to 'javascript:x' at 0"]


async def test_send_message_rejected_like_telegram(tg, bot):
    cases = [
        ("a < b", "HTML", "can't parse entities"),
        ("<b>unclosed", "HTML", "can't parse entities"),
        ("x" * 5000, None, "message is too long"),
        ("👍" * 2049, None, "message is too long"),  # 4098 UTF-16 units
        ("<b> </b>\n", "HTML", "message text is empty"),
    ]
    for body, mode, expected in cases:
        with pytest.raises(BadRequest) as caught:
            await bot.send_message(42, body, parse_mode=mode)
        # PTB strips "Bad Request: " and lower-cases the rest of the description.
        assert expected in caught.value.message.lower()
    assert [method for method, _, _ in tg.rejected] == ["sendMessage"] * len(cases)
    await bot.send_message(42, "👍" * 2048)  # exactly 4096 UTF-16 units
    assert len(tg.sent) == 1


async def test_inline_keyboard_and_callback_data_limit(tg, bot):
    ok = InlineKeyboardMarkup([[InlineKeyboardButton("Forget", callback_data="forget:1")]])
    message = await bot.send_message(42, "Saved", reply_markup=ok)
    assert message.reply_markup == ok
    too_long = InlineKeyboardMarkup([[InlineKeyboardButton("x", callback_data="d" * 65)]])
    with pytest.raises(BadRequest, match="Button_data_invalid"):
        await bot.send_message(42, "Saved", reply_markup=too_long)


async def test_edit_message_text(tg, bot):
    message = await bot.send_message(42, "draft")
    edited = await bot.edit_message_text("<b>final</b>", 42, message.message_id, parse_mode="HTML")
    assert edited.text == "final" and edited.edit_date is not None
    with pytest.raises(BadRequest, match="not modified"):
        await bot.edit_message_text("<b>final</b>", 42, message.message_id, parse_mode="HTML")
    with pytest.raises(BadRequest, match="not found"):
        await bot.edit_message_text("x", 42, 999)


async def test_get_updates_with_command_entity_and_offset(tg, bot):
    pushed = tg.push_message(42, "/memory@memory_test_bot list", username="alice")
    updates = await bot.get_updates(timeout=5)
    assert len(updates) == 1 and isinstance(updates[0], Update)
    message = updates[0].message
    assert message.text == "/memory@memory_test_bot list"
    assert message.entities == (MessageEntity(MessageEntity.BOT_COMMAND, 0, 23),)
    assert message.from_user.username == "alice" and message.chat.type == "private"
    assert updates[0].update_id == pushed["update_id"]
    # Confirming via offset drops the update; the next poll times out empty.
    assert await bot.get_updates(offset=pushed["update_id"] + 1, timeout=0) == ()
    assert tg.updates == []


async def test_long_poll_wakes_on_push_and_on_stop(tg, bot):
    asyncio.get_running_loop().call_later(0.1, tg.push_message, 7, "hello")
    started = time.monotonic()
    updates = await bot.get_updates(timeout=5)
    assert updates[0].message.text == "hello" and time.monotonic() - started < 2
    poll = asyncio.create_task(bot.get_updates(offset=updates[0].update_id + 1, timeout=30))
    await tg.wait_for_call("getUpdates", count=2)
    started = time.monotonic()
    await tg.stop()
    assert await poll == () and time.monotonic() - started < 2


async def test_second_poller_terminates_the_first(tg, bot):
    # A raw JSON-body client holds the first poll: one PTB Bot never polls concurrently.
    url = f"{tg.base_url}{tg.token}/getUpdates"
    async with aiohttp.ClientSession() as session:
        first = asyncio.create_task(session.post(url, json={"timeout": 5}))
        await tg.wait_for_call("getUpdates")
        assert await bot.get_updates(timeout=0) == ()
        response = await first
        assert response.status == 409
        assert "terminated by other getUpdates" in (await response.json())["description"]


# PTB warns on its own RetryAfter.retry_after access (int -> timedelta migration).
@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")
async def test_fail_next_raises_retry_after(tg, bot):
    tg.fail_next("sendMessage", retry_after=3)
    with pytest.raises(RetryAfter, match="Retry in 3 seconds"):
        await bot.send_message(42, "hi")
    await bot.send_message(42, "hi")
    assert tg.messages_to(42) == ["hi"]


async def test_wrong_token_is_unauthorized(tg):
    with pytest.raises(InvalidToken):
        async with Bot("654321:WRONG", base_url=tg.base_url):
            pass


async def test_document_actions_commands_and_callbacks(tg, bot):
    await bot.send_document(42, b"memory dump", filename="memory.json", caption="Your data")
    assert tg.documents[0]["filename"] == "memory.json"
    assert tg.documents[0]["data"] == b"memory dump"
    await bot.send_chat_action(42, "typing")
    assert tg.chat_actions == [{"chat_id": 42, "action": "typing"}]
    await bot.set_my_commands([("memory", "Show what I remember")])
    assert [c.command for c in await bot.get_my_commands()] == ["memory"]
    await bot.delete_my_commands()
    assert await bot.get_my_commands() == ()
    assert await bot.answer_callback_query("cb-1", text="Done")
    assert tg.callback_answers[0]["callback_query_id"] == "cb-1"


async def test_application_polling_end_to_end(tg):
    async def memory(update, context):
        await update.message.reply_html(f"<b>{context.args[0]}</b>", do_quote=True)

    app = Application.builder().token(tg.token).base_url(tg.base_url).build()
    app.add_handler(CommandHandler("memory", memory))
    async with app:
        await app.updater.start_polling(timeout=1)
        await app.start()
        tg.push_message(42, "/memory@memory_test_bot hello")
        sent = await tg.wait_for_messages(42, timeout=5)
        await app.updater.stop()
        await app.stop()
    assert sent[0]["result"]["text"] == "hello"
    assert tg.rejected == []
    assert sent[0]["result"]["reply_to_message"]["text"].startswith("/memory")


async def test_wait_for_messages_explains_timeout(tg, bot):
    await bot.send_message(1, "elsewhere")
    with pytest.raises(AssertionError, match="elsewhere"):
        await tg.wait_for_messages(42, timeout=0.05)


async def test_webhook_delivery(tg, bot):
    received = []

    async def hook(request):
        received.append(
            (request.headers.get("X-Telegram-Bot-Api-Secret-Token"), await request.json())
        )
        return web.Response()

    app = web.Application()
    app.router.add_post("/hook", hook)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}/hook"
    try:
        await bot.set_webhook(url, secret_token="s3cret")
        assert (await bot.get_webhook_info()).url == url
        with pytest.raises(Conflict):
            await bot.get_updates()
        status = await tg.post_update_to(url, {"message": {"text": "hi"}})
    finally:
        await runner.cleanup()
    assert status == 200 and received[0][0] == "s3cret" and "update_id" in received[0][1]


# --- Anthropic through the real SDK -------------------------------------------------------


async def test_text_reply(fa, claude):
    fa.script(text("Hello!"))
    message = await claude.messages.create(**ask(system=[{"type": "text", "text": "Be brief"}]))
    assert isinstance(message, anthropic.types.Message)
    assert message.content[0].text == "Hello!" and message.stop_reason == "end_turn"
    assert message.model == MODEL and message.usage.input_tokens > 0
    assert fa.system_text() == "Be brief" and fa.last_user_text() == "hi"
    # With the queue empty the settable default answers.
    assert (await claude.messages.create(**ask())).content[0].text == "OK"
    assert fa.remaining() == 0


async def test_tool_use_round_trip(fa, claude):
    tools = [{"name": "remember", "description": "Save", "input_schema": {"type": "object"}}]
    fa.script(tool_use("remember", {"fact": "likes tea"}, text="Saving."), text("Saved."))
    first = await claude.messages.create(**ask(tools=tools))
    assert first.stop_reason == "tool_use"
    call = first.content[1]
    assert (call.name, call.input) == ("remember", {"fact": "likes tea"})
    assert call.id.startswith("toolu_")
    history = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "ok"}],
        },
    ]
    second = await claude.messages.create(
        model=MODEL, max_tokens=100, messages=history, tools=tools
    )
    assert second.content[0].text == "Saved." and fa.tool_names() == ["remember"]


async def test_invalid_requests_raise_bad_request(fa, claude):
    with pytest.raises(anthropic.BadRequestError, match="text content blocks must be non-empty"):
        await claude.messages.create(**ask([{"type": "text", "text": ""}]))
    dangling = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "x", "input": {}}],
        },
        {"role": "user", "content": "and?"},
    ]
    with pytest.raises(anthropic.BadRequestError, match="without `tool_result` blocks"):
        await claude.messages.create(model=MODEL, max_tokens=100, messages=dangling)
    # A streamed request is validated before its stream starts.
    with pytest.raises(anthropic.BadRequestError, match="non-whitespace"):
        await claude.messages.create(**ask("   "), stream=True)
    assert len(fa.invalid) == 3 and len(fa.requests) == 3


async def test_wrong_key_is_authentication_error(fa):
    async with anthropic.AsyncAnthropic(api_key="nope", base_url=fa.base_url, max_retries=0) as c:
        with pytest.raises(anthropic.AuthenticationError):
            await c.messages.create(**ask())


async def test_overloaded_then_retry_succeeds(fa):
    fa.script(error(529, "overloaded_error", "Overloaded"), text("after retry"))
    async with anthropic.AsyncAnthropic(
        api_key=fa.api_key, base_url=fa.base_url, max_retries=2
    ) as c:
        message = await c.messages.create(**ask())
    assert message.content[0].text == "after retry" and len(fa.requests) == 2


async def test_scripted_error_and_dynamic_reply(fa, claude):
    fa.script(error(429, "rate_limit_error", "slow down"), lambda body: text(body["model"]))
    with pytest.raises(anthropic.RateLimitError):
        await claude.messages.create(**ask())
    assert (await claude.messages.create(**ask())).content[0].text == MODEL


async def test_count_tokens(fa, claude):
    count = await claude.messages.count_tokens(
        model=MODEL, messages=[{"role": "user", "content": "hi"}]
    )
    assert count.input_tokens > 0


def test_validator_rules():
    def rejects(body, fragment):
        with pytest.raises(InvalidRequest, match=fragment):
            validate(body)

    def conversation(*turns):
        return ask() | {"messages": list(turns)}

    question = {"role": "user", "content": "q"}
    call = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}],
    }
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}
    rejects(ask() | {"model": None}, "model")
    rejects({"model": MODEL, "messages": []}, "max_tokens")
    rejects(conversation(), "at least one message")
    rejects(conversation({"role": "assistant", "content": "x"}), "first message")
    rejects(conversation({"role": "system", "content": "x"}), "role")
    rejects(ask("   "), "non-whitespace")
    late = {"role": "user", "content": [{"type": "text", "text": "a"}, result]}
    rejects(conversation(question, call, late), "immediately after")
    rejects(ask([{**result, "tool_use_id": "zz"}]), "unexpected `tool_use_id`")
    rejects(ask(system=[{"type": "image"}]), "system")
    cached = {"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}
    rejects(ask(system=[cached] * 5), "A maximum of 4 blocks with cache_control")
    rejects(ask(system=[{**cached, "cache_control": {"type": "permanent"}}]), "ephemeral")
    schema = {"type": "object"}
    rejects(ask(tools=[{"name": "bad name", "input_schema": schema}]), "pattern")
    rejects(ask(tools=[{"name": "a", "input_schema": schema}] * 2), "unique")
    rejects(ask(tools=[{"name": "a", "input_schema": {"type": "array"}}]), "object")
    # Valid: 4 cache breakpoints; a tool_result turn split from its follow-up text is merged.
    validate(ask(system=[cached] * 4))
    validate(conversation(question, call, {"role": "user", "content": [result]}, question))


async def test_consecutive_same_role_messages_are_counted(fa, claude):
    messages = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    await claude.messages.create(model=MODEL, max_tokens=10, messages=messages)
    assert fa.merged_consecutive == 1


async def test_tool_uses_builds_parallel_calls(fa, claude):
    fa.script(tool_uses([("a", {}), ("b", {"x": 1})]))
    message = await claude.messages.create(**ask())
    assert [b.name for b in message.content] == ["a", "b"]
