"""Show a reply in a private chat while the model writes it, as Telegram message drafts.

A draft is a preview: the reply itself is always sent as messages afterwards. A draft holds one
message, so when the reply outgrows it, the finished part is sent as a message at once and the
draft goes on with the rest; the final delivery then sends only what is left. A reply with
structure (a table, headings) is drafted as a Rich Message instead, which holds far more.

Every draft offers Telegram's Stop button: a press stops the drafts and sets `stopped`, which
the agent watches to close the model's stream at once (bot/agent/stream.py).
"""

import asyncio
import contextlib
import logging
import random
import time
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta

from telegram import Bot
from telegram.error import (
    BadRequest,
    EndPointNotFound,
    Forbidden,
    InvalidToken,
    RetryAfter,
    TelegramError,
)
from telegram.warnings import PTBDeprecationWarning

from bot.conversations.leases import LeaseLost
from bot.conversations.snapshot import ChatThread
from bot.telegram import native, texts
from bot.telegram.chat.group_stop import GroupStops
from bot.telegram.format import MAX_MESSAGE_LENGTH, html_to_plain, render_reply, utf16_len
from bot.telegram.format.cut import Cut, cut_finished
from bot.telegram.format.rich import rich_reply

logger = logging.getLogger(__name__)

# Telegram asks bots not to send a chat more than about one message a second; drafts keep to it.
DRAFT_INTERVAL_SECONDS = 1.0
# The first draft waits this long after the reply's first text: a reply done by then (one that
# came in a burst, or a few words) needs no draft, which would only flicker and delay it.
FIRST_DRAFT_SECONDS = 0.2
# Telegram shows a draft for 30 seconds; an unchanged one is sent again before it goes.
REFRESH_SECONDS = 20.0

SendMarkdown = Callable[[str], Awaitable[object]]
# Raises LeaseLost once another process took the chat's turn over (leases.check_turn).
TurnCheck = Callable[[int], Awaitable[None]]


async def _any_turn(chat_id: int) -> None:
    """Check nothing: no other process answers turns."""


class Drafts:
    """Which chats see drafts: private ones, with STREAM_REPLIES on, unless Telegram refused.

    rich: whether replies with structure go as Rich Messages (RICH_MESSAGES), drafted or not.
    check_turn: asked before a finished part is sent, while the model still writes the rest.
    """

    def __init__(self, enabled: bool, rich: bool = False, check_turn: TurnCheck = _any_turn):
        self.enabled = enabled
        self.rich = rich
        self.check_turn = check_turn
        self._unsupported = False  # the Bot API server does not know sendMessageDraft
        self._refused: set[int] = set()  # chats where Telegram refused a draft
        self._live: dict[int, set[DraftStream]] = {}  # the replies being drafted, by chat
        self.groups = GroupStops(enabled)  # groups have no drafts: a Stop button of our own

    def stop(self, chat_id: int, draft_id: int) -> bool:
        """Stop the reply the user stopped by its draft; False if it is no longer drafted."""
        for stream in self._live.get(chat_id, ()):
            if stream.stop(draft_id):
                return True
        return False

    def _enter(self, chat_id: int, stream: "DraftStream") -> None:
        """Note a reply being drafted in the chat, so its Stop reaches it."""
        self._live.setdefault(chat_id, set()).add(stream)

    def _leave(self, chat_id: int, stream: "DraftStream") -> None:
        """Forget a reply no longer drafted: a Stop after it changes nothing."""
        streams = self._live.get(chat_id, set())
        streams.discard(stream)
        if not streams:
            self._live.pop(chat_id, None)

    def open(self, bot: Bot, place: ChatThread, send: SendMarkdown) -> "DraftStream | None":
        """Return the drafts of one reply in this chat, or None where it gets none."""
        # Drafts exist in private chats only, and only those have positive ids (the user's).
        private = place.chat_id > 0
        if not self.enabled or self._unsupported or not private or place.chat_id in self._refused:
            return None
        return DraftStream(bot, place, send, self)

    def refuse(self, place: ChatThread, error: TelegramError) -> None:
        """Give up drafts: everywhere if the server lacks the method, else in the chat; log once."""
        if isinstance(error, InvalidToken | EndPointNotFound):
            # An older Bot API server answers 404 for a method it does not know.
            if not self._unsupported:
                logger.warning(
                    "Telegram does not know sendMessageDraft (%s): replies are sent without "
                    "drafts until the bot restarts",
                    error,
                )
            self._unsupported = True
        elif place.chat_id not in self._refused:
            self._refused.add(place.chat_id)
            logger.warning(
                "Telegram refused a draft in chat %s (%s): replies there are sent without "
                "drafts until the bot restarts",
                place.chat_id,
                error,
            )


@dataclass(frozen=True)
class Sent:
    """How much of a reply went out as messages while it streamed."""

    source: str = ""  # the reply's Markdown up to where the rest starts
    reopen: str = ""  # the code fence line the rest starts inside of, or ""

    def rest(self, reply: str) -> str:
        """Return the Markdown of the reply that is not sent yet."""
        return self.reopen + reply[len(self.source) :]

    def after(self, cut: Cut, reply: str) -> "Sent":
        """Return what is sent once the head of this cut of the rest is sent too."""
        return Sent(reply[: len(self.source) + cut.resume - len(self.reopen)], cut.reopen)


def rich_draft(markdown: str, status: str | None) -> str:
    """Return a rich draft's Markdown: the reply so far and what the model is doing."""
    said = f"_{html_to_plain(status)}_" if status else ""
    return "\n\n".join(part for part in (markdown, said) if part)


def draft_html(markdown: str, status: str | None) -> str | None:
    """Render a draft: the reply so far and what the model is doing; None if it says nothing."""
    pieces = render_reply(markdown)
    html = pieces[0] if pieces else ""
    if status:
        with_status = f"{html}\n\n{status}" if html else status
        if utf16_len(with_status) <= MAX_MESSAGE_LENGTH:
            html = with_status
    return html or None


def retry_seconds(error: RetryAfter) -> float:
    """Return how long Telegram asked to wait, in seconds."""
    with warnings.catch_warnings():
        # The int form is deprecated; whichever form it is, both are read here.
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = error.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


class DraftStream:
    """The drafts of one reply: the agent reports progress, a task shows it at a steady pace."""

    def __init__(self, bot: Bot, place: ChatThread, send: SendMarkdown, drafts: Drafts):
        self._bot, self._place, self._send, self._drafts = bot, place, send, drafts
        self.shown = asyncio.Event()  # set once Telegram accepted a draft
        self.stopped = asyncio.Event()  # set when the user pressed Stop on a draft
        self.sent = Sent()
        self._reply: Callable[[], str] = str  # made when a draft reads it (bot/agent/stream.py)
        self._status: str | None = None
        # Drafts with one id are animated from one to the next.
        self._draft_id = random.randint(1, 2**31 - 1)
        self._draft_ids = {self._draft_id}  # every id this reply's drafts had
        self._rich = drafts.rich  # False once Telegram refused a rich draft
        self._last_body, self._last_at = "", 0.0
        self._pause = DRAFT_INTERVAL_SECONDS
        self._changed = asyncio.Event()
        self._stopped = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def text(self, reply: Callable[[], str]) -> None:
        """Take the reply so far, made when a draft shows it."""
        self._reply, self._status = reply, None
        self._changed.set()

    def tool(self, name: str, subject: str | None = None) -> None:
        """Take the tool the model is calling (and its query or page), to say what it does."""
        self._status = texts.tool_status(name, subject)
        self._changed.set()

    def stop(self, draft_id: int) -> bool:
        """Take a press of Stop on a draft: if it is one of this reply's, stop drafting."""
        if draft_id not in self._draft_ids:
            return False
        logger.info("chat %s: the user stopped the reply", self._place.chat_id)
        self.stopped.set()
        self._stopped.set()
        self._changed.set()
        return True

    async def __aenter__(self) -> "DraftStream":
        self._drafts._enter(self._place.chat_id, self)
        self._task = asyncio.create_task(self._run())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Stop, after any draft or message on its way, so that none comes after the reply."""
        self._drafts._leave(self._place.chat_id, self)
        self._stopped.set()
        self._changed.set()
        if self._task is None:
            return
        try:
            await self._task
        except Exception:  # a broken preview must not cost the reply; the bug is logged in full
            logger.exception("drafts failed in chat %s; sending the reply", self._place.chat_id)

    def unsent(self, reply: str) -> str:
        """Return the Markdown of the final reply that was not sent while it streamed."""
        if reply.startswith(self.sent.source):
            return self.sent.rest(reply)
        # Never seen: the streamed text is the start of the final one. Repeat rather than lose.
        logger.warning("the reply in chat %s differs from its stream", self._place.chat_id)
        return reply

    async def _run(self) -> None:
        """Show drafts until stopped: the first shortly after the reply starts, then throttled."""
        await self._changed.wait()
        if await self._stopping(FIRST_DRAFT_SECONDS):
            return
        while await self._show():
            if await self._stopping(self._pause):
                return
            self._pause = DRAFT_INTERVAL_SECONDS
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(REFRESH_SECONDS - DRAFT_INTERVAL_SECONDS):
                    await self._changed.wait()
            if self._stopped.is_set():
                return

    async def _stopping(self, seconds: float) -> bool:
        """Wait up to seconds; tell whether drafting stopped meanwhile."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._stopped.wait()
        return self._stopped.is_set()

    async def _show(self) -> bool:
        """Send the finished part as messages, the rest as a draft; False to stop drafting."""
        self._changed.clear()
        body: str | None
        if rich := self._rich and rich_reply(rest := self.sent.rest(self._reply())):
            # A rich draft holds the whole rest: nothing is cut off as a message.
            body = rich_draft(rest, self._status)
        else:
            try:
                rest = await self._send_finished()
            except LeaseLost:
                return False  # another process answers the turn; the delivery says so
            except TelegramError as error:
                # The final delivery sends everything not sent here, and reports what fails.
                logger.info(
                    "chat %s: could not send a finished part: %s", self._place.chat_id, error
                )
                return False
            body = draft_html(rest, self._status)
        # The loop wakes REFRESH_SECONDS after a draft at the latest; by then it is stale.
        fresh = time.monotonic() - self._last_at < REFRESH_SECONDS - DRAFT_INTERVAL_SECONDS
        if body is None or (body == self._last_body and fresh):
            return True
        return await self._send_draft(body, rich)

    async def _send_finished(self) -> str:
        """Send as messages what no longer fits in a draft; return the Markdown left over."""
        reply = self._reply()
        rest = self.sent.rest(reply)
        while (cut := cut_finished(rest, floor=len(self.sent.reopen))) is not None:
            # A process taken for dead sends nothing of a turn another one answers.
            await self._drafts.check_turn(self._place.chat_id)
            await self._send(cut.head)
            self.sent = self.sent.after(cut, reply)
            self._draft_id = self._draft_id % (2**31 - 1) + 1  # a new draft below the message
            self._draft_ids.add(self._draft_id)
            rest = self.sent.rest(reply)
        return rest

    async def _send_draft(self, body: str, rich: bool) -> bool:
        """Send one draft (Markdown if rich, else HTML), with Stop; on a refusal, return False."""
        place = self._place
        text = {"markdown": body} if rich else {"html": body}
        try:
            await native.send_draft(
                self._bot,
                place.chat_id,
                self._draft_id,
                thread_id=place.thread_id,
                can_stop=True,
                **text,
            )
        except RetryAfter as error:
            self._pause = max(DRAFT_INTERVAL_SECONDS, retry_seconds(error))
            return True
        except (InvalidToken, EndPointNotFound, BadRequest) as error:
            if rich:
                # An older server, or a reply it will not take as rich: drafted as HTML on.
                logger.warning("Telegram refused a rich draft (%s); drafting HTML", error)
                self._rich = False
                return True
            if "can't parse entities" in str(error).lower():
                logger.warning("Telegram refused a draft's HTML (%s); skipping it", error)
                return True
            self._drafts.refuse(place, error)
            return False
        except Forbidden:
            return False  # the user blocked the bot; the final delivery reports it
        except TelegramError as error:
            logger.debug("a draft in chat %s failed: %s", place.chat_id, error)
            return True  # a network hiccup: the next draft may go through
        self._last_body, self._last_at = body, time.monotonic()
        self.shown.set()
        return True
