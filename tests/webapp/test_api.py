"""The Mini App's API over HTTP on both engines: sign-in, ownership, sizes, rates, every change."""

import logging
import time

import pytest
from sqlalchemy import update

from bot.conversations.models import Turn
from bot.webapp.events import BatchReverted, Changed, Pinned, ReminderChanged, Restored, Undone
from memory.categories import Category
from tests.webapp.support import (
    OTHER,
    OWNER,
    STRANGER,
    add_reminder,
    applied_import,
    auth,
    cited_reply,
    init_data,
    running_app,
)

STALE = int(time.time()) - 2 * 3600


@pytest.fixture
async def app(sessionmaker):
    async with running_app(sessionmaker) as running:
        yield running


async def test_every_call_needs_fresh_initdata_signed_for_this_bot_and_an_allowed_user(app, caplog):
    caplog.set_level(logging.INFO, logger="bot.webapp")
    await app.store.add(OWNER, "Alice likes green tea", Category.PREFERENCE)
    forged = init_data(OWNER).replace("hash=", "hash=0")
    other_bot = init_data(OWNER, token="999:another-bot")
    # A field changed after signing: the user id swapped for another's.
    swapped = init_data(OWNER).replace(f"%22id%22%3A{OWNER}", f"%22id%22%3A{OTHER}")
    for headers in (
        {},
        {"Authorization": "Bearer " + init_data(OWNER)},
        {"Authorization": "tma " + forged},
        {"Authorization": "tma " + other_bot},
        {"Authorization": "tma " + swapped},
        {"Authorization": "tma " + init_data(OWNER, auth_date=STALE)},
        {"Authorization": "tma " + init_data(OWNER, auth_date=int(time.time()) + 3600)},
        {"Authorization": "tma " + init_data(OWNER) + "&hash=again"},
        {"Authorization": "tma " + "x" * 5000},
    ):
        status, body = await app.call("GET", "memories", headers=headers)
        assert status == 401, headers
        assert "tea" not in str(body)
    # Each refusal is logged with its reason, never with the initData or its hash.
    assert "signature does not match" in caplog.text
    assert "expired" in caplog.text
    assert "hash=" not in caplog.text and forged.split("hash=")[1] not in caplog.text
    status, body = await app.call("GET", "memories", user=STRANGER)
    assert status == 403
    assert "tea" not in str(body)
    status, body = await app.call("GET", "memories")
    assert status == 200
    assert [m["content"] for m in body["memories"]] == ["Alice likes green tea"]


async def test_another_owners_ids_are_not_found_on_every_endpoint(app):
    theirs = await app.store.add(OTHER, "Bob's secret plan", Category.PROJECT)
    gone = await app.store.add(OTHER, "Bob's old plan", Category.PROJECT)
    await app.store.delete(OTHER, gone.id)
    reminder = await add_reminder(app.reminders, OTHER, "Bob's dentist", rule="FREQ=DAILY")
    batch_id = await applied_import(app.batches, OTHER, "Bob imported this")
    status, body = await app.call("GET", "memories")
    assert body == {"memories": [], "deleted": [], "enabled": True}
    attempts = [
        ("GET", f"memories/{theirs.id}", None),
        ("POST", f"memories/{theirs.id}/edit", {"content": "Mine now, says Alice"}),
        ("POST", f"memories/{theirs.id}/delete", None),
        ("POST", f"memories/{theirs.id}/pin", None),
        ("POST", f"memories/{theirs.id}/unpin", None),
        ("POST", f"memories/{gone.id}/restore", None),
        ("POST", f"reminders/{reminder.id}/cancel", None),
        ("POST", f"reminders/{reminder.id}/skip", None),
        ("POST", f"batches/{batch_id}/revert", None),
    ]
    for method, path, body in attempts:
        status, answer = await app.call(method, path, json=body)
        assert (status, answer) == (404, {"error": "not found"}), path
    other_change = (await app.store.apply_undoable(OTHER, _forget(theirs.id))).change_id
    assert await app.call("POST", f"undo/{other_change}") == (404, {"error": "not found"})
    for path in ("search?q=Bob", "reminders", "batches", "export?format=json", "export?format=md"):
        status, answer = await app.call("GET", path)
        assert status == 200
        assert "Bob" not in str(answer), path
    # Nothing of theirs changed, and nothing was announced.
    assert (await app.store.find(OTHER, theirs.id)).deleted_at is not None  # the undo above
    assert (await app.reminders.get(OTHER, reminder.id)).state.value == "active"
    assert app.told.told == []


def _forget(memory_id):
    from memory.items import ForgetMemory

    return ForgetMemory(memory_id)


async def test_bodies_over_the_limit_and_bad_input_are_refused(app):
    item = await app.store.add(OWNER, "Alice lives in Lisbon", Category.CONTEXT)
    status, _ = await app.call("POST", f"memories/{item.id}/edit", data=b"x" * 20_000)
    assert status == 413
    status, _ = await app.call("POST", f"memories/{item.id}/edit", json={"content": "no"})
    assert status == 400
    status, _ = await app.call("POST", f"memories/{item.id}/edit", data=b"{not json")
    assert status == 400
    status, _ = await app.call("GET", "search?q=" + "a" * 500)
    assert status == 400
    assert (await app.store.find(OWNER, item.id)).version == 1


async def test_requests_and_failed_sign_ins_are_rate_limited(sessionmaker):
    async with running_app(sessionmaker, per_user=5, refused=3) as app:
        for _ in range(5):
            assert (await app.call("GET", "memories"))[0] == 200
        assert (await app.call("GET", "memories"))[0] == 429
        # Another user has a budget of their own.
        assert (await app.call("GET", "memories", user=OTHER))[0] == 200
        for _ in range(3):
            assert (await app.call("GET", "memories", user=None))[0] == 401
        # Past the limit, failures from the address get 429 (and no log line)...
        assert (await app.call("GET", "memories", user=None))[0] == 429
        # ...but a stranger's failures never lock out a signed-in user at the same address.
        assert (await app.call("GET", "memories", user=OTHER))[0] == 200
        app.clock.now += 61
        assert (await app.call("GET", "memories"))[0] == 200
        assert (await app.call("GET", "memories", user=None))[0] == 401


async def test_edit_delete_undo_pin_restore_each_a_version_and_announced(app):
    item = await app.store.add(OWNER, "Alice works at Acme", Category.CONTEXT)
    status, body = await app.call(
        "POST", f"memories/{item.id}/edit", json={"content": "Alice works at Globex"}
    )
    assert status == 200
    assert body["memory"]["version"] == 2
    status, body = await app.call("POST", f"undo/{body['change_id']}")
    assert body["memory"]["content"] == "Alice works at Acme"
    status, body = await app.call("POST", f"memories/{item.id}/pin")
    assert body["memory"]["pinned"] is True
    status, body = await app.call("POST", f"memories/{item.id}/delete")
    assert (status, body["memory"]["id"]) == (200, item.id)
    assert (await app.store.find(OWNER, item.id)).deleted_at is not None
    status, body = await app.call("POST", f"memories/{item.id}/restore")
    assert body["memory"]["deleted_at"] is None
    status, body = await app.call("GET", f"memories/{item.id}")
    contents = [(v["number"], v["content"], v["made_by"]) for v in body["versions"]]
    assert contents == [
        (1, "Alice works at Acme", "you"),
        (2, "Alice works at Globex", "you"),
        (3, "Alice works at Acme", "you"),
    ]
    kinds = [type(event) for owner, event in app.told.told]
    assert kinds == [Changed, Undone, Pinned, Changed, Restored]
    assert {owner for owner, _ in app.told.told} == {OWNER}
    assert (await app.call("POST", "undo/999999"))[0] == 404


async def test_search_lists_reminders_and_undoes_and_redoes_a_batch(app):
    await app.store.add(OWNER, "Alice plays the cello on Sundays", Category.PREFERENCE)
    await app.store.add(OWNER, "Alice's sister is called Maria", Category.PERSON)
    status, body = await app.call("GET", "search?q=cello")
    assert len(body["ids"]) == 1
    reminder = await add_reminder(app.reminders, OWNER, "Water the plants", rule="FREQ=DAILY")
    status, body = await app.call("GET", "reminders")
    [shown] = body["reminders"]
    assert shown["text"] == "Water the plants"
    assert "09:00" in shown["next_local"]
    status, body = await app.call("POST", f"reminders/{reminder.id}/skip")
    assert body["reminder"]["next_at"] > shown["next_at"]
    status, body = await app.call("POST", f"reminders/{reminder.id}/cancel")
    assert body["reminder"]["state"] == "cancelled"
    batch_id = await applied_import(app.batches, OWNER, "Alice speaks Portuguese")
    status, body = await app.call("GET", "batches")
    assert [(b["id"], b["kind"], len(b["lines"])) for b in body["batches"]] == [
        (batch_id, "import", 1)
    ]
    status, body = await app.call("POST", f"batches/{batch_id}/revert")
    undo_all = body["batch_id"]
    assert status == 200
    assert "Portuguese" not in str((await app.call("GET", "memories"))[1]["memories"])
    assert (await app.call("POST", f"batches/{batch_id}/revert"))[0] == 409
    status, body = await app.call("POST", f"batches/{undo_all}/revert")
    assert "Portuguese" in str((await app.call("GET", "memories"))[1]["memories"])
    told = [event for _, event in app.told.told]
    assert [type(e) for e in told] == [
        ReminderChanged,
        ReminderChanged,
        BatchReverted,
        BatchReverted,
    ]
    assert [e.redo for e in told if isinstance(e, BatchReverted)] == [False, True]


async def test_exports_download_json_and_markdown(app):
    await app.store.add(OWNER, "Alice likes <b>bold</b> tea", Category.PREFERENCE)
    async with app.session.get(f"{app.url}/api/export?format=md", headers=auth()) as response:
        assert response.headers["Content-Disposition"].startswith("attachment; filename=")
        assert "- Alice likes <b>bold</b> tea" in await response.text()
    async with app.session.get(f"{app.url}/api/export", headers=auth()) as response:
        document = await response.json(content_type=None)
    assert [m["content"] for m in document["memories"]] == ["Alice likes <b>bold</b> tea"]


async def test_the_page_is_served_with_a_strict_policy_and_no_cookies(app):
    async with app.session.get(f"{app.url}/") as response:
        page = await response.text()
        policy = response.headers["Content-Security-Policy"]
        assert "Set-Cookie" not in response.headers
    assert "default-src 'self'" in policy
    assert "script-src 'self' https://telegram.org;" in policy
    assert "unsafe-inline" not in policy
    assert '<script type="module" src="app.js" async>' in page
    async with app.session.get(app.url, allow_redirects=False) as response:
        assert response.status == 308
    async with app.session.get(f"{app.url}/api/memories", headers=auth()) as response:
        assert response.headers["Content-Security-Policy"] == policy
        assert "Set-Cookie" not in response.headers


async def test_the_list_is_lean_and_gzipped_and_one_memory_has_it_all(app):
    long = "Alice keeps a long note: " + "tea, " * 90
    item = await app.store.add(OWNER, long.strip(), Category.CONTEXT)
    gone = await app.store.add(OWNER, "Alice's old bike", Category.CONTEXT)
    await app.store.delete(OWNER, gone.id)
    headers = {**auth(), "Accept-Encoding": "gzip"}
    async with app.session.get(f"{app.url}/api/memories", headers=headers) as response:
        assert response.headers["Content-Encoding"] == "gzip"
        body = await response.json()
    [listed] = body["memories"]
    assert set(listed) == {
        "id", "category", "subject", "content", "pinned", "in_block", "created_at", "updated_at"
    }  # fmt: skip
    assert len(listed["content"]) == 200 and listed["content"].endswith("…")
    assert listed["in_block"] is True and listed["updated_at"].endswith("+00:00")
    assert [m["id"] for m in body["deleted"]] == [gone.id]
    status, opened = await app.call("GET", f"memories/{item.id}")
    assert status == 200
    assert opened["memory"]["content"] == long.strip()
    assert [v["content"] for v in opened["versions"]] == [long.strip()]


async def test_one_memory_shows_the_newest_replies_that_drew_on_it_and_only_its_owners(app):
    tea = await app.store.add(OWNER, "Alice likes green tea", Category.PREFERENCE)
    lisbon = await app.store.add(OWNER, "Alice lives in Lisbon", Category.CONTEXT)
    bike = await app.store.add(OWNER, "Alice rides a bike", Category.CONTEXT)
    await cited_reply(app.store, OWNER, "You like green tea.", tea.id)
    await cited_reply(app.store, OWNER, "You live in\nLisbon.", lisbon.id)
    for n in range(11):
        await cited_reply(app.store, OWNER, f"Reply {n}: " + "tea " * 60, tea.id, bike.id)
    # A turn of another owner's naming Alice's memory, written in directly (recording a
    # reply's sources drops ids that are not its owner's): it must still never show.
    theirs = await cited_reply(app.store, OTHER, "Bob's secret reply")
    async with app.store.sessionmaker.begin() as session:
        await session.execute(
            update(Turn).where(Turn.id == theirs).values(cited_memory_ids=[tea.id])
        )
    status, opened = await app.call("GET", f"memories/{tea.id}")
    assert status == 200
    replies = opened["replies"]
    assert [r["excerpt"].split(":")[0] for r in replies] == [f"Reply {n}" for n in range(10, 0, -1)]
    assert all(len(r["excerpt"]) == 160 and r["excerpt"].endswith("…") for r in replies)
    assert [r["at"] for r in replies] == sorted((r["at"] for r in replies), reverse=True)
    assert "Bob" not in str(opened)
    status, opened = await app.call("GET", f"memories/{lisbon.id}")
    assert [r["excerpt"] for r in opened["replies"]] == ["You live in Lisbon."]
    await app.store.delete(OWNER, bike.id)  # a deleted memory still shows what drew on it
    status, opened = await app.call("GET", f"memories/{bike.id}")
    assert len(opened["replies"]) == 10
    fresh = await app.store.add(OWNER, "Alice has a cat", Category.CONTEXT)
    assert (await app.call("GET", f"memories/{fresh.id}"))[1]["replies"] == []
    # Bob's own memory: his reply's sources are his; none of Alice's replies show there.
    his = await app.store.add(OTHER, "Bob likes coffee", Category.PREFERENCE)
    await cited_reply(app.store, OTHER, "You like coffee.", his.id)
    status, opened = await app.call("GET", f"memories/{his.id}", user=OTHER)
    assert [r["excerpt"] for r in opened["replies"]] == ["You like coffee."]
    assert (await app.call("GET", f"memories/{his.id}"))[0] == 404


async def _listed(app, user=OWNER):
    """Return the list's (contents, pinned ids, deleted ids, switch) as the API answers it."""
    status, body = await app.call("GET", "memories", user=user)
    assert status == 200
    pinned = {m["id"] for m in body["memories"] if m["pinned"]}
    return (
        [m["content"] for m in body["memories"]],
        pinned,
        [m["id"] for m in body["deleted"]],
        body["enabled"],
    )


async def test_the_kept_list_follows_every_change_made_outside_the_app(app):
    from memory.switch import MemorySwitch

    tea = await app.store.add(OWNER, "Alice likes green tea", Category.PREFERENCE)
    assert await _listed(app) == (["Alice likes green tea"], set(), [], True)
    assert await _listed(app, OTHER) == ([], set(), [], True)  # kept per owner
    # Each change made as the chat makes it (straight in the stores, not through the app).
    await app.store.update(OWNER, tea.id, "Alice likes black tea")
    assert (await _listed(app))[0] == ["Alice likes black tea"]
    await app.store.pin(OWNER, tea.id, True)
    assert (await _listed(app))[1] == {tea.id}
    bike = await app.store.add(OWNER, "Alice rides a bike", Category.CONTEXT)
    await _listed(app)
    await app.store.delete(OWNER, bike.id)
    assert (await _listed(app))[2] == [bike.id]
    await app.store.restore(OWNER, bike.id)
    assert (await _listed(app))[2] == []
    batch = await applied_import(app.batches, OWNER, "Alice speaks Portuguese")
    assert "Alice speaks Portuguese" in (await _listed(app))[0]
    await app.batches.revert(OWNER, batch)
    assert "Alice speaks Portuguese" not in (await _listed(app))[0]
    await MemorySwitch(app.store.sessionmaker).turn(OWNER, False)
    assert (await _listed(app))[3] is False
    assert (await _listed(app, OTHER)) == ([], set(), [], True)


async def test_an_unchanged_list_is_not_sent_again_to_a_page_that_holds_it(app):
    await app.store.add(OWNER, "Alice likes green tea", Category.PREFERENCE)
    async with app.session.get(f"{app.url}/api/memories", headers=auth()) as response:
        etag = response.headers["ETag"]
        first = await response.json()
    again = {**auth(), "If-None-Match": etag}
    async with app.session.get(f"{app.url}/api/memories", headers=again) as response:
        assert response.status == 304 and await response.read() == b""
    # Another user sending the same tag gets their own list, not a 304 for Alice's.
    other = {**auth(OTHER), "If-None-Match": etag}
    async with app.session.get(f"{app.url}/api/memories", headers=other) as response:
        assert response.status == 200 and (await response.json())["memories"] == []
    await app.store.add(OWNER, "Alice rides a bike", Category.CONTEXT)
    async with app.session.get(f"{app.url}/api/memories", headers=again) as response:
        assert response.status == 200 and response.headers["ETag"] != etag
        assert len((await response.json())["memories"]) == len(first["memories"]) + 1


async def test_only_the_newest_turns_are_looked_through_for_a_memorys_replies(app):
    from bot.conversations.sources import ReplySources

    tea = await app.store.add(OWNER, "Alice likes green tea", Category.PREFERENCE)
    await cited_reply(app.store, OWNER, "The oldest reply.", tea.id)
    await cited_reply(app.store, OWNER, "A newer reply.", tea.id)
    await cited_reply(app.store, OTHER, "Bob's newest turns do not count against Alice's.")
    # Each exchange is two turns: the newest two of Alice's hold the newer reply only.
    bounded = ReplySources(app.store.sessionmaker, scan=2)
    assert [r.excerpt for r in await bounded.citing(OWNER, tea.id, 10)] == ["A newer reply."]
    wide = ReplySources(app.store.sessionmaker, scan=3)
    assert len(await wide.citing(OWNER, tea.id, 10)) == 2
    assert await wide.citing(OWNER, "not-an-id", 10) == []
