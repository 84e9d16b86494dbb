"""Take the docs' screenshots of the Mini App: `python -m tests.webapp.screens docs/images`.

Sample memories, a reminder and an import on a scratch SQLite database, shown in headless
Chromium at a phone's size with Telegram's dark theme (the stand-in's colours).
"""

import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

from bot.migrations import upgrade_database_async
from memory.categories import Category
from memory.db import create_engine, create_sessionmaker
from tests.builders import sqlite_url
from tests.webapp.support import (
    OWNER,
    add_reminder,
    applied_import,
    auth,
    cited_reply,
    running_app,
)
from tests.webapp.test_browser import TELEGRAM_JS, stand_in

SAMPLES = [
    ("Alice is allergic to peanuts", Category.CONTEXT, None, True),
    ("Alice works at Globex as a data engineer", Category.CONTEXT, None, False),
    ("Maria is Alice's sister; she lives in Porto", Category.PERSON, "Maria", False),
    ("Alice prefers window seats on flights", Category.PREFERENCE, None, False),
    ("Alice plays the cello on Sundays", Category.PREFERENCE, None, False),
    ("Project Atlas ships its beta on 12 March 2027", Category.PROJECT, "Atlas", False),
]


async def seed(app) -> str:
    """Store the samples; return the id of the memory to show on its own."""
    shown = ""
    for content, category, subject, pinned in SAMPLES:
        item = await app.store.add(OWNER, content, category, subject=subject)
        if pinned:
            await app.store.pin(OWNER, item.id, True)
        if category is Category.PREFERENCE and "window" in content:
            await app.store.update(OWNER, item.id, "Alice prefers aisle seats on long flights")
            shown = item.id
            said = "You asked for an aisle seat on the Lisbon flight, as you prefer on long ones."
            await cited_reply(app.store, OWNER, said, item.id)
    await add_reminder(app.reminders, OWNER, "Water the plants", rule="FREQ=WEEKLY")
    await add_reminder(app.reminders, OWNER, "Call Maria for her birthday")
    await applied_import(app.batches, OWNER, "Alice speaks Portuguese", "Alice runs 10 km a week")
    return shown


async def main(folder: Path) -> None:
    """Write memories.png, memory.png, reminders.png and batches.png into folder."""
    from playwright.async_api import async_playwright

    url = sqlite_url(Path(tempfile.mkdtemp()) / "screens.db")
    await upgrade_database_async(url)
    engine = create_engine(url)
    async with running_app(create_sessionmaker(engine)) as app, async_playwright() as pw:
        shown = await seed(app)
        browser = await pw.chromium.launch(
            executable_path=shutil.which("chromium") or "/usr/bin/chromium", args=["--no-sandbox"]
        )
        page = await browser.new_page(viewport={"width": 390, "height": 700})
        script = stand_in(auth(OWNER)["Authorization"].removeprefix("tma "))
        await page.route(
            TELEGRAM_JS, lambda r: r.fulfill(body=script, content_type="text/javascript")
        )
        await page.goto(f"{app.url}/")
        await page.wait_for_selector("#sections .item")
        await page.screenshot(path=folder / "mini-app-memories.png")
        await page.click(f"[data-id='{shown}']")
        await page.wait_for_selector("#replies li")
        await page.screenshot(path=folder / "mini-app-memory.png")
        for tab, ready in (("reminders", "[data-reminder]"), ("batches", "[data-batch]")):
            await page.click(f"[data-tab={tab}]")
            await page.wait_for_selector(ready)
            await page.screenshot(path=folder / f"mini-app-{tab}.png")
        await browser.close()
    await engine.dispose()


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/images")
    target.mkdir(parents=True, exist_ok=True)
    asyncio.run(main(target))
