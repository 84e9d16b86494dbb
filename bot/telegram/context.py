"""The handler context and bot_data types, with the services built at start-up; memory owners."""

import asyncio
from dataclasses import dataclass, field
from typing import Any

from anthropic import AsyncAnthropic
from sqlalchemy.ext.asyncio import AsyncEngine
from telegram import Update
from telegram.ext import Application, ApplicationBuilder, CallbackContext, ExtBot, JobQueue

from bot.agent.chat import ChatService
from bot.agent.proposal_answers import ProposalAnswers
from bot.conversations.job_claims import JobClaims
from bot.conversations.leases import TurnLeases
from bot.conversations.store import ConversationStore
from bot.media.voice import VoiceNotes
from bot.reminders.tools import ReminderTools
from bot.settings import Settings
from bot.telegram.chat.albums import Albums
from bot.telegram.chat.drafts import Drafts
from bot.telegram.runtime.cooldown import Clock, Cooldown
from bot.telegram.runtime.leases import LeaseKeeper
from bot.telegram.runtime.outage import Outage
from bot.upkeep.erasure import DataEraser
from bot.upkeep.memory_import import ImportService
from bot.upkeep.tidy import TidyService
from memory.control import MemoryControl
from memory.store import MemoryStore

# A problem with the model account is told to a chat once an hour per cause, not per message.
ACCOUNT_NOTICE_SECONDS = 3600
MAX_ACCOUNT_NOTICES = 10_000


def account_notices(clock: Clock) -> Cooldown:
    """Return the record of which chats were told of which account problem, on clock."""
    return Cooldown(ACCOUNT_NOTICE_SECONDS, MAX_ACCOUNT_NOTICES, clock)


@dataclass(frozen=True)
class Services:
    """Everything handlers call, each built once, in order, by bot.compose.build_services."""

    settings: Settings
    engine: AsyncEngine
    anthropic: AsyncAnthropic
    chat: ChatService
    conversations: ConversationStore
    memories: MemoryStore
    memory_control: MemoryControl
    reminders: ReminderTools
    leases: TurnLeases
    jobs: JobClaims  # background work (retention, nightly tidy) done once across processes
    eraser: DataEraser  # /delete_my_data
    # The answers to the model's memory questions by button, and Undo news for the model.
    proposal_answers: ProposalAnswers
    # Voice notes' transcription: it fetches files through the bot.
    voice: VoiceNotes
    # Which chats see drafts; it remembers refusals, so there is one per process.
    drafts: Drafts
    # Which chats were told of which model account problem this hour (on the guard's clock).
    account_notices: Cooldown
    # Tidy passes and imports, on the memory store's database and the model client.
    tidy: TidyService
    importer: ImportService


@dataclass
class BotData:
    """The application's bot_data: its services, and what runs beside the handlers."""

    # PTB makes bot_data without arguments; build_application sets the services right after.
    services: Services = field(init=False)
    albums: Albums = field(default_factory=Albums)
    recovery: asyncio.Task[None] | None = None  # answering what the last run left unanswered
    due_loop: asyncio.Task[None] | None = None  # sending reminders when they are due
    leases: LeaseKeeper | None = None  # this process's chat leases (bot.telegram.runtime.leases)
    lease_loop: asyncio.Task[None] | None = None  # renewing them, taking on left-over turns
    outage: Outage | None = None  # updates kept while the database is out of reach


class BotContext(CallbackContext[ExtBot[None], dict[Any, Any], dict[Any, Any], BotData]):
    """CallbackContext with typed access to the services."""

    def __init__(
        self, application: "BotApplication", chat_id: int | None = None, user_id: int | None = None
    ):
        super().__init__(application, chat_id, user_id)

    @property
    def services(self) -> Services:
        """Return the services built at start-up."""
        return self.bot_data.services


# The application as handlers see it; what matters to them is its typed bot_data (PTB types a
# context's application with an unbound self type, so the rest cannot be narrower).
BotApplication = Application[Any, Any, Any, Any, BotData, Any]
# The job queue PTB makes by default (the bot schedules nothing on it).
_DefaultJobs = JobQueue[
    CallbackContext[ExtBot[None], dict[Any, Any], dict[Any, Any], dict[Any, Any]]
]
# The builder once it has the typed context and bot_data; its bot's type changes with the
# rate limiter a caller sets (bot.app sets one, a benchmark may not).
BotApplicationBuilder = ApplicationBuilder[
    ExtBot[Any], BotContext, dict[Any, Any], dict[Any, Any], BotData, _DefaultJobs
]


def owner_id(update: Update) -> int:
    """Return the memory owner: the user in a private chat, the group in a group."""
    # In a private chat the chat id is the user's id.
    chat = update.effective_chat
    if chat is None:
        # Handlers that need an owner only see updates from chats (messages, buttons).
        raise ValueError("an update without a chat has no memory owner")
    return chat.id
