"""The Mini App in headless Chromium (Debian's), against the real server with signed initData.

Playwright drives the system browser (executable_path): no browser is downloaded. Telegram's
script is answered by a minimal stand-in of window.Telegram.WebApp; any other address outside
the test server is refused, so the page cannot reach anything else.
"""

import json
import os
import shutil
import sqlite3
from contextlib import closing
from urllib.parse import quote, urlencode

import pytest
import pytest_asyncio

from memory.categories import Category
from memory.db import create_engine, create_sessionmaker
from tests.builders import sqlite_url
from tests.webapp.support import (
    add_reminder,
    applied_import,
    cited_reply,
    init_data,
    running_app,
)

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    if os.environ.get("CI") == "true":
        raise RuntimeError(".ci/run installs chromium; it is missing")
    pytest.skip(
        "Debian's chromium is not installed (apt-get install chromium)", allow_module_level=True
    )

from playwright.async_api import Page, async_playwright, expect  # noqa: E402

pytestmark = pytest.mark.asyncio(loop_scope="module")
TELEGRAM_JS = "https://telegram.org/js/telegram-web-app.js"
USERS = range(1001, 1010)  # one owner per test, all allowed: the tests share one database
XSS = [
    "<img src=x onerror=alert(1)>",
    "<script>alert('x')</script>",
    '"><svg onload=alert(1)>',
    "javascript:alert(1)",
    "</textarea><b>bold</b>",
    "{{constructor.constructor('alert(1)')()}}",
]


STAND_IN = """
const calls = [];
const button = (name) => ({
  handlers: [], show() { calls.push(name + ".show"); }, hide() { calls.push(name + ".hide"); },
  setText(t) { this.text = t; }, onClick(f) { this.handlers.push(f); },
  offClick(f) { this.handlers = this.handlers.filter((h) => h !== f); },
  press() { this.handlers.forEach((h) => h()); },
});
window.Telegram = { WebApp: {
  initData: INIT_DATA, colorScheme: "dark",
  themeParams: { bg_color: "#17212b", text_color: "#f5f5f5" },
  ready() { calls.push("ready"); }, expand() {}, BackButton: button("BackButton"),
  MainButton: button("MainButton"), calls,
} };
document.documentElement.style.setProperty("--tg-theme-bg-color", "#17212b");
document.documentElement.style.setProperty("--tg-theme-text-color", "#f5f5f5");
"""


def stand_in(signed: str) -> str:
    """Return a minimal window.Telegram.WebApp, as Telegram's script would make it."""
    return STAND_IN.replace("INIT_DATA", json.dumps(signed))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def app(sqlite_template, tmp_path_factory):
    """Serve the app on a SQLite database of this module's own."""
    path = tmp_path_factory.mktemp("browser") / "bot.db"
    with (
        closing(sqlite3.connect(sqlite_template)) as source,
        closing(sqlite3.connect(path)) as copy,
    ):
        source.backup(copy)
    engine = create_engine(sqlite_url(path))
    async with running_app(create_sessionmaker(engine), allowed=frozenset(USERS)) as running:
        yield running
    await engine.dispose()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser():
    """Launch Chromium once for the module."""
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        await launched.close()


def fragment(signed: str) -> str:
    """Return the fragment Telegram opens a Mini App's URL with: the initData, and more."""
    return "#" + urlencode(
        {"tgWebAppData": signed, "tgWebAppVersion": "7.10", "tgWebAppPlatform": "android"},
        quote_via=quote,
    )


async def open_app(
    browser, app, user: int, query: str = "", signed: str | None = None, in_url: bool = True
) -> tuple[Page, list[str]]:
    """Open the app as Telegram would for user; fail the test on any script error or dialog.

    Telegram puts the initData in the URL's fragment and in its script's WebApp object; with
    in_url False only the script has it, and the page must wait for it.
    """
    page = await browser.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("dialog", lambda dialog: problems.append("dialog: " + dialog.message))

    def console(message) -> None:
        # A refused sign-in is logged by the browser as a failed load; anything else is not ok.
        if message.type == "error" and "401" not in message.text:
            problems.append(message.text)

    page.on("console", console)
    signed = signed if signed is not None else init_data(user)
    script = stand_in(signed)

    async def route(request_route):
        url = request_route.request.url
        if url == TELEGRAM_JS:
            await request_route.fulfill(body=script, content_type="text/javascript")
        elif url.startswith(app.url):
            await request_route.continue_()
        else:
            await request_route.abort()

    await page.route("**/*", route)
    await page.goto(f"{app.url}/{query}{fragment(signed) if in_url else ''}")
    return page, problems


async def test_list_search_open_edit_and_undo(browser, app):
    user = USERS[0]
    cello = await app.store.add(user, "Alice plays the cello on Sundays", Category.PREFERENCE)
    await app.store.add(user, "Alice's sister is Maria", Category.PERSON, subject="Maria")
    pinned = await app.store.add(user, "Alice is allergic to peanuts", Category.CONTEXT)
    await app.store.pin(user, pinned.id, True)
    page, problems = await open_app(browser, app, user)
    sections = page.locator("#sections")
    await expect(sections.locator("h2").first).to_have_text("Pinned (1)")
    await expect(sections.locator(".item")).to_have_count(3)
    await page.fill("#search", "cello")
    await expect(sections.locator(".item")).to_have_count(1)
    await sections.locator(".item").click()
    await expect(page.locator("#content")).to_have_text(cello.content)
    await page.fill("#editor", "Alice plays the cello on Saturdays")
    await page.click("#save")
    await expect(page.locator("#toast-text")).to_have_text("Saved as version 2.")
    await expect(page.locator(".versions li")).to_have_count(2)
    assert (await app.store.find(user, cello.id)).content.endswith("Saturdays")
    await page.click("#toast-undo")
    await expect(page.locator("#content")).to_have_text(cello.content)
    assert (await app.store.find(user, cello.id)).version == 3
    # Telegram's own Back button leads back to the list.
    await page.evaluate("Telegram.WebApp.BackButton.press()")
    await expect(page.locator("#search")).to_be_visible()
    assert problems == []


async def test_pin_delete_and_undo_the_delete(browser, app):
    user = USERS[1]
    item = await app.store.add(user, "Alice runs on Tuesdays", Category.PREFERENCE)
    page, problems = await open_app(browser, app, user, in_url=False)
    await page.locator(".item").click()
    await page.click("#pin")
    await expect(page.locator("#pin")).to_have_text("Unpin")
    assert (await app.store.find(user, item.id)).pinned
    await page.click("#delete")
    await expect(page.locator(".empty")).to_have_text("No memories yet.")
    assert (await app.store.find(user, item.id)).deleted_at is not None
    await page.click("#toast-undo")
    await expect(page.locator("#sections .item")).to_have_count(1)
    assert (await app.store.find(user, item.id)).deleted_at is None
    assert problems == []


async def test_a_reminder_cancelled_and_a_batch_undone_then_redone(browser, app):
    user = USERS[2]
    await add_reminder(app.reminders, user, "Water the plants", rule="FREQ=DAILY")
    await applied_import(app.batches, user, "Alice speaks Portuguese")
    page, problems = await open_app(browser, app, user, "?tab=reminders", in_url=False)
    await expect(page.locator("[data-reminder]")).to_contain_text("Water the plants")
    await page.get_by_role("button", name="Cancel").click()
    await expect(page.locator(".empty")).to_have_text("No upcoming reminders.")
    await page.click("[data-tab=batches]")
    await page.get_by_role("button", name="Undo all").click()
    await expect(page.get_by_role("button", name="Redo all")).to_be_visible()
    assert [i.content for i in await app.store.list_active(user)] == []
    await page.get_by_role("button", name="Redo all").click()
    await expect(page.locator("#toast-text")).to_have_text("Redone: 1 memories.")
    assert [i.content for i in await app.store.list_active(user)] == ["Alice speaks Portuguese"]
    assert problems == []


async def test_hostile_memory_texts_stay_text(browser, app):
    user = USERS[3]
    for number, text in enumerate(XSS):
        await app.store.add(user, f"Note {number}: {text}", Category.CONTEXT, subject=text[:40])
    page, problems = await open_app(browser, app, user)
    await expect(page.locator("#sections .item")).to_have_count(len(XSS))
    # The DOM's text, not innerText: rows are content-visibility: auto, and innerText skips
    # them until the browser's next rendering update has judged them near the viewport.
    for text in XSS:
        await expect(page.locator("#sections")).to_contain_text(text)
    await page.locator("#sections .item").first.click()
    await expect(page.locator(".versions li")).to_have_count(1)
    for page_part in ("#view",):
        injected = await page.locator(
            f"{page_part} img, {page_part} svg, {page_part} script"
        ).count()
        assert injected == 0
    assert problems == []


async def test_forged_or_stale_initdata_shows_no_memory(browser, app):
    user = USERS[4]
    await app.store.add(user, "Alice's bank PIN hint", Category.CONTEXT)
    for signed in (init_data(user, token="1:other-bot"), init_data(user, auth_date=1), ""):
        page, _ = await open_app(browser, app, user, signed=signed)
        await expect(page.locator("#toast-text")).to_have_text(
            "sign-in refused" if signed else "sign-in required"
        )
        assert "PIN" not in await page.locator("body").text_content()
        await page.close()


async def test_one_memory_shows_the_replies_that_drew_on_it_as_text(browser, app):
    user = USERS[5]
    tea = await app.store.add(user, "Alice likes green tea", Category.PREFERENCE)
    cat = await app.store.add(user, "Alice has a cat", Category.CONTEXT)
    await cited_reply(app.store, user, "You like green tea, so try sencha.", tea.id)
    await cited_reply(app.store, user, "Tea again: " + XSS[0] + " " + XSS[2], tea.id)
    page, problems = await open_app(browser, app, user)
    statuses: list[int] = []
    page.on(
        "response",
        lambda response: (
            statuses.append(response.status) if response.url.endswith("/api/memories") else None
        ),
    )
    await page.locator(f"[data-id='{tea.id}']").click()
    replies = page.locator("#replies li")
    await expect(replies).to_have_count(2)
    await expect(replies.first).to_contain_text("Tea again: " + XSS[0])
    await expect(replies.nth(1)).to_contain_text("You like green tea, so try sencha.")
    assert await page.locator("#view img, #view svg, #view script").count() == 0
    await page.evaluate("Telegram.WebApp.BackButton.press()")
    await page.locator(f"[data-id='{cat.id}']").click()
    await expect(page.locator("#replies")).to_have_text("No reply has drawn on it yet.")
    # Back to the list, unchanged: the server answered 304 and the page kept what it held.
    assert statuses[-1:] == [304]
    assert problems == []
