"""The reminder tools the model may call: the model's words go in, the code resolves times."""

import asyncio
import logging
import zoneinfo
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any

from anthropic.types import ToolParam
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy.exc import SQLAlchemyError

from bot.reminders import tool_texts
from bot.reminders.due import Clock, SystemClock
from bot.reminders.models import MAX_TEXT
from bot.reminders.records import Place, ReminderLimit, ReminderNotFound
from bot.reminders.store import ReminderStore
from bot.reminders.timing import Schedule, TimingError, resolve
from bot.reminders.words import MAX_WORDS, resolve_words
from bot.reminders.zones import find_zone
from memory.text import clean_text
from memory.tools import ToolOutcome, json_schema
from memory.tools.base import describe_validation_error

logger = logging.getLogger(__name__)

_WHEN = (
    "Give exactly one of when, at_local or in_duration; never work out a date or time "
    "yourself: when is the user's own words for the day and time, in English ('next Friday at "
    "9', 'tomorrow evening', '3 December 17:30', 'at 5 pm'); at_local a wall time the user "
    "gave in full (2026-11-27T09:00); in_duration an ISO 8601 duration (PT20M) for 'in 20 "
    "minutes'. The code resolves them in the user's zone and returns the time it understood: "
    "tell the user that time."
)
_WORDS = (
    "The user's own words for the day and time, in English, as said: 'next Friday at 9', "
    "'tomorrow evening', 'Monday 8:30', '3 December 17:30'. The code resolves them."
)


def _from_words(
    when: str | None,
    at_local: str | None,
    in_duration: str | None,
    now: datetime,
    zone: tzinfo,
    keep: datetime | None = None,
) -> str | None:
    """Return at_local: the user's words resolved in their zone, or the one the model gave."""
    if when is None:
        return at_local
    if at_local is not None or in_duration is not None:
        raise TimingError("give exactly one of when, at_local or in_duration")
    local_now = now.astimezone(zone).replace(tzinfo=None)
    return resolve_words(when, local_now, keep).isoformat(timespec="minutes")


class _Args(BaseModel):
    """Strict arguments: unknown fields are refused."""

    model_config = ConfigDict(extra="forbid")


class CreateArgs(_Args):
    """Arguments of create_reminder."""

    text: str = Field(min_length=1, max_length=MAX_TEXT, description="What to remind of.")
    when: str | None = Field(None, max_length=MAX_WORDS, description=_WORDS)
    at_local: str | None = Field(None, description="Local wall time, e.g. 2026-11-27T09:00.")
    in_duration: str | None = Field(None, description="ISO 8601 duration from now, e.g. PT20M.")
    timezone: str | None = Field(
        None, description="IANA zone, only if the user named another place's time."
    )
    rrule: str | None = Field(
        None,
        description="RFC 5545 repeat rule, daily or coarser: FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR, "
        "FREQ=MONTHLY;BYDAY=-1FR (last Friday), FREQ=YEARLY. The time of day comes from the start.",
    )
    until: str | None = Field(None, description="Last local date of a repeat, e.g. 2026-12-31.")
    count: int | None = Field(None, description="How many times a repeat fires.")
    check_in: bool = Field(
        False,
        description="True when the text is a request you answer at fire time with what you "
        "know (a check-in), not a plain reminder.",
    )


class UpdateArgs(_Args):
    """Arguments of update_reminder."""

    reminder_id: int = Field(description="The id list_reminders or create_reminder gave.")
    text: str | None = Field(None, min_length=1, max_length=MAX_TEXT)
    when: str | None = Field(
        None,
        max_length=MAX_WORDS,
        description=f"{_WORDS} What they leave out stays: 'at 5 pm' keeps the day.",
    )
    at_local: str | None = None
    in_duration: str | None = None
    timezone: str | None = None
    rrule: str | None = Field(None, description="A new repeat rule; 'none' makes it a one-off.")
    until: str | None = None
    count: int | None = None


class IdArgs(_Args):
    """Arguments naming one reminder."""

    reminder_id: int


class ZoneArgs(_Args):
    """Arguments of set_timezone."""

    timezone: str = Field(description="IANA zone (Europe/Berlin) or a city (Berlin).")


class NoArgs(_Args):
    """No arguments."""


@dataclass(frozen=True)
class ReminderTool:
    """A reminder tool: data (name, description, schema) plus the method that runs it."""

    name: str
    description: str
    args_model: type[BaseModel]

    def definition(self) -> ToolParam:
        """Return the tool as the Messages API expects it."""
        schema = json_schema(self.args_model)
        return {"name": self.name, "description": self.description, "input_schema": schema}


REMINDER_TOOLS = (
    ReminderTool(
        "create_reminder", f"Set a reminder the bot sends in this chat. {_WHEN}", CreateArgs
    ),
    ReminderTool(
        "list_reminders", "List this chat owner's upcoming reminders with their ids.", NoArgs
    ),
    ReminderTool(
        "update_reminder",
        "Change a reminder's time, repeat or text; give only what changes (the rest stays as "
        f"it is). {_WHEN}",
        UpdateArgs,
    ),
    ReminderTool("cancel_reminder", "Cancel a reminder by id.", IdArgs),
    ReminderTool(
        "set_timezone", "Set the user's time zone, asked for once (their city).", ZoneArgs
    ),
)


class ReminderTools:
    """Runs the reminder tools for one owner's chat."""

    names = frozenset(tool.name for tool in REMINDER_TOOLS)

    def __init__(self, store: ReminderStore, max_active: int, clock: Clock | None = None):
        self.store = store
        self.clock = clock or SystemClock()
        # Set when a reminder changes in this process: the due loop looks again at once.
        self.alarm = asyncio.Event()
        self._max_active = max_active

    @staticmethod
    def definitions() -> list[ToolParam]:
        """Return the tools' definitions, in their fixed order, as copies the caller may change."""
        return [tool.definition() for tool in REMINDER_TOOLS]

    async def run(self, place: Place, name: str, tool_input: Any) -> ToolOutcome:
        """Validate and run one call; problems come back as error results, never raise."""
        tool = next(t for t in REMINDER_TOOLS if t.name == name)
        try:
            args = tool.args_model.model_validate(tool_input)
            content = await getattr(self, "_" + name)(place, args)
        except ValidationError as error:
            content = f"Invalid input for {name}: {describe_validation_error(error)}."
            return ToolOutcome(content + " Nothing was changed.", is_error=True)
        except (TimingError, ReminderNotFound, ReminderLimit, ValueError) as error:
            return ToolOutcome(tool_texts.refusal(error, self._max_active), is_error=True)
        except SQLAlchemyError:
            logger.exception("reminder tool %s failed in the database", name)
            return ToolOutcome(tool_texts.DATABASE_ERROR, is_error=True)
        self.alarm.set()
        return ToolOutcome(content)

    async def _zone(self, owner_id: int, named: str | None) -> zoneinfo.ZoneInfo:
        """Return the zone the user named, else their own; refuse when neither is known."""
        if named is not None:
            if (zone := find_zone(named)) is None:
                raise ValueError(tool_texts.unknown_zone(named))
            return zone
        own = await self.store.zone_of(owner_id)
        if own is None:
            raise ValueError(tool_texts.ZONE_UNKNOWN)
        return zoneinfo.ZoneInfo(own)

    async def _create_reminder(self, place: Place, args: CreateArgs) -> str:
        zone = await self._zone(place.owner_id, args.timezone)
        now = self.clock.now()
        at_local = _from_words(args.when, args.at_local, args.in_duration, now, zone)
        schedule = resolve(
            at_local=at_local,
            in_duration=args.in_duration,
            zone=zone,
            now=now,
            rule=args.rrule,
            until=args.until,
            count=args.count,
        )
        text = clean_text(args.text).strip()
        if not text:
            raise ValueError("text is empty once control characters are removed")
        # Everything that can still refuse runs before the write: the model is never told
        # "nothing was changed" about a reminder that was stored.
        upcoming = schedule.upcoming(now)
        if upcoming is None:
            raise TimingError("that rule has no occurrence after now: check UNTIL and COUNT")
        said = tool_texts.when(schedule, upcoming.at, now)
        reminder = await self.store.create(
            place,
            text,
            schedule,
            check_in=args.check_in,
            limit=self._max_active,
            first_at=upcoming.at,
        )
        return tool_texts.created(reminder, said)

    async def _list_reminders(self, place: Place, args: NoArgs) -> str:
        reminders = await self.store.upcoming(place.owner_id, limit=50)
        return tool_texts.listing(reminders, self.clock.now())

    async def _update_reminder(self, place: Place, args: UpdateArgs) -> str:
        current = await self.store.get(place.owner_id, args.reminder_id)
        text = clean_text(args.text).strip() if args.text is not None else None
        timing = (
            args.when,
            args.at_local,
            args.in_duration,
            args.timezone,
            args.rrule,
            args.until,
            args.count,
        )
        now = self.clock.now()
        if all(value is None for value in timing):
            if text is None:
                raise ValueError("give what changes: text, when, at_local, in_duration or rrule")
            # Only the text changes: it fires when it would have (a snooze or skip stays).
            schedule, next_at = current.schedule, current.next_fire_at
            if next_at is None:
                raise ValueError(
                    f"reminder {current.id} will not fire again: give it a new time too"
                )
        else:
            schedule = await self._new_schedule(place, current.schedule, args)
            upcoming = schedule.upcoming(now)
            if upcoming is None:
                raise TimingError("that rule has no occurrence after now: check UNTIL and COUNT")
            next_at = upcoming.at
        said = tool_texts.when(schedule, next_at, now)  # before the write: it may refuse
        reminder = await self.store.reschedule(
            place.owner_id, current.id, schedule, text, first_at=next_at
        )
        return tool_texts.updated(reminder, said)

    async def _new_schedule(self, place: Place, current: Schedule, args: UpdateArgs) -> Schedule:
        """Resolve a changed schedule; what the model leaves out stays as it was."""
        zone = await self._zone(place.owner_id, args.timezone) if args.timezone else current.zone
        rule = current.rule if args.rrule is None else args.rrule
        if rule is not None and rule.strip().lower() in ("", "none"):
            rule = None
        at_local, in_duration = args.at_local, args.in_duration
        if args.when is not None:
            now = self.clock.now()
            at_local = _from_words(args.when, at_local, in_duration, now, zone, current.start)
        if at_local is None and in_duration is None:
            at_local = current.start.isoformat(timespec="minutes")
        return resolve(
            at_local=at_local,
            in_duration=in_duration,
            zone=zone,
            now=self.clock.now(),
            rule=rule,
            until=args.until,
            count=args.count,
        )

    async def _cancel_reminder(self, place: Place, args: IdArgs) -> str:
        reminder = await self.store.cancel(place.owner_id, args.reminder_id)
        return f"Cancelled reminder {reminder.id}: {reminder.text!r}."

    async def _set_timezone(self, place: Place, args: ZoneArgs) -> str:
        zone = find_zone(args.timezone)
        if zone is None:
            raise ValueError(tool_texts.unknown_zone(args.timezone))
        await self.store.set_zone(place.owner_id, str(zone))
        now = tool_texts.clock_time(self.clock.now(), zone)
        return f"Time zone set to {zone}; it is now {now} there."
