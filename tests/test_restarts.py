"""Deploys and restarts: one answer per message when processes overlap or follow at once.

Real `python -m bot` processes on both engines, polling on SQLite and webhooks on Postgres.
Leases last 2 s here (TURN_LEASE_SECONDS), so an overlap of a few lease times exercises what a
30-second deploy overlap does with the default 30 s: the old process renews the turn it works
on, and the new one waits for it instead of taking it for a crash's left-over.
"""

import asyncio
import json
import signal
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from sqlalchemy import text as sql

from memory.db import create_engine
from tests.conversations.test_leases import restore_copy
from tests.fakes.anthropic_server import text
from tests.harness import OWNER
from tests.process import BotProcess, bot_environment
from tests.test_webhook import free_port, message_update, post

LEASE_SECONDS = "2"
# Renewals the old process makes while both run: six a lease time, so over two lease times.
RENEWALS = 14


def echo(body: dict) -> object:
    """Answer with the question: the newest user text's last line."""
    last = body["messages"][-1]["content"]
    words = last if isinstance(last, str) else last[-1]["text"]
    return text(f"answer to: {words.splitlines()[-1]}")


# Long enough for a request on loopback to reach the process; most are answered far sooner.
POST_ARRIVES_SECONDS = 2


@dataclass
class Deploy:
    """Starts bot processes one way (polling or webhook) on one database."""

    fakes: tuple
    database_url: str
    tmp_path: Path
    mode: str
    endpoints: dict = field(default_factory=dict)
    posts: list = field(default_factory=list)

    async def start(self) -> BotProcess:
        """Start a process and wait until Telegram's updates reach it."""
        tg, model = self.fakes
        # A grace period longer than a busy machine takes to start the next process.
        extra = {"TURN_LEASE_SECONDS": LEASE_SECONDS, "SHUTDOWN_GRACE_SECONDS": "60"}
        if self.mode == "webhook":
            port = free_port()
            extra |= {"WEBHOOK_URL": f"http://127.0.0.1:{port}", "WEBHOOK_LISTEN": "127.0.0.1",
                      "PORT": str(port)}  # fmt: skip
        bot = BotProcess(bot_environment(tg, model, self.database_url, **extra), self.tmp_path)
        await bot.start()
        await bot.wait_for_output("started as")
        if self.mode == "webhook":
            self.endpoints[bot] = f"http://127.0.0.1:{port}/telegram"
            await tg.wait_for_call("setWebhook", count=len(self.endpoints), timeout=60)
        return bot

    async def send(self, bot: BotProcess, words: str) -> None:
        """Send a message from OWNER the way this process receives updates."""
        tg, _ = self.fakes
        if self.mode == "polling":
            tg.push_message(OWNER, words)
            return
        # Telegram's request is answered once its message is stored (bot/telegram/runtime/
        # acks.py), which for a chat already in a turn is after that turn: like Telegram, the
        # next update goes out once this one is on its way, and its answer is checked later.
        delivery = asyncio.create_task(post(tg, self.endpoints[bot], message_update(OWNER, words)))
        self.posts.append(delivery)
        await asyncio.wait({delivery}, timeout=POST_ARRIVES_SECONDS)

    async def delivered(self) -> None:
        """Check every webhook request was answered 200 (each message stored or handled)."""
        assert [await asyncio.wait_for(delivery, 60) for delivery in self.posts] == [200] * len(
            self.posts
        )


# How a process receives updates does not change how leases hand a turn over, which depends
# on the engine: each mode runs once, polling on SQLite (a laptop's) and webhooks on Postgres
# (a host's), rather than every mode on every engine (two process starts fewer each).
MODES = {"sqlite": "polling", "postgres": "webhook"}


@pytest.fixture
def deploy(fakes, database_url, tmp_path) -> Deploy:
    engine = "sqlite" if database_url.startswith("sqlite") else "postgres"
    return Deploy(fakes, database_url, tmp_path, MODES[engine])


async def history(database_url: str) -> list[tuple[str, str]]:
    """Return every stored turn's role and last line of text, in the order stored."""
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            rows = await connection.execute(
                sql("SELECT role, content FROM conversation_turns ORDER BY id")
            )
            turns = [(role, json.loads(c) if isinstance(c, str) else c) for role, c in rows]
            return [(role, content[-1]["text"].splitlines()[-1]) for role, content in turns]
    finally:
        await engine.dispose()


def answered(*questions: str) -> list[tuple[str, str]]:
    """Return the well-ordered history of these questions, each answered once."""
    return [turn for q in questions for turn in (("user", q), ("assistant", f"answer to: {q}"))]


async def test_an_overlap_then_a_sigterm_and_an_immediate_start_answer_each_message_once(
    deploy,
):
    tg, model = deploy.fakes
    model.default = echo
    model.hold()
    first = await deploy.start()
    await deploy.send(first, "one")
    await model.wait_for_requests(1, timeout=60)

    # A deploy's overlap: both run for several lease times while the first one's turn is in
    # progress; the second neither takes that turn nor answers its next message before it ends.
    second = await deploy.start()
    await first.wait_for_output("renewed 1 lease(s)", count=RENEWALS, timeout=60)
    assert len(model.requests) == 1, second.output
    await deploy.send(second, "two")
    model.release()
    await tg.wait_for_messages(OWNER, count=2, timeout=60)
    assert await first.stop() == 0, first.output  # the overlap ends

    # The host stops the second mid-turn and starts a third at once.
    model.hold()
    await deploy.send(second, "three")
    await model.wait_for_requests(3, timeout=60)
    second.process.send_signal(signal.SIGTERM)
    third = await deploy.start()
    await deploy.send(third, "four")
    await third.wait_for_output("another process is answering it", timeout=30)
    model.release()
    await tg.wait_for_messages(OWNER, count=4, timeout=60)
    await deploy.delivered()
    assert await second.exited() == 0, second.output
    assert await third.stop() == 0, third.output

    questions = ("one", "two", "three", "four")
    assert tg.messages_to(OWNER) == [f"answer to: {q}" for q in questions]
    assert len(model.requests) == 4
    assert await history(deploy.database_url) == answered(*questions)


async def test_a_restore_from_a_backup_taken_mid_turn_does_not_send_the_answer_again(
    fakes, database_url, tmp_path
):
    tg, model = fakes
    model.default = echo
    model.hold()
    env = bot_environment(tg, model, database_url, TURN_LEASE_SECONDS=LEASE_SECONDS)
    bot = await BotProcess(env, tmp_path).start()
    tg.push_message(OWNER, "one")
    await model.wait_for_requests(1, timeout=60)

    async def the_turn_ends_and_the_bot_stops() -> None:
        model.release()
        await tg.wait_for_messages(OWNER, count=1, timeout=60)
        assert await bot.stop() == 0, bot.output

    # Backed up mid-turn (the documented commands); the answer is sent after the backup.
    await restore_copy(database_url, tmp_path, the_turn_ends_and_the_bot_stops)
    restored = await BotProcess(env, tmp_path).start()
    await restored.wait_for_output("not answering a turn from before the database was restored")
    assert await restored.stop() == 0, restored.output
    assert tg.messages_to(OWNER) == ["answer to: one"]
    assert len(model.requests) == 1


async def test_a_restart_after_a_kill_answers_the_cut_off_turn_within_seconds_not_a_lease(
    fakes, database_url, tmp_path
):
    tg, model = fakes
    model.default = echo
    model.hold()
    # A lease far longer than the test waits: the cut-off turn must not wait it out.
    env = bot_environment(tg, model, database_url, TURN_LEASE_SECONDS="300")
    killed = await BotProcess(env, tmp_path).start()
    tg.push_message(OWNER, "one")
    await model.wait_for_requests(1, timeout=60)
    killed.process.kill()
    assert await killed.exited() == -signal.SIGKILL
    model.release()

    clock = asyncio.get_running_loop()
    again = await BotProcess(env, tmp_path).start()
    # From when it is up: starting Python on a busy machine takes seconds of its own.
    await again.wait_for_output("started as")
    up = clock.time()
    tg.push_message(OWNER, "/memory")
    await tg.wait_for_messages(OWNER, count=1, timeout=60)
    command_answered = clock.time()
    await tg.wait_for_messages(OWNER, count=2, timeout=60)
    answered = clock.time()
    assert await again.stop() == 0, again.output

    assert "answer to: one" in tg.messages_to(OWNER)
    assert "freed the turns of 1 process(es) known gone" in again.output
    assert answered - up < 10, again.output
    assert command_answered - up < 5, again.output


def user_lines(request: dict) -> list[str]:
    """Return the last line of each user text in a Messages request, in the order sent."""
    return [
        block["text"].splitlines()[-1]
        for message in request["messages"]
        if message["role"] == "user"
        for block in (
            message["content"]
            if isinstance(message["content"], list)
            else [{"type": "text", "text": message["content"]}]
        )
        if block["type"] == "text"
    ]


async def test_an_overlap_that_stores_a_later_message_first_still_reads_in_the_users_order(
    fakes, database_url, tmp_path
):
    tg, model = fakes
    model.default = echo
    model.hold()
    deploy = Deploy(fakes, database_url, tmp_path, "webhook")
    old, new = await deploy.start(), await deploy.start()
    await deploy.send(old, "five")
    await model.wait_for_requests(1, timeout=60)
    # Telegram hands six and seven to the new process, which waits for the old one's turn,
    # and eight to the old one, which answers it right after five: eight is stored first.
    await deploy.send(new, "six")
    await deploy.send(new, "seven")
    await new.wait_for_output("another process is answering it")
    await deploy.send(old, "eight")
    model.release()
    await tg.wait_for_messages(OWNER, count=4, timeout=60)
    await deploy.send(new, "nine")
    await tg.wait_for_messages(OWNER, count=5, timeout=60)
    await deploy.delivered()
    assert await old.stop() == 0, old.output
    assert await new.stop() == 0, new.output

    stored = [words for role, words in await history(database_url) if role == "user"]
    assert stored == ["five", "eight", "six", "seven", "nine"]  # as the processes stored them
    assert user_lines(model.requests[-1]) == ["five", "six", "seven", "eight", "nine"]
