"""kill -9 between a reminder's claim and its send: the next process sends it, once, late.

Real `python -m bot` processes on both engines. The fake Bot API holds the reminder's
sendMessage until the first process is killed, then drops it (as a gateway that lost it
would), so the kill comes after the claim and before any delivery. Leases last 2 s here.
"""

import signal
from datetime import timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import update

from bot.reminders.models import Reminder
from bot.reminders.records import Place
from bot.reminders.store import ReminderStore
from bot.reminders.timing import resolve
from memory.db import create_engine, create_sessionmaker
from memory.models import utcnow
from tests.harness import OWNER
from tests.process import BotProcess, bot_environment
from tests.test_restarts import LEASE_SECONDS


async def due_now(database_url: str, text: str) -> None:
    """Store a one-off reminder of OWNER's that is due now."""
    engine = create_engine(database_url)
    try:
        sessionmaker = create_sessionmaker(engine)
        store = ReminderStore(sessionmaker)
        schedule = resolve(
            at_local=None, in_duration="PT1H", zone=ZoneInfo("Europe/Berlin"), now=utcnow()
        )
        reminder = await store.create(Place(OWNER, OWNER), text, schedule, check_in=False, limit=9)
        async with sessionmaker.begin() as session:
            await session.execute(
                update(Reminder)
                .where(Reminder.id == reminder.id)
                .values(next_fire_at=utcnow() - timedelta(seconds=1))
            )
    finally:
        await engine.dispose()


async def test_a_kill_between_claim_and_send_is_sent_by_the_next_process_once_marked_late(
    fakes, database_url, tmp_path
):
    tg, model = fakes
    await due_now(database_url, "water the plants")
    tg.hold_messages("water the plants")
    env = bot_environment(tg, model, database_url, TURN_LEASE_SECONDS=LEASE_SECONDS)
    first = await BotProcess(env, tmp_path).start()
    await tg.wait_for_call("sendMessage", timeout=60)  # claimed, and on its way
    assert await first.stop(signal.SIGKILL) == -signal.SIGKILL
    tg.drop_held()
    assert tg.messages_to(OWNER) == []

    second = await BotProcess(env, tmp_path).start()
    try:
        [message] = await tg.wait_for_messages(OWNER, timeout=60)
    finally:
        assert await second.stop() == 0, second.output
    assert message["result"]["text"].startswith("⏰ water the plants\n(was due ")
    assert len(tg.messages_to(OWNER)) == 1
    tries = [p for name, p in tg.calls if name == "sendMessage" and "plants" in p.get("text", "")]
    assert len(tries) == 2  # the one the kill cut off, and the one sent again
