"""Reminders in Telegram: sending what fires, /reminders, /timezone and the reminder buttons."""

import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta
from functools import partial
from zoneinfo import ZoneInfo

from telegram import Update
from telegram.error import BadRequest, Forbidden, NetworkError, TelegramError
from telegram.ext import CommandHandler

from bot.conversations.blocks import text_block
from bot.conversations.snapshot import ChatThread
from bot.reminders.due import Delivery
from bot.reminders.models import FireOutcome
from bot.reminders.records import Claim, ReminderNotFound, ReminderRecord
from bot.reminders.store import ReminderStore
from bot.reminders.timing import TimingError
from bot.reminders.zones import find_zone
from bot.telegram.chat.delivery import deliver_answer
from bot.telegram.chat.filters import NEW_MESSAGES
from bot.telegram.chat.reading import place_of, query_of
from bot.telegram.chat.sending import send_html
from bot.telegram.context import BotApplication, BotContext, Services, owner_id
from bot.telegram.miniapp.button import with_open_button
from bot.telegram.reminders import notices, views
from bot.telegram.reminders.views import Press
from bot.telegram.runtime.processing import lanes
from bot.telegram.ui import View, markup, send_view, show_in_place

logger = logging.getLogger(__name__)

# Telegram's answer when a chat is gone or the bot was removed: as good as blocked.
GONE_CHAT = ("chat not found", "bot was kicked", "not enough rights", "have no rights")


class TelegramOutlet:
    """Sends fired reminders; each is also stored as the bot's turn of the conversation."""

    def __init__(self, application: BotApplication):
        self._application = application

    @property
    def _services(self) -> Services:
        return self._application.bot_data.services

    async def fire(self, claim: Claim, late: bool) -> Delivery:
        """Send one fired reminder, or answer a check-in, in its chat and topic."""
        reminder = claim.reminder
        try:
            if reminder.check_in and await self._check_in_allowed(reminder):
                await self._check_in(reminder)
                return Delivery(FireOutcome.SENT)
            return await self._send(reminder, late)
        except Forbidden:
            return Delivery(FireOutcome.BLOCKED)
        except BadRequest as error:
            if any(words in str(error).lower() for words in GONE_CHAT):
                return Delivery(FireOutcome.BLOCKED)
            raise
        except NetworkError as error:
            # A timeout, a 5xx or a reset connection (BadRequest, a subclass, is caught above):
            # the same send may work later. After a timeout it may also have arrived.
            logger.info("reminder %s not sent for now: %s", reminder.id, error)
            return Delivery(FireOutcome.FAILED, passing=True)

    async def tell_missed(self, missed: Sequence[ReminderRecord]) -> None:
        """Tell one chat, once, about the one-offs it missed."""
        first = missed[0]
        await send_html(
            self._application.bot, first.chat_id, views.missed(missed), thread_id=first.thread_id
        )

    async def tell_unsent(self, reminder: ReminderRecord) -> None:
        """Tell a chat, once, that a reminder could not be sent however often it was tried."""
        await self._tell(reminder, notices.unsent(reminder))

    async def tell_broken(self, reminder: ReminderRecord) -> None:
        """Tell a chat, once, that a reminder could not be scheduled and was stopped."""
        await self._tell(reminder, notices.broken(reminder))

    async def _tell(self, reminder: ReminderRecord, text: str) -> None:
        """Send a notice about a reminder where it fires; a blocked chat is not told."""
        bot, chat = self._application.bot, reminder.chat_id
        try:
            await send_html(bot, chat, text, thread_id=reminder.thread_id)
        except (Forbidden, BadRequest) as error:
            logger.info("could not tell the chat of reminder %s: %s", reminder.id, error)

    async def _send(self, reminder: ReminderRecord, late: bool) -> Delivery:
        """Send a plain reminder with its buttons; never a model call."""
        view = views.fired(reminder, reminder.next_fire_at, late)
        sent = await send_html(
            self._application.bot,
            reminder.chat_id,
            view.text,
            thread_id=reminder.thread_id,
            reply_markup=markup(view.buttons),
        )

        async def remember() -> None:
            await self._in_lane(reminder, partial(self._remember, reminder, view.text))

        # Stored once the send is recorded: a crash meanwhile must not send it again.
        return Delivery(FireOutcome.SENT, sent[-1].message_id, then=remember)

    async def _remember(self, reminder: ReminderRecord, text: str) -> None:
        """Store the fired reminder as the bot's turn, so a reply to it has its context."""
        note = f"[Reminder {reminder.id}, which the user set, fired now; you sent it.]"
        place = ChatThread(reminder.chat_id, reminder.thread_id)
        await self._services.conversations.store_bot_message(
            place, reminder.owner_id, note, f"Reminder: {reminder.text}"
        )

    async def _check_in_allowed(self, reminder: ReminderRecord) -> bool:
        """Tell whether the owner has a check-in left today (in the reminder's zone)."""
        zone = ZoneInfo(reminder.zone)
        now = self._services.reminders.clock.now().astimezone(zone)
        midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
        store = self._services.reminders.store
        used = await store.check_ins_sent_since(reminder.owner_id, midnight)
        if used < self._services.settings.check_ins_per_day:
            return True
        logger.info("check-in %s sent as a plain reminder: the day's cap is used", reminder.id)
        return False

    async def _check_in(self, reminder: ReminderRecord) -> None:
        """Let the agent answer a check-in's prompt, with memory, as if the user had asked."""
        services, place = self._services, ChatThread(reminder.chat_id, reminder.thread_id)

        async def answer() -> None:
            note = f"[A check-in the user scheduled (reminder {reminder.id}) fires now.]"
            snapshot = await services.conversations.store_user_message(
                place,
                reminder.owner_id,
                [text_block(f"{note}\n{reminder.text}")],
            )
            call = partial(services.chat.answer, snapshot)
            await deliver_answer(
                self._application.bot, place, call, services.drafts, services.account_notices
            )

        await self._in_lane(reminder, answer)

    async def _in_lane(self, reminder: ReminderRecord, work: Callable[[], Awaitable[None]]) -> None:
        """Run work in the chat's lane, after any turn of the chat in progress, if still due."""
        # work is started only here, so no path leaves a coroutine created and never awaited.

        async def if_kept() -> None:
            try:
                await self._services.reminders.store.get(reminder.owner_id, reminder.id)
            except ReminderNotFound:
                # /delete_my_data ran in the lane before it: nothing may be stored again.
                logger.info("reminder %s was deleted meanwhile; not storing it", reminder.id)
                return
            await work()

        await lanes(self._application).run_exclusive(reminder.chat_id, if_kept())


def _store(context: BotContext) -> ReminderStore:
    """Return the reminder store."""
    return context.services.reminders.store


async def reminders_command(update: Update, context: BotContext) -> None:
    """Show the next reminders, each with a Cancel button."""
    await send_view(context.bot, place_of(update), await _page(update, context, 1))


async def _page(update: Update, context: BotContext, number: int) -> View:
    """Build one page of the owner's reminders, with the app's Open button."""
    store, owner = _store(context), owner_id(update)
    total = await store.count_active(owner)
    number = max(1, min(number, max(1, -(-total // views.PER_PAGE))))
    shown = await store.upcoming(owner, views.PER_PAGE, (number - 1) * views.PER_PAGE)
    missed = await store.missed(owner, 5) if number == 1 else []
    view = views.page(shown, total, number, context.services.reminders.clock.now(), missed)
    return with_open_button(view, update, context.services.settings, "reminders")


async def timezone_command(update: Update, context: BotContext) -> None:
    """Show the owner's time zone, or set it from a city or an IANA name."""
    said = " ".join(context.args or [])
    store, owner, place = _store(context), owner_id(update), place_of(update)
    now = context.services.reminders.clock.now()
    if not said:
        text = views.zone_shown(await store.zone_of(owner), now)
    elif (zone := find_zone(said)) is None:
        text = views.zone_unknown(said)
    else:
        await store.set_zone(owner, str(zone))
        text = views.zone_shown(str(zone), now)
    await send_html(context.bot, place.chat_id, text, thread_id=place.thread_id)


async def run_button(update: Update, context: BotContext, pressed: tuple[Press, int, int]) -> None:
    """Run a reminder button: done, snooze, skip, stop, cancel or a page of /reminders."""
    query = query_of(update)
    press, number, page_number = pressed
    owner = owner_id(update)
    try:
        if press is Press.PAGE:
            await show_in_place(update, context.bot, await _page(update, context, number))
            await query.answer()
            return
        said = await _act(context, owner, press, number)
    except ReminderNotFound:
        # Another owner's id, or one deleted since: the same answer, so nothing leaks.
        await query.answer(views.GONE, show_alert=True)
        return
    except TimingError:
        await query.answer(views.BAD_RULE, show_alert=True)
        return
    context.services.reminders.alarm.set()
    await query.answer(said)
    if press is Press.CANCEL:
        await show_in_place(update, context.bot, await _page(update, context, page_number))
    elif query.message is not None:
        await _edit_buttons_off(update, said)


async def _act(context: BotContext, owner: int, press: Press, reminder_id: int) -> str:
    """Change a reminder as the button says; return what to tell the user."""
    store, now = _store(context), context.services.reminders.clock.now()
    limit = context.services.settings.reminders_max_active
    reminder = await store.get(owner, reminder_id)
    if press is Press.DONE:
        return "Done."
    if press in (Press.TEN_MINUTES, Press.HOUR, Press.TOMORROW):
        at = await _snooze_time(store, reminder, press, now)
        moved = await store.snooze(owner, reminder_id, at, limit)
        return f"Again {views.when_text(moved, now)}."
    if press is Press.SKIP_NEXT and reminder.next_fire_at is not None:
        # Work out the next time and what to say before the write: either may refuse.
        following = reminder.schedule.next_after(reminder.next_fire_at)
        said = f"Skipped; next {views.occurrence_text(reminder.zone, following, now)}."
        await store.move_next(owner, reminder_id, following.at if following else None)
        return said
    await store.cancel(owner, reminder_id)
    return "Stopped." if press is Press.STOP else "Cancelled."


async def _snooze_time(
    store: ReminderStore, reminder: ReminderRecord, press: Press, now: datetime
) -> datetime:
    """Return when a snoozed reminder fires again: +10 min, +1 hour, or its time tomorrow."""
    if press is Press.TEN_MINUTES:
        return now + timedelta(minutes=10)
    if press is Press.HOUR:
        return now + timedelta(hours=1)
    zone = ZoneInfo(reminder.zone)
    fired = await store.last_fire_at(reminder.id) or now
    local = fired.astimezone(zone).replace(tzinfo=None) + timedelta(days=1)
    at = local.replace(tzinfo=zone).astimezone(now.tzinfo)
    return at if at > now else now + timedelta(days=1)


async def _edit_buttons_off(update: Update, said: str) -> None:
    """Take the buttons off a fired reminder once one was pressed."""
    query = update.callback_query
    try:
        if query is not None:
            await query.edit_message_reply_markup(reply_markup=None)
    except TelegramError as error:
        # An old message may no longer be editable; the change itself is done.
        logger.info("could not take a reminder's buttons off: %s (%s)", error, said)


def register(application: BotApplication) -> None:
    """Handle /reminders and /timezone (the buttons go through bot/telegram/buttons.py)."""
    application.add_handler(CommandHandler("reminders", reminders_command, NEW_MESSAGES))
    application.add_handler(CommandHandler("timezone", timezone_command, NEW_MESSAGES))
