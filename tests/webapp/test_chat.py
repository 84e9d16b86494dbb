"""The Mini App beside a polling bot: the Open button, its own port, changes told in chat."""

import asyncio
import json
import socket

import aiohttp
from telegram import Bot, Update

from bot.telegram.miniapp.updater import SECRET_HEADER, WebServerUpdater
from bot.telegram.ui import Button, View, markup
from memory.categories import Category
from tests.builders import private_message
from tests.buttons import last_to, press
from tests.harness import OWNER
from tests.webapp.support import add_reminder, auth

GROUP = -100123
PUBLIC = "https://memory.example.test/app"


def free_port() -> int:
    """Return a loopback port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def web_apps(message) -> list[tuple[str, str]]:
    """Return (label, URL) of a message's Mini App buttons."""
    rows = (message.get("reply_markup") or {}).get("inline_keyboard", [])
    return [(b["text"], b["web_app"]["url"]) for row in rows for b in row if "web_app" in b]


async def test_open_button_app_port_and_a_change_announced_with_a_working_undo(start_bot):
    port = free_port()
    harness = await start_bot(mini_app_url=PUBLIC, mini_app_port=port)
    item = await harness.store.add(OWNER, "Alice works at Acme", Category.CONTEXT)
    await harness.say(OWNER, "/memory")
    assert web_apps(last_to(harness, OWNER)) == [("Open", f"{PUBLIC}/?tab=memories")]
    await add_reminder(harness.services.reminders.store, OWNER, "Water the plants")
    await harness.say(OWNER, "/reminders")
    listing = last_to(harness, OWNER)
    assert web_apps(listing) == [("Open", f"{PUBLIC}/?tab=reminders")]
    # The page redrawn after a button press keeps its Open button.
    rows = listing["reply_markup"]["inline_keyboard"]
    [cancel] = [b["callback_data"] for row in rows for b in row if b["text"].startswith("Cancel")]
    await press(harness, listing, cancel)
    redrawn = harness.tg.message(OWNER, listing["message_id"])
    assert "No reminders" in redrawn["text"]
    assert web_apps(redrawn) == [("Open", f"{PUBLIC}/?tab=reminders")]
    # Telegram allows Mini App buttons in private chats only: a group's /memory has none.
    await harness.say(GROUP, "/memory", chat_type="supergroup")
    assert web_apps(last_to(harness, GROUP)) == []

    token = harness.tg.token
    url = f"http://127.0.0.1:{port}/app/api/memories/{item.id}/edit"
    async with aiohttp.ClientSession() as session:
        body = {"content": "Alice works at Globex"}
        async with session.post(url, json=body, headers=auth(OWNER, token=token)) as response:
            assert response.status == 200
    notice = await harness.tg.wait_for_messages(OWNER, timeout=10)
    assert "In the app:" in notice[-1]["result"]["text"]
    data = [
        b["callback_data"]
        for row in last_to(harness, OWNER)["reply_markup"]["inline_keyboard"]
        for b in row
    ]
    [undo] = data
    await press(harness, last_to(harness, OWNER), undo)
    assert (await harness.store.find(OWNER, item.id)).content == "Alice works at Acme"
    await harness.stop()
    # Stopping the updater closes the app's port with it.
    async with aiohttp.ClientSession() as session:
        try:
            async with session.get(f"http://127.0.0.1:{port}/app/"):
                raise AssertionError("the app still answers after the stop")
        except aiohttp.ClientConnectionError:
            pass


async def test_without_mini_app_url_there_is_no_button(harness):
    await harness.say(OWNER, "/memory")
    assert web_apps(last_to(harness, OWNER)) == []


def test_a_web_app_button_opens_the_app_instead_of_calling_back():
    keyboard = markup(((Button("Open", "", web_app=f"{PUBLIC}/"),),))
    assert keyboard is not None
    [[button]] = keyboard.inline_keyboard
    assert button.web_app is not None and button.web_app.url == f"{PUBLIC}/"
    assert button.callback_data is None
    assert View("x").buttons == ()


async def test_our_webhook_server_checks_the_secret_and_refuses_what_is_no_update(fakes):
    tg, _ = fakes
    bot = Bot(tg.token, base_url=tg.base_url)
    queue: asyncio.Queue[object] = asyncio.Queue()
    updater = WebServerUpdater(bot, queue, site=None)
    port = free_port()
    url = f"http://127.0.0.1:{port}/hook"
    async with bot:
        await updater.start_webhook("127.0.0.1", port, "hook", webhook_url=url, secret_token="s3")
        assert updater.running
        assert tg.webhook["url"] == url and tg.webhook["secret_token"] == "s3"
        update = {"update_id": 7, "message": private_message(OWNER, text="hi")}
        async with aiohttp.ClientSession() as session:

            async def post(body, secret="s3", kind="application/json") -> int:
                headers = {SECRET_HEADER: secret, "Content-Type": kind}
                async with session.post(url, data=body, headers=headers) as response:
                    return response.status

            assert await post(json.dumps(update), secret="wrong") == 403
            assert await post(json.dumps(update), kind="text/plain") == 403
            for garbage in ("null", "[]", "5", "{}", '{"update_id": 1, "message": 5}', "{"):
                assert await post(garbage) == 400, garbage
            assert queue.empty()
            assert await post(json.dumps(update)) == 200
        received = queue.get_nowait()
        assert isinstance(received, Update) and received.update_id == 7
        await updater.stop()
    assert not updater.running
