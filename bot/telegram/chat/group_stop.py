"""Stop in groups, which have no drafts: a Stop button on a short-lived "working" message.

A group answer still being written WORKING_SECONDS after it began (once the model has written
or called a tool: its stream is open then) gets a message of its own with a Stop button,
which only the member who asked may press; the message is deleted once the answer ends, so a
quick answer never shows one. A press stops the answer as Telegram's Stop
does on a private chat's draft (bot/telegram/chat/drafts.py): `stopped` is set, the agent
closes the model's stream at once and starts no tool call (bot/agent/stream.py), and what was
written is sent marked "(stopped)". A press by anyone else, or after the answer, changes nothing.
"""

import asyncio
import contextlib
import logging
import random
import re
from collections.abc import Callable

from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import TelegramError

from bot.conversations.snapshot import ChatThread

logger = logging.getLogger(__name__)

# An answer done sooner needs no Stop: the message would only flicker in the group.
WORKING_SECONDS = 2.0
PREFIX = "x:"  # of a Stop button's callback data
_DATA = re.compile(r"x:([1-9][0-9]{0,9})")
WORKING = "Working on it…"
STOP_LABEL = "Stop"
STOPPING = "Stopping."
NOT_YOURS = "Only the member who asked can stop this answer."
FINISHED = "This answer is already finished."


def parse(data: str | None) -> int | None:
    """Return the answer a Stop button's callback data names, or None if it names none."""
    match = _DATA.fullmatch(data or "")
    return int(match[1]) if match else None


class GroupStops:
    """The group answers that can be stopped (STREAM_REPLIES: the model must be streamed)."""

    def __init__(self, enabled: bool, delay: float = WORKING_SECONDS):
        self.enabled = enabled
        self.delay = delay  # settable: how long an answer runs before its Stop shows
        self._live: dict[int, GroupStop] = {}

    def open(self, bot: Bot, place: ChatThread, asker: int | None) -> "GroupStop | None":
        """Return the Stop of one answer in a group to the member who asked, or None."""
        if not self.enabled or asker is None or place.chat_id > 0:
            return None
        return GroupStop(bot, place, asker, self)

    def press(self, token: int, user_id: int) -> str:
        """Take a press of Stop; return what to answer the member who pressed it."""
        stop = self._live.get(token)
        if stop is None:
            return FINISHED
        if user_id != stop.asker:
            return NOT_YOURS
        logger.info("chat %s: the member who asked stopped the answer", stop.place.chat_id)
        stop.stopped.set()
        return STOPPING

    def _enter(self, stop: "GroupStop") -> None:
        """Note an answer being written, so its Stop reaches it."""
        self._live[stop.token] = stop

    def _leave(self, stop: "GroupStop") -> None:
        """Forget an answer that ended: a press after it changes nothing."""
        self._live.pop(stop.token, None)


class GroupStop:
    """One group answer's Stop: the agent's progress, and the message that offers the button."""

    def __init__(self, bot: Bot, place: ChatThread, asker: int, stops: GroupStops):
        self._bot, self.place, self.asker, self._stops = bot, place, asker, stops
        self.stopped = asyncio.Event()  # set when the asker pressed Stop
        self.token = random.randint(1, 2**31 - 1)
        self._ended = asyncio.Event()
        # Set once the model wrote or called a tool, or the answer ended.
        self._begun_or_ended = asyncio.Event()
        self._message_id: int | None = None
        self._task: asyncio.Task[None] | None = None

    def text(self, reply: Callable[[], str]) -> None:
        """Take the reply so far: a group sees it only once it is sent."""
        self._begun_or_ended.set()

    def tool(self, name: str, subject: str | None = None) -> None:
        """Take the tool the model is calling: a group sees "typing…" meanwhile."""
        self._begun_or_ended.set()

    async def __aenter__(self) -> "GroupStop":
        self._stops._enter(self)
        self._task = asyncio.create_task(self._offer())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Forget the answer, then delete its working message, once any on its way is sent."""
        self._stops._leave(self)
        self._ended.set()
        self._begun_or_ended.set()
        if self._task is not None:
            try:
                await self._task
            except TelegramError as error:  # the answer matters more than its Stop
                logger.info("chat %s: no Stop button: %s", self.place.chat_id, error)
        if self._message_id is not None:
            with contextlib.suppress(TelegramError):
                await self._bot.delete_message(self.place.chat_id, self._message_id)

    async def _offer(self) -> None:
        """Send the working message with its Stop button, unless the answer ends first."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self._stops.delay):
                await self._ended.wait()
        if self._ended.is_set() or self.stopped.is_set():
            return
        button = InlineKeyboardButton(STOP_LABEL, callback_data=f"{PREFIX}{self.token}")
        sent = await self._bot.send_message(
            self.place.chat_id,
            WORKING,
            message_thread_id=self.place.thread_id,
            reply_markup=InlineKeyboardMarkup([[button]]),
            disable_notification=True,
        )
        self._message_id = sent.message_id
