"""The lists the bot writes itself as Rich Messages, end to end: real PTB over HTTP.

A reply's sources (the memories it drew on) and a tidy or import plan go as one rich list
when they are many, their buttons on it, and are shown again in place as rich; the web pages
a reply cites go with the reply, one rich message when they are many. Few go as today's
HTML, and RICH_MESSAGES=off or Telegram refusing keeps today's HTML.
"""

import pytest

from memory.categories import Category
from tests.buttons import button, buttons, last_to, press
from tests.fakes.anthropic_server import Reply, text
from tests.fakes.anthropic_web import cited, search_result, web_search
from tests.harness import OWNER
from tests.tidy_support import plan_reply

# The lists read the same rows on both engines; what is tested here is what Telegram gets.
SQLITE_ONLY = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
# A memory's own Markdown must stay text: it starts no list, heading or link of its own.
TRICKY = "# not a heading *nor bold* [nor](a link) $x$"


async def cited_reply(harness, count: int) -> tuple[list, dict]:
    """Store count memories, get a reply citing them all; return them and the reply."""
    items = [
        await harness.store.add(OWNER, f"Fact number {i}: {TRICKY}", Category.CONTEXT)
        for i in range(count)
    ]
    await harness.say(OWNER, "hi")  # the memory block now holds them
    markers = " ".join(f"[[mem:{item.id}]]" for item in items)
    harness.model.script(text(f"All of it. {markers}"))
    assert await harness.say(OWNER, "what do you know?") == ["All of it."]
    return items, last_to(harness, OWNER)


def items_of(blocks: list[dict]) -> list[str]:
    """Return the texts of a rich message's list items."""
    return [block["text"] for block in blocks if block["type"] == "list_item"]


@SQLITE_ONLY
async def test_many_sources_go_as_one_rich_list_with_working_buttons(harness):
    tg = harness.tg
    items, reply = await cited_reply(harness, 9)
    assert await press(harness, reply, button(reply, "Based on 9 memories")) == []
    [record] = tg.rich
    assert record["chat_id"] == OWNER and tg.rejected == []
    listed = items_of(record["blocks"])
    assert [line.split("`")[1] for line in listed] == [f"[{item.id}]" for item in items]
    # The memory's Markdown arrives escaped, so Telegram shows it as written.
    escaped = r"\# not a heading \*nor bold\* \[nor\]\(a link\) \$x\$"
    assert all(escaped in line for line in listed)
    shown = record["result"]
    assert len(buttons(shown)) == 18  # Forget and Pin for each

    # Pin is pressed on the rich list: it is shown again in place, rich, with Unpin.
    first = items[0]
    assert await press(harness, shown, button(shown, f"Forget [{first.id}]")) == [
        f"Deleted: 'Fact number 0: {TRICKY}'"
    ]
    await press(harness, shown, buttons(tg.message(OWNER, shown["message_id"]))[1][1])
    now = tg.message(OWNER, shown["message_id"])
    assert "text" not in now and len(tg.rich_edits) == 2 and tg.rich == [record]
    lines = items_of(now["rich_message"]["blocks"])
    assert lines[0].endswith("forgotten") and "~~" in lines[0]
    assert lines[1].startswith("📌") and (await harness.store.find(OWNER, items[1].id)).pinned
    assert buttons(now)[1][0] == "Unpin" and len(buttons(now)) == 16


@SQLITE_ONLY
async def test_few_sources_stay_todays_html(harness):
    _, reply = await cited_reply(harness, 7)
    [listed] = await press(harness, reply, button(reply, "Based on 7 memories"))
    assert listed.startswith("This reply was based on:") and harness.tg.rich == []


@SQLITE_ONLY
async def test_rich_messages_off_keeps_todays_sources_list(start_bot):
    harness = await start_bot(rich_messages=False)
    items, reply = await cited_reply(harness, 9)
    [listed] = await press(harness, reply, button(reply, "Based on 9 memories"))
    assert listed.startswith("This reply was based on:")
    assert all(f"[{item.id}] Fact number" in listed for item in items)
    shown = last_to(harness, OWNER)
    await press(harness, shown, buttons(shown)[1][1])
    assert "This reply was based on:" in harness.tg.message(OWNER, shown["message_id"])["text"]
    calls = harness.tg.calls
    assert not any(name.startswith("sendRich") or "rich_message" in p for name, p in calls)


@SQLITE_ONLY
async def test_a_refused_rich_list_goes_as_todays_html(harness):
    _, reply = await cited_reply(harness, 9)
    harness.tg.fail_always("sendRichMessage", status=400)
    [listed] = await press(harness, reply, button(reply, "Based on 9 memories"))
    assert listed.startswith("This reply was based on:") and harness.tg.rich == []
    # Its buttons still work; the edit in place tries rich, is refused, and shows HTML.
    shown = last_to(harness, OWNER)
    harness.tg.fail_next("editMessageText", status=400)
    await press(harness, shown, buttons(shown)[1][1])
    assert "📌" in harness.tg.message(OWNER, shown["message_id"])["text"]


async def exported(harness, count: int) -> dict:
    """Store count memories, export them, forget them all; return the export document."""
    for i in range(count):
        await harness.store.add(OWNER, f"Imported fact {i}: {TRICKY}", Category.CONTEXT)
    await harness.say(OWNER, "/memory export")
    await harness.store.clear(OWNER)
    return harness.tg.documents[-1]


def push_import(harness, export: dict) -> None:
    """Send the export back with the caption /memory import."""
    harness.tg.push_document(
        OWNER, export["data"], export["filename"], "application/json", caption="/memory import"
    )


@SQLITE_ONLY
async def test_a_long_import_plan_is_a_rich_list_its_buttons_in_place(harness):
    tg = harness.tg
    push_import(harness, await exported(harness, 9))
    await harness.idle()
    [record] = tg.rich
    head, *lines = [b["text"] for b in record["blocks"]]
    assert head.startswith("**Import plan: 9 memory") and len(lines) == 9
    assert all(r"Save 'Imported fact" in line and r"\[nor\]\(a link\)" in line for line in lines)
    plan = record["result"]
    assert [label for label, _ in buttons(plan)][-2:] == ["Import (9)", "Cancel"]

    await press(harness, plan, button(plan, "1 ✓"))  # skip the first line
    now = tg.message(OWNER, plan["message_id"])
    assert items_of(now["rich_message"]["blocks"])[0].startswith("(skipped) Save")
    assert button(now, "Import (8)")
    await press(harness, now, button(now, "Import (8)"))
    decided = tg.message(OWNER, plan["message_id"])
    assert "Imported 8 memory(ies) as one batch" in decided["text"]
    assert "rich_message" not in decided and len(await harness.store.list_active(OWNER)) == 8


@SQLITE_ONLY
async def test_rich_messages_off_keeps_todays_import_plan(start_bot):
    harness = await start_bot(rich_messages=False)
    push_import(harness, await exported(harness, 9))
    await harness.idle()
    plan = last_to(harness, OWNER)
    assert plan["text"].startswith("Import plan: 9 memory(ies).") and harness.tg.rich == []


def eight_pages_cited() -> Reply:
    """Return an answer that searched and cited eight pages."""
    pages = [search_result(f"Pharmacy {i} hours", f"https://p{i}.example.com/h") for i in range(8)]
    cites = [cited(f"Pharmacy {i} closes at {i + 1} pm. ", page) for i, page in enumerate(pages)]
    return Reply([*web_search("pharmacy hours", pages), *cites])


@SQLITE_ONLY
async def test_many_web_sources_go_with_the_reply_as_one_rich_list(harness):
    harness.model.script(eight_pages_cited())
    assert await harness.say(OWNER, "which pharmacies are open late?") == []
    [blocks] = harness.tg.rich_to(OWNER)
    assert blocks[0]["text"].startswith("Pharmacy 0 closes at 1 pm.")
    assert items_of(blocks) == [
        f"[Pharmacy {i} hours](https://p{i}.example.com/h) (p{i}.example.com)" for i in range(8)
    ]


@SQLITE_ONLY
async def test_rich_messages_off_keeps_todays_web_sources(start_bot):
    harness = await start_bot(rich_messages=False)
    harness.model.script(eight_pages_cited())
    [reply] = await harness.say(OWNER, "which pharmacies are open late?")
    assert reply.endswith(
        "Sources\n" + "\n".join(f"• Pharmacy {i} hours (p{i}.example.com)" for i in range(8))
    )
    assert harness.tg.rich == []


@SQLITE_ONLY
async def test_a_long_tidy_plan_is_rich_and_its_undo_all_still_works(harness):
    tg, store = harness.tg, harness.store
    trips = [
        await store.add(
            OWNER, f"The user flies to city {i} on {i + 1} March 2026", Category.CONTEXT
        )
        for i in range(9)
    ]
    for i in range(14):  # a plan may change at most 40% of the memories
        await store.add(OWNER, f"The user keeps fact {i}", Category.CONTEXT)
    lines = [{"action": "archive", "memory_id": t.id, "reason": "The trip is past"} for t in trips]
    harness.model.script(plan_reply(*lines))
    assert await harness.say(OWNER, "/memory tidy") == []
    [record] = tg.rich
    assert len(items_of(record["blocks"])) == 9
    assert all(line.startswith("Archive `[") for line in items_of(record["blocks"]))
    plan = record["result"]
    await press(harness, plan, button(plan, "Apply (9)"))
    applied = tg.message(OWNER, plan["message_id"])
    assert "Applied 9 change(s) as one batch" in applied["text"]
    assert len(await store.list_active(OWNER)) == 14
    await press(harness, applied, button(applied, "Undo all"))
    assert len(await store.list_active(OWNER)) == 23
    assert "Undone: 9 memory change(s)" in last_to(harness, OWNER)["text"]
