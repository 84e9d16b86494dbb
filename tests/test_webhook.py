"""Webhook mode: `python -m bot` with WEBHOOK_URL registers itself and checks every request."""

import asyncio
import re
import socket

import aiohttp
import pytest

from bot.__main__ import webhook_endpoint, webhook_secret
from bot.settings import Settings, SettingsError, load_settings
from tests.builders import private_message
from tests.fakes.anthropic_server import paced, text
from tests.harness import OWNER
from tests.process import BotProcess, bot_environment
from tests.webapp.support import init_data


def settings(**values) -> Settings:
    """Return settings from these values only, ignoring .env."""
    return Settings(
        _env_file=None, **{"telegram_bot_token": "1:t", "anthropic_api_key": "k"} | values
    )


def test_the_derived_secret_is_stable_per_token_and_in_telegrams_alphabet():
    first = webhook_secret(settings(telegram_bot_token="123:abc"))
    assert first == webhook_secret(settings(telegram_bot_token="123:abc"))
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,256}", first)
    assert first != webhook_secret(settings(telegram_bot_token="123:abd"))
    assert "abc" not in first


def test_webhook_secret_wins_and_must_be_what_telegram_accepts(monkeypatch):
    assert webhook_secret(settings(webhook_secret="my_Secret-1")) == "my_Secret-1"
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "1:t")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("WEBHOOK_SECRET", "has spaces!")
    with pytest.raises(SettingsError, match="WEBHOOK_SECRET must be 1 to 256 characters"):
        load_settings(_env_file=None)
    monkeypatch.setenv("WEBHOOK_SECRET", "")
    assert load_settings(_env_file=None).webhook_secret is None


@pytest.mark.parametrize(
    ("url", "path", "registered"),
    [
        ("https://bot.example.com", "telegram", "https://bot.example.com/telegram"),
        ("https://bot.example.com/", "telegram", "https://bot.example.com/telegram"),
        ("https://bot.example.com/hooks/tg", "hooks/tg", "https://bot.example.com/hooks/tg"),
    ],
)
def test_the_endpoint_is_the_urls_own_path_or_telegram(url, path, registered):
    assert webhook_endpoint(url) == (path, registered)


@pytest.mark.parametrize("url", ["bot.example.com", "ftp://bot.example.com", "https://x/?a=1"])
def test_a_malformed_webhook_url_stops_start_up_by_name(monkeypatch, url):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "1:t")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("WEBHOOK_URL", url)
    with pytest.raises(SettingsError, match=r"^Invalid settings: WEBHOOK_URL must"):
        load_settings(_env_file=None)


def free_port() -> int:
    """Return a loopback port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def message_update(chat_id: int, words: str) -> dict:
    """Return an Update with a private text message, as Telegram would post it."""
    return {"message": private_message(chat_id, text=words)}


async def post(tg, url: str, update: dict, secret: str | None = None) -> int:
    """Post like Telegram does, waiting out the moment between setWebhook and listening."""
    async with asyncio.timeout(30):
        while True:
            try:
                return await tg.post_update_to(url, update, secret_token=secret)
            except aiohttp.ClientConnectionError:
                # PTB calls setWebhook before its server listens, and nothing outside the bot's
                # process tells when it does: retry the connection until it is accepted.
                await asyncio.sleep(0.05)


async def mini_app_on_the_same_port(app_url: str, signed: dict[str, str]) -> None:
    """Check the Mini App answers beside the webhook: its page, and its API behind sign-in."""
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{app_url}/") as page:
            assert page.status == 200
            assert "default-src 'self'" in page.headers["Content-Security-Policy"]
        async with session.get(f"{app_url}/api/memories") as unsigned:
            assert unsigned.status == 401
        async with session.get(f"{app_url}/api/memories", headers=signed) as listed:
            assert (listed.status, (await listed.json())["memories"]) == (200, [])


async def test_python_m_bot_serves_webhooks_and_refuses_requests_without_the_secret(
    fakes, empty_database_url, tmp_path
):
    tg, model = fakes
    port = free_port()
    env = bot_environment(
        tg,
        model,
        empty_database_url,
        WEBHOOK_URL=f"http://127.0.0.1:{port}",
        WEBHOOK_LISTEN="127.0.0.1",
        PORT=str(port),
        # The Mini App shares the webhook's port (docs/mini-app.md).
        MINI_APP_URL="https://memory.example.test/app",
    )
    env.pop("WEBHOOK_SECRET", None)
    bot = await BotProcess(env, tmp_path).start()
    try:
        await tg.wait_for_call("setWebhook", timeout=60)
        expected_secret = webhook_secret(settings(telegram_bot_token=tg.token))
        assert tg.webhook["url"] == f"http://127.0.0.1:{port}/telegram"
        assert tg.webhook["secret_token"] == expected_secret
        endpoint = tg.webhook["url"]

        # Refused before anything is read: no header, a wrong one, the bot token itself.
        assert await post(tg, endpoint, message_update(OWNER, "no secret"), secret="") == 403
        assert await post(tg, endpoint, message_update(OWNER, "bad"), secret="wrong") == 403
        assert await post(tg, endpoint, message_update(OWNER, "bad"), secret=tg.token) == 403

        model.script(text("Hello over the webhook"))
        assert await post(tg, endpoint, message_update(OWNER, "hi")) == 200
        [reply] = await tg.wait_for_messages(OWNER, timeout=60)
        assert reply["result"]["text"] == "Hello over the webhook"

        # Telegram's Stop reaches the bot over the webhook too: it asked for the update.
        assert "stopped_message_generation" in tg.webhook["allowed_updates"]
        model.script(paced(" ".join(["word"] * 400), first_delay=0.1, duration=30.0))
        assert await post(tg, endpoint, message_update(OWNER, "talk")) == 200
        await tg.wait_for_draft(OWNER, "word", timeout=60)
        assert await post(tg, endpoint, tg.press_stop(OWNER, webhook=True)) == 200
        [_, stopped] = await tg.wait_for_messages(OWNER, count=2, timeout=60)
        assert stopped["result"]["text"].endswith("(stopped)")
        await model.wait_for_close()
        signed = {"Authorization": "tma " + init_data(OWNER, token=tg.token)}
        await mini_app_on_the_same_port(f"http://127.0.0.1:{port}/app", signed)
    finally:
        code = await bot.stop()
    assert code == 0, bot.output
    # Messages in one chat are handled in order, so a refused one would have come first.
    assert tg.messages_to(OWNER)[0] == "Hello over the webhook"
    assert len(model.requests) == 2
    assert model.requests[0]["messages"][-1]["content"][-1]["text"].endswith("hi")
    assert not any(name == "getUpdates" for name, _ in tg.calls)
    for secret in (tg.token, model.api_key, expected_secret, signed["Authorization"][4:]):
        assert secret not in bot.output


@pytest.mark.parametrize(
    ("values", "error"),
    [
        ({"mini_app_url": "http://memory.example.test/app"}, "MINI_APP_URL must be"),
        ({"mini_app_url": "https://memory.example.test/app"}, "MINI_APP_URL needs MINI_APP_PORT"),
    ],
)
def test_a_mini_app_url_must_be_https_and_have_somewhere_to_listen(monkeypatch, values, error):
    for name, value in values.items():
        monkeypatch.setenv(name.upper(), value)
    with pytest.raises(SettingsError, match=error):
        load_settings(_env_file=None, telegram_bot_token="1:t", anthropic_api_key="k")


def test_a_mini_app_with_a_webhook_or_a_port_is_fine():
    assert settings(mini_app_url="https://m.test", mini_app_port=8080).mini_app_port == 8080
    assert settings(mini_app_url="https://m.test/x", webhook_url="https://m.test").mini_app_url
    assert settings().mini_app_url is None
