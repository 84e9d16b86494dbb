"""The composition root: build every service once, in order, from the settings."""

import functools
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx2  # the SDK's own HTTP library
from anthropic import AsyncAnthropic, DefaultAsyncHttpxClient
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.agent.chat import ChatService
from bot.agent.history.compaction import Compactor
from bot.agent.loop import Agent, AgentConfig, AgentParts
from bot.agent.proposal_answers import ProposalAnswers
from bot.agent.tool_calls import ToolCalls
from bot.agent.web.tools import WebConfig
from bot.agent.web.turn import WebTools
from bot.conversations.job_claims import JobClaims
from bot.conversations.leases import TurnLeases, check_turn
from bot.conversations.notes import PendingNotes
from bot.conversations.sources import ReplySources
from bot.conversations.store import ConversationStore
from bot.conversations.vector_setup import conversation_search
from bot.conversations.web_uses import WebUses
from bot.media.attachments import Files, FileSource
from bot.media.file_cache import FileCache
from bot.media.transcription import openai_transcriber
from bot.media.voice import VoiceNotes
from bot.reminders.due import Clock as ReminderClock
from bot.reminders.store import ReminderStore
from bot.reminders.tools import ReminderTools
from bot.settings import Settings
from bot.telegram.chat.drafts import Drafts
from bot.telegram.context import Services, account_notices
from bot.telegram.runtime.cooldown import Clock
from bot.upkeep.erasure import DataEraser
from bot.upkeep.memory_import import ImportService
from bot.upkeep.tidy import TidyService
from memory.batches.store import BatchStore
from memory.control import MemoryControl
from memory.db import create_engine, create_sessionmaker
from memory.models import utcnow
from memory.proposals import ProposalStore
from memory.store import MemoryStore
from memory.switch import MemorySwitch
from memory.undo import UndoLog

ANTHROPIC_MAX_RETRIES = 4
ANTHROPIC_TIMEOUT_SECONDS = 120


@dataclass(frozen=True)
class Clocks:
    """The clocks services run on: stored times, reminders, and the account notices' hour."""

    now: Callable[[], datetime] = utcnow
    reminders: ReminderClock | None = None  # None: the wall clock
    notices: Clock = time.monotonic  # the guard's clock, so tests move both together


@dataclass(frozen=True)
class MemoryParts:
    """The memory store with its switch, undo log and the answers to memory questions."""

    store: MemoryStore
    switch: MemorySwitch
    undo_log: UndoLog
    proposal_answers: ProposalAnswers


def file_cache(settings: Settings) -> FileCache:
    """Return the local cache of users' files, by hash, within FILE_CACHE_MB."""
    return FileCache(settings.file_cache_dir, settings.file_cache_mb * 1024 * 1024)


def build_voice(settings: Settings, source: FileSource, cache: FileCache) -> VoiceNotes:
    """Build voice notes' service: transcribed when TRANSCRIPTION_* are set, else refused."""
    transcriber = None
    if settings.transcription_on:
        assert settings.transcription_base_url and settings.transcription_model
        assert settings.transcription_api_key is not None  # all three or none (Settings)
        transcriber = openai_transcriber(
            settings.transcription_base_url,
            settings.transcription_api_key.get_secret_value(),
            settings.transcription_model,
        )
    max_bytes = settings.voice_max_mb * 1024 * 1024
    return VoiceNotes(source, cache, transcriber, settings.voice_max_seconds, max_bytes)


@functools.cache
def model_tls() -> ssl.SSLContext:
    """Return the TLS context of the Messages API: loading CA certificates takes ~0.1 s."""
    return httpx2.create_ssl_context()  # what the SDK's client makes for itself, made once


def model_client(
    settings: Settings, http_client: DefaultAsyncHttpxClient | None = None
) -> AsyncAnthropic:
    """Return the Messages API client, retrying what the SDK deems retryable."""
    if http_client is None:  # the SDK's defaults, with the process's TLS context
        http_client = DefaultAsyncHttpxClient(verify=model_tls())
    return AsyncAnthropic(
        api_key=settings.anthropic_api_key.get_secret_value(),
        base_url=settings.anthropic_base_url,
        max_retries=ANTHROPIC_MAX_RETRIES,
        timeout=ANTHROPIC_TIMEOUT_SECONDS,
        http_client=http_client,
    )


def agent_config(settings: Settings) -> AgentConfig:
    """Return how the agent calls the model, from the settings."""
    return AgentConfig(
        model=settings.anthropic_model,
        max_tokens=settings.anthropic_max_tokens,
        max_tool_rounds=settings.agent_max_tool_rounds,
        memory_limit=settings.memory_max_items,
        zone=settings.zone,
        file_token_budget=settings.history_token_budget,
    )


def memory_parts(settings: Settings, sessionmaker: async_sessionmaker[AsyncSession]) -> MemoryParts:
    """Build the memory store, its switch and undo log, and the answers to memory questions."""
    limit = settings.memory_max_items
    store = MemoryStore(sessionmaker, settings.memory_token_budget, limit)
    switch = MemorySwitch(sessionmaker)
    proposals = ProposalStore(sessionmaker, settings.max_memory_proposals)
    answers = ProposalAnswers(proposals, store, switch, PendingNotes(sessionmaker))
    return MemoryParts(store, switch, UndoLog(sessionmaker, limit), answers)


def web_tools(
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    clock: Callable[[], datetime],
) -> WebTools:
    """Return the web tools within WEB_TOOLS, WEB_USES_PER_TURN and WEB_USES_PER_DAY."""
    config = WebConfig(settings.web_tools, settings.web_uses_per_turn, settings.web_uses_per_day)
    return WebTools(config, WebUses(sessionmaker), settings.zone, clock)


def agent_parts(
    settings: Settings,
    client: AsyncAnthropic,
    sessionmaker: async_sessionmaker[AsyncSession],
    memory: MemoryParts,
    conversations: ConversationStore,
    files: Files,
    reminders: ReminderTools,
    now: Callable[[], datetime],
) -> AgentParts:
    """Build what one turn works with: its tools' stores, the reminders and the web."""
    config = agent_config(settings)
    past = conversation_search(settings, conversations)
    proposals = memory.proposal_answers.proposals
    tool_calls = ToolCalls(
        memory.store, memory.switch, past, config.memory_limit, config.zone, reminders, proposals
    )
    web = web_tools(settings, sessionmaker, now)
    sources = ReplySources(sessionmaker)
    return AgentParts(
        client,
        config,
        conversations,
        tool_calls,
        files,
        sources,
        reminders,
        memory.proposal_answers,
        web,
    )


def reply_drafts(settings: Settings, sessionmaker: async_sessionmaker[AsyncSession]) -> Drafts:
    """Build the drafts of streamed replies, which send no part of a turn taken over."""
    check = functools.partial(check_turn, sessionmaker)
    return Drafts(settings.stream_replies, settings.rich_messages, check)


def build_services(
    settings: Settings,
    source: FileSource,
    *,
    clocks: Clocks = Clocks(),
    http_client: DefaultAsyncHttpxClient | None = None,
) -> Services:
    """Build the engine, stores, model client and services (evals/ pass clocks, a client)."""
    sessionmaker = create_sessionmaker(engine := create_engine(settings.database_url))
    memory = memory_parts(settings, sessionmaker)
    idle, budget = timedelta(minutes=settings.conversation_idle_minutes), memory.store.block_budget
    conversations = ConversationStore(sessionmaker, idle, clocks.now, block_budget=budget)
    client, files = model_client(settings, http_client), Files(source, file_cache(settings))
    max_active = settings.reminders_max_active
    reminders = ReminderTools(ReminderStore(sessionmaker), max_active, clocks.reminders)
    leases, jobs = process_claims(settings, sessionmaker)
    parts = agent_parts(
        settings, client, sessionmaker, memory, conversations, files, reminders, clocks.now
    )
    refresh = conversations.refresh_memory_block
    tidy, importer = bulk_services(settings, client, memory.store, sessionmaker)
    return Services(
        settings=settings,
        engine=engine,
        anthropic=client,
        chat=chat_service(settings, parts, clocks.now),
        conversations=conversations,
        memories=memory.store,
        memory_control=MemoryControl(memory.store, memory.switch, memory.undo_log, refresh),
        reminders=reminders,
        leases=leases,
        jobs=jobs,
        eraser=DataEraser(sessionmaker, files.cache),
        proposal_answers=memory.proposal_answers,
        voice=build_voice(settings, source, files.cache),
        drafts=reply_drafts(settings, sessionmaker),
        account_notices=account_notices(clocks.notices),
        tidy=tidy,
        importer=importer,
    )


def process_claims(
    settings: Settings, sessionmaker: async_sessionmaker[AsyncSession]
) -> tuple[TurnLeases, JobClaims]:
    """Build this process's chat leases and its claims of background work, by one name."""
    lease = timedelta(seconds=settings.turn_lease_seconds)
    leases = TurnLeases(sessionmaker, lease)
    return leases, JobClaims(sessionmaker, leases.holder, lease)


def bulk_services(
    settings: Settings,
    client: AsyncAnthropic,
    store: MemoryStore,
    sessionmaker: async_sessionmaker[AsyncSession],
) -> tuple[TidyService, ImportService]:
    """Build tidy passes and imports, which share the memory store's batches of changes."""
    batches = BatchStore(sessionmaker, store.limit)
    model, cap = settings.anthropic_model, settings.tidy_token_cap
    tidy = TidyService(client, model, store, batches, cap)
    return tidy, ImportService(client, model, store, batches, cap)


def chat_service(settings: Settings, parts: AgentParts, now: Callable[[], datetime]) -> ChatService:
    """Build the chat service: the agent, and the compactor of its conversations' history."""
    compactor = Compactor(
        parts.client,
        settings.anthropic_model,
        parts.conversations,
        settings.history_token_budget,
        parts.tool_calls.proposals,
    )
    return ChatService(
        parts.conversations,
        Agent(parts),
        compactor,
        settings.zone,
        parts.files,
        now,
        settings.turn_deadline_seconds,
    )
