"""The bot survives API failures and Telegram refusals, and keeps every message."""

import io
import logging
from datetime import UTC, datetime, timedelta

from bot.agent.user_turn import IncomingMessage, user_turn_content
from bot.conversations.leases import TurnLeases
from bot.conversations.snapshot import ChatThread, MessageRef
from bot.conversations.store import ConversationStore
from bot.log_setup import OWN_LOGGERS, configure_logging
from bot.migrations import upgrade_database_async
from bot.telegram.texts import MODEL_UNAVAILABLE
from memory.db import create_engine, create_sessionmaker
from tests.buttons import button, last_to, press
from tests.fakes.anthropic_server import error, text, tool_use
from tests.harness import FRIEND, OWNER, BotHarness

OVERLOADED = error(529, "overloaded_error", "Overloaded")


async def test_transient_model_errors_are_retried_by_the_sdk(harness):
    harness.model.script(error(500, "api_error", "boom"), OVERLOADED, text("Fine now."))
    assert await harness.say(OWNER, "hello") == ["Fine now."]
    assert len(harness.model.requests) == 3


async def test_when_retries_run_out_the_user_is_told_and_nothing_is_lost(harness):
    harness.model.script(*[OVERLOADED] * 5)
    [apology] = await harness.say(OWNER, "first message")
    assert "can't reach the model" in apology and "Traceback" not in apology
    assert len(harness.model.requests) == 5  # one call and the SDK's four retries

    harness.model.script(text("Now I see both."))
    assert await harness.say(OWNER, "second message") == ["Now I see both."]
    last = harness.model.requests[-1]
    assert harness.model.invalid == []
    [user] = last["messages"]
    texts = [block["text"] for block in user["content"]]
    assert texts[0].endswith("first message") and texts[1].endswith("second message")


async def test_a_failure_after_a_tool_call_leaves_a_valid_history(harness):
    harness.model.script(
        tool_use(
            "add_to_memory",
            {"content": "The user likes tea", "category": "preference", "subject": "tea"},
        ),
        *[OVERLOADED] * 5,
        text("Saved earlier; hello again."),
    )
    apology, _notice = await harness.say(OWNER, "remember I like tea")
    assert "can't reach the model" in apology
    assert [m.content for m in await harness.store.list_active(OWNER)] == ["The user likes tea"]
    assert await harness.say(OWNER, "hello?") == ["Saved earlier; hello again."]
    assert harness.model.invalid == []
    roles = [m["role"] for m in harness.model.requests[-1]["messages"]]
    assert roles == ["user", "assistant", "user"]


async def test_a_memory_saved_before_a_failed_call_gets_its_notice_and_undo(harness):
    harness.model.script(
        tool_use(
            "add_to_memory",
            {"content": "The user likes tea", "category": "preference", "subject": "tea"},
        ),
        *[OVERLOADED] * 5,  # the second call of the turn fails, the SDK's retries included
    )
    assert await harness.say(OWNER, "remember I like tea") == [
        MODEL_UNAVAILABLE,
        "Saved to memory: 'The user likes tea'",
    ]
    notice = last_to(harness, OWNER)
    assert await press(harness, notice, button(notice, "Undo")) == [
        "Undone: I no longer remember 'The user likes tea'."
    ]
    assert await harness.store.list_active(OWNER) == []


async def test_telegram_429_is_waited_out_by_the_rate_limiter(harness):
    harness.tg.fail_next("sendMessage", status=429, retry_after=1)
    harness.model.script(text("Delivered after the wait."))
    assert await harness.say(OWNER, "hi") == ["Delivered after the wait."]
    assert any("Too Many Requests" in why for _, _, why in harness.tg.rejected)


async def test_unparseable_entities_fall_back_to_plain_text(harness):
    harness.tg.fail_next(
        "sendMessage",
        status=400,
        description="Bad Request: can't parse entities: Unsupported start tag at byte offset 0",
    )
    harness.model.script(text("Some **bold** text & more"))
    assert await harness.say(OWNER, "hi") == ["Some bold text & more"]
    plain = harness.tg.sent[-1]
    assert "parse_mode" not in plain


def restore_logging(saved: tuple[list[logging.Handler], int]) -> None:
    """Put the root logger back as it was, and our own loggers to inherit from it."""
    root = logging.getLogger()
    root.handlers[:], level = saved
    root.setLevel(level)
    for name in OWN_LOGGERS:
        logging.getLogger(name).setLevel(logging.NOTSET)


def test_debug_is_for_our_own_loggers_and_libraries_stay_at_info():
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    try:
        configure_logging("DEBUG", [])
        for ours in ("bot.agent.loop", "memory.store", "bot.reminders.due"):
            assert logging.getLogger(ours).isEnabledFor(logging.DEBUG), ours
        # They would write whole conversations and files' base64 at DEBUG.
        for library in ("anthropic._base_client", "telegram.ext.Application", "sqlalchemy.engine",
                        "asyncpg", "aiosqlite", "httpx"):  # fmt: skip
            assert not logging.getLogger(library).isEnabledFor(logging.DEBUG), library
    finally:
        restore_logging(saved)


async def test_secrets_never_reach_the_logs(harness):
    buffer = io.StringIO()
    secrets = [harness.tg.token, harness.model.api_key]
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    try:
        configure_logging("DEBUG", secrets)
        root.handlers[0].setStream(buffer)
        harness.tg.fail_next("sendMessage", status=400, description="Bad Request: chat not found")
        harness.model.script(text("one"), *[OVERLOADED] * 5)
        await harness.say(OWNER, "hello")
        await harness.say(OWNER, "again")
        logging.getLogger("test").error("token in a message: %s", harness.tg.token)
    finally:
        restore_logging(saved)
    log = buffer.getvalue()
    assert "token in a message: [REDACTED]" in log
    assert "model call failed" in log
    for secret in secrets:
        assert secret not in log


async def start_with_a_message_left_unanswered(
    start_bot, fakes, database_url, **settings
) -> BotHarness:
    """Store a user's message as a stop past its grace period leaves it, then start the bot."""
    _, model = fakes
    await upgrade_database_async(database_url)
    engine = create_engine(database_url)
    try:
        sessionmaker = create_sessionmaker(engine)
        conversations = ConversationStore(sessionmaker, timedelta(hours=1))
        leases = TurnLeases(sessionmaker, timedelta(seconds=30))
        assert await leases.take(OWNER) is not None
        content = user_turn_content(IncomingMessage("are you there?"), datetime.now(UTC))
        ref = MessageRef("111:1:1763900000", 1, sender_id=OWNER)
        await conversations.store_user_message(ChatThread(OWNER), OWNER, content, ref)
        assert await leases.hand_back() == 1
    finally:
        await engine.dispose()
    model.default = text("Yes, back now.")
    return await start_bot(**settings)


async def test_a_message_left_unanswered_is_answered_at_start(start_bot, fakes, database_url):
    bot = await start_with_a_message_left_unanswered(start_bot, fakes, database_url)
    await bot.app.bot_data.recovery
    assert bot.tg.messages_to(OWNER) == ["Yes, back now."]
    assert "are you there?" in str(bot.model.requests[-1]["messages"])


async def test_after_a_restart_a_user_no_longer_allowed_is_not_answered(
    start_bot, fakes, database_url
):
    bot = await start_with_a_message_left_unanswered(
        start_bot, fakes, database_url, allowed_user_ids=frozenset({FRIEND})
    )
    await bot.app.bot_data.recovery
    assert bot.tg.messages_to(OWNER) == []
    assert bot.model.requests == []


async def test_a_failure_while_answering_at_start_is_logged(start_bot, fakes, database_url, caplog):
    caplog.set_level(logging.ERROR)
    tg, _ = fakes
    tg.fail_next("sendMessage", status=403, description="Forbidden: bot was blocked by the user")
    bot = await start_with_a_message_left_unanswered(start_bot, fakes, database_url)
    await bot.app.bot_data.recovery
    assert "could not answer conversation" in caplog.text and "Forbidden" in caplog.text
    assert await bot.say(OWNER, "hello") == ["Yes, back now."]
