"""Deliver to a chat: HTML in pieces under Telegram's limit, views with buttons, answers."""

import contextlib
import logging
from collections.abc import Awaitable, Callable
from functools import partial

from anthropic import APIError, APIStatusError
from telegram import Bot

from bot.agent.account import account_problem, describe
from bot.agent.loop import Answer, TurnFailed
from bot.agent.stream import Progress, StreamBroken
from bot.agent.tool_calls import TurnChange
from bot.conversations.leases import LeaseLost
from bot.conversations.snapshot import ChatThread
from bot.telegram import texts
from bot.telegram.chat.drafts import Drafts
from bot.telegram.chat.file_texts import notice_text
from bot.telegram.chat.sending import send_html, send_markdown
from bot.telegram.chat.typing_indicator import typing_indicator
from bot.telegram.context import BotApplication
from bot.telegram.proposals.views import question
from bot.telegram.runtime.cooldown import Cooldown
from bot.telegram.runtime.processing import lanes
from bot.telegram.sources.views import reply_buttons
from bot.telegram.sources.web import sources_markdown
from bot.telegram.ui import markup, send_view
from bot.telegram.views import change_notices
from memory.proposals import Proposal

logger = logging.getLogger(__name__)


AnswerCall = Callable[[Progress | None], Awaitable[Answer]]


async def report_failure(
    bot: Bot, place: ChatThread, error: BaseException | None, notices: Cooldown | None
) -> None:
    """Tell the chat the model call failed: an account problem by name, else an outage.

    A TimeoutError is the turn's deadline passing (TurnFailed's cause): the model took too long.
    """
    if isinstance(error, TimeoutError):
        logger.warning("the turn for chat %s passed its deadline; stopped", place.chat_id)
        await send_html(bot, place.chat_id, texts.TOOK_TOO_LONG, thread_id=place.thread_id)
        return
    problem = account_problem(error) if error is not None else None
    if problem is None or not isinstance(error, APIStatusError):
        logger.warning("model call failed for chat %s: %s", place.chat_id, error)
        await send_html(bot, place.chat_id, texts.MODEL_UNAVAILABLE, thread_id=place.thread_id)
        return
    logger.error("model call failed for chat %s: %s", place.chat_id, describe(problem, error))
    if notices is None or notices.take((problem, place.chat_id)):
        html = texts.account_problem(problem)
        await send_html(bot, place.chat_id, html, thread_id=place.thread_id)


def taken_over(chat_id: int) -> None:
    """Log that another process took the chat's turn over (LeaseLost), so this one is silent."""
    # This process was taken for dead (starved past its beat): nothing of its answer is stored.
    logger.info("chat %s: another process took this turn over and answers it", chat_id)


def reply_markdown(result: Answer) -> str:
    """Return the whole reply: its text, its stop mark, its web sources, its notices."""
    # The web pages the reply rests on follow it, before any notice about files.
    said = [
        result.text,
        texts.STOPPED if result.stopped else "",
        sources_markdown(result.web_sources),
        *(notice_text(notice) for notice in result.notices),
    ]
    return "\n\n".join(part for part in said if part) or texts.EMPTY_REPLY


async def deliver_answer(
    bot: Bot,
    place: ChatThread,
    answer: AnswerCall,
    drafts: Drafts | None = None,
    notices: Cooldown | None = None,
    asker: int | None = None,
) -> None:
    """Let the agent answer, showing drafts or typing, then send the reply and notices.

    answer is called with the progress to report to: the chat's drafts, in a group the Stop
    button of the member who asked (asker), or None where there is neither (STREAM_REPLIES
    off, drafts refused, no asker), which also means the model is not streamed.
    notices keeps an account problem (no credits, a wrong key) to one notice a chat an hour.
    """
    stream = drafts.open(bot, place, partial(send_markdown, bot, place)) if drafts else None
    stop = drafts.groups.open(bot, place, asker) if drafts and not stream else None
    try:
        async with (
            stream or contextlib.nullcontext(),
            stop or contextlib.nullcontext(),
            typing_indicator(bot, place, until=stream.shown if stream else None),
        ):
            result = await answer(stream or stop)
    except LeaseLost:
        taken_over(place.chat_id)
        return
    except (APIError, StreamBroken, TurnFailed) as error:
        # A stream that broke off is a failed call: its text was not stored, and is not sent.
        cause = error.__cause__ if isinstance(error, TurnFailed) else error
        await report_failure(bot, place, cause, notices)
        # What the turn changed before the failure is shown all the same, each with its Undo.
        await send_notices(bot, place, error.changes if isinstance(error, TurnFailed) else [])
        return
    markdown = reply_markdown(result)
    # Under a reply that drew on memories: a button that lists them (source_views).
    buttons = markup(reply_buttons(result.cited_turn_id, result.memories_cited))
    rest = stream.unsent(markdown) if stream else markdown
    await send_markdown(bot, place, rest, buttons, rich=drafts is not None and drafts.rich)
    await send_notices(bot, place, result.changes)


async def send_notices(bot: Bot, place: ChatThread, changes: list[TurnChange]) -> None:
    """Send a notice for each memory change, with its Undo, and for each write refused.

    Then the model's memory question, if it proposed one, with its Remember and No buttons.
    """
    notices = change_notices([c for c in changes if not isinstance(c, Proposal)])
    questions = [question(c) for c in changes if isinstance(c, Proposal)]
    for view in [*notices, *questions]:
        await send_view(bot, place, view)


async def answer_if_unanswered(
    application: BotApplication, place: ChatThread, conversation_id: int
) -> None:
    """Answer a conversation in its chat's turn, if its newest message still waits for one."""
    services = application.bot_data.services

    async def answer() -> None:
        # Read it under the chat's lock: a newer message may have answered or compacted it.
        snapshot = await services.conversations.snapshot(conversation_id)
        if snapshot.unanswered:
            call = partial(services.chat.answer, snapshot)
            await deliver_answer(
                application.bot, place, call, services.drafts, services.account_notices
            )

    await lanes(application).run_exclusive(place.chat_id, answer())
