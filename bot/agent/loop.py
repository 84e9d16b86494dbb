"""The agent loop: call Claude, run the tools it asks for, repeat until it answers."""

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import UTC, tzinfo

from anthropic import APIError, AsyncAnthropic, BadRequestError
from anthropic.types import Message, ToolUnionParam
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

from bot.agent.citations import cited_ids
from bot.agent.history.ledger import join_summary
from bot.agent.history.unanswered import (
    left_out_note_for_model,
    newest_files_within,
    only_files,
    unanswered_files,
)
from bot.agent.proposal_answers import ProposalAnswers
from bot.agent.request import api_tool, build_request
from bot.agent.response import closing_note, reply_text, stored_content
from bot.agent.stream import Progress, Stopped, StreamBroken, stream_message
from bot.agent.tool_calls import ToolCalls, TurnChange
from bot.agent.user_turn import message_turn
from bot.agent.web.sources import WebSource, web_sources
from bot.agent.web.turn import WebBudget, WebTools
from bot.conversations.blocks import Content, text_block
from bot.conversations.file_refs import FileRef
from bot.conversations.snapshot import ConversationState, Snapshot, StoredTurn
from bot.conversations.sources import ReplySources
from bot.conversations.store import ConversationStore
from bot.media.attachments import Files
from bot.media.notices import ConversationTooLong, FileNotice, FilesOverBudget
from bot.media.unreadable import (
    api_reason,
    is_prompt_too_long,
    left_out_notice,
    left_out_record,
    new_file_refs,
    to_leave_out,
    unanswered_with_files,
    without_file,
)
from bot.reminders.tools import ReminderTools
from memory.tools import MEMORY_TOOLS, tool_definitions

logger = logging.getLogger(__name__)

# How many times one model call is retried with a file left out (a refused or too long one).
MAX_LEAVE_OUTS = 5
# Stored after what the model wrote before the user stopped it, so it knows the answer was cut.
STOPPED_NOTE = "[The user stopped this answer here, before it was finished.]"


@dataclass(frozen=True)
class AgentConfig:
    """How the loop calls the model, and what its tools need to know."""

    model: str
    max_tokens: int
    max_tool_rounds: int
    memory_limit: int
    zone: tzinfo = UTC
    # The most estimated tokens the files of one request may take (the history budget).
    file_token_budget: int = 24_000


@dataclass
class Answer:
    """What one turn produced: the text for the user, and what it changed or could not save.

    notices about the user's files follow the text; the Telegram layer words them.
    """

    text: str
    changes: list[TurnChange] = field(default_factory=list)
    notices: list[FileNotice] = field(default_factory=list)
    # The web pages the reply cited or read: shown after it, as the API's terms ask.
    web_sources: list[WebSource] = field(default_factory=list)
    # The owner's memories the reply cited, and the stored turn that keeps them (its button's).
    memories_cited: list[str] = field(default_factory=list)
    cited_turn_id: int | None = None
    stopped: bool = False  # the user stopped it: text is what was written by then


class TurnFailed(Exception):
    """A model call of a turn failed or ran past the deadline; what changed travels with it.

    The cause is the call's error, or a TimeoutError; the changes get notices with Undo."""

    def __init__(self, changes: list[TurnChange]):
        super().__init__("a model call failed partway through the turn")
        self.changes = changes


@dataclass
class _TurnState:
    """One user turn as the loop works on it: what it sends, and what it has so far."""

    conversation: ConversationState
    turns: list[StoredTurn]
    tools: list[ToolUnionParam]
    files: dict[str, str | None]
    progress: Progress | None
    deadline: float | None  # in the event loop's time; None: no deadline
    web: WebBudget | None = None  # None: no web tools this turn
    texts: list[str] = field(default_factory=list)
    notices: list[FileNotice] = field(default_factory=list)  # after the model's texts
    answer: Answer = field(default_factory=lambda: Answer(text=""))
    request: MessageCreateParamsNonStreaming | None = None  # the last one sent

    def finished(self, notice: FileNotice | None = None) -> Answer:
        """Return the answer so far, ending with its notices (and this one)."""
        self.answer.text = "\n\n".join(self.texts)
        self.answer.notices = [*self.notices, *([notice] if notice else [])]
        return self.answer


@dataclass(frozen=True)
class AgentParts:
    """What the loop works with, each built once by the composition root (bot.compose)."""

    client: AsyncAnthropic
    config: AgentConfig
    conversations: ConversationStore
    tool_calls: ToolCalls
    files: Files
    # The memories each reply cited, kept in the database the memories are in.
    sources: ReplySources
    reminders: ReminderTools | None = None
    proposal_answers: ProposalAnswers | None = None
    web: WebTools | None = None


class Agent:
    """Runs one user turn of a conversation through the model and the memory tools."""

    def __init__(self, parts: AgentParts):
        self._client = parts.client
        self._web = parts.web
        self._tool_calls = parts.tool_calls
        self._proposal_answers = parts.proposal_answers
        # Reminders work with memory off too, so their tools come after the memory tools.
        self._reminder_tools = parts.reminders.definitions() if parts.reminders else []
        self._files = parts.files
        self._config = parts.config
        self._tools: list[ToolUnionParam] = [api_tool(d) for d in tool_definitions(MEMORY_TOOLS)]
        self._conversations = parts.conversations
        self.sources = parts.sources

    async def run(
        self, snapshot: Snapshot, progress: Progress | None = None, deadline: float | None = None
    ) -> Answer:
        """Answer the conversation's newest user turn, storing every step as it happens.

        With progress, the model's answers are streamed and reported to it as they come.
        Raises TurnFailed, with the changes so far, if a call fails or runs past the deadline.
        """
        if self._proposal_answers is not None:
            # What the user did by button since the last reply goes into their message's turn.
            snapshot = await self._proposal_answers.notes.deliver(snapshot)
        tools = (self._tools if snapshot.memory_on else []) + self._reminder_tools
        # Later rounds add no files; files past the budget are left out, the newest kept.
        admitted = newest_files_within(snapshot.turns, self._config.file_token_budget)
        files = await self._files.payloads(only_files(snapshot.turns, admitted))
        owner_id = snapshot.conversation.owner_id
        web = await self._web.budget(owner_id, snapshot.web) if self._web else None
        state = _TurnState(
            snapshot.conversation, list(snapshot.turns), tools, files, progress, deadline, web
        )
        new_files = {ref.sha256 for ref in unanswered_files(snapshot.turns)}
        if left_out := len(new_files - files.keys()):
            # Sent with the newest message, never stored: the next request decides anew.
            note = left_out_note_for_model(left_out, len(new_files))
            state.turns.append(StoredTurn(0, "user", [text_block(note)]))
            state.notices.append(FilesOverBudget(left_out, len(new_files)))
        try:
            answer = await self._rounds(state)
        except (APIError, StreamBroken, TimeoutError) as error:  # the SDK's timeouts are APIErrors
            raise TurnFailed(state.answer.changes) from error
        await self._moved_on(snapshot)
        return answer

    async def _moved_on(self, snapshot: Snapshot) -> None:
        """Expire the memory questions this reply's message left unanswered (proposal_expiry)."""
        asked = message_turn(list(snapshot.turns))
        # Questions asked this turn are its message's and stay: none open before, none to expire.
        if self._proposal_answers is not None and asked is not None and snapshot.waiting.questions:
            conversation = snapshot.conversation
            proposals = self._proposal_answers.proposals
            await proposals.expire_unanswered(conversation.owner_id, conversation.id, asked.id)

    async def _rounds(self, state: "_TurnState") -> Answer:
        """Call the model and run its tools, round after round, until it answers."""
        for round_number in range(self._config.max_tool_rounds + 1):
            out_of_rounds = round_number == self._config.max_tool_rounds
            try:
                called = await self._call_leaving_out(state, force_answer=out_of_rounds)
            except Stopped as stopped:
                return await self._stopped(state, stopped.said)
            if isinstance(called, Answer):
                return called
            message = called
            if message.stop_reason in ("tool_use", "pause_turn") and self._stopping(state):
                return await self._stopped(state, reply_text(message))  # no tool runs
            await self._keep(state, message)
            if message.stop_reason == "pause_turn" and not out_of_rounds:
                continue  # the API paused its web tools: the stored content goes back as is
            if message.stop_reason != "tool_use" or out_of_rounds:
                break
            await self._answer_tools(state, message)
        if note := closing_note(message, out_of_rounds, bool(state.texts)):
            state.texts.append(note)
        return state.finished()

    @staticmethod
    def _stopping(state: "_TurnState") -> bool:
        """Tell whether the user stopped the answer."""
        return state.progress is not None and state.progress.stopped.is_set()

    async def _stopped(self, state: "_TurnState", said: str) -> Answer:
        """Store what the model wrote before the user stopped it, noted as cut; answer with it.

        What the turn's tools changed before the press stays, each change with its Undo.
        """
        record = f"{said}\n\n{STOPPED_NOTE}" if said else STOPPED_NOTE
        await self._conversations.append(state.conversation, "assistant", [text_block(record)])
        if said:
            state.texts.append(said)
        state.answer.stopped = True
        return state.finished()

    async def _call_leaving_out(self, state: "_TurnState", force_answer: bool) -> Message | Answer:
        """Call the model; leave out a file it refuses or that makes the prompt too long.

        The answer then ends with a note naming the file; if the user's new message had
        files and none is left, the note alone is the answer.
        """
        for attempt in range(MAX_LEAVE_OUTS + 1):
            try:
                return await self._call(state, force_answer)
            except BadRequestError as error:
                if state.web is not None and self._web is not None and self._web.refuse(error):
                    continue  # asked again without the web tools
                chosen = to_leave_out(state.turns, error, state.request or {}, state.files)
                last = not chosen or attempt == MAX_LEAVE_OUTS
                if last and is_prompt_too_long(error):
                    return state.finished(ConversationTooLong(api_reason(error)))
                if last:
                    raise
                if (answer := await self._leave_out(state, chosen, error)) is not None:
                    return answer
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _answer_tools(self, state: "_TurnState", message: Message) -> None:
        """Run the message's tool calls and store their results as the next user turn."""
        conversation = state.conversation
        results, writes = await self._tool_calls.run(
            conversation, message, state.turns, state.answer.changes
        )
        if state.web is not None and (note := state.web.used_up_note()) is not None:
            # The web tools stay offered (the cached prefix holds); the cap is told instead.
            results.append(text_block(note))
        turn = await self._conversations.append(conversation, "user", results, writes)
        state.turns.append(turn)

    async def _keep(self, state: "_TurnState", message: Message) -> None:
        """Store the model's message as a turn, and note its text for the answer."""
        if content := stored_content(message):
            turn = await self._conversations.append(state.conversation, "assistant", content)
            state.turns.append(turn)
            await self._cite(state.answer, state.conversation.owner_id, turn.id, message)
        if text := reply_text(message):
            state.texts.append(text)
        state.answer.web_sources = web_sources(message.content, state.answer.web_sources)
        if self._web is not None:
            await self._web.record(state.web, message)

    async def _cite(self, answer: Answer, owner_id: int, turn_id: int, message: Message) -> None:
        """Keep with the newest turn every memory the reply cited so far (the owner's only)."""
        cited = [*answer.memories_cited, *cited_ids(message.content)]
        if not cited:
            return
        answer.memories_cited = await self.sources.record(turn_id, owner_id, cited)
        answer.cited_turn_id = turn_id if answer.memories_cited else None

    async def _leave_out(
        self, state: "_TurnState", chosen: list[tuple[StoredTurn, FileRef]], error: BadRequestError
    ) -> Answer | None:
        """Replace the chosen files with notes in their stored turns; tell the user which.

        Returns the answer when the user's new files are all gone (the note, stored as the
        answer: the model later knows, and the turn is not left unanswered), else None.
        """
        new_files = new_file_refs(state.turns)
        notice = left_out_notice(error, [ref for _, ref in chosen], new_files)
        logger.warning("leaving out %d file(s) the API refused: %s", len(chosen), notice.reason)
        for turn, ref in chosen:
            current = next(t for t in state.turns if t.id == turn.id)
            content = without_file(current.content, ref.sha256, notice.why)
            replaced = await self._conversations.replace_content(turn.id, content)
            state.turns = [replaced if t.id == turn.id else t for t in state.turns]
        if new_files and not unanswered_with_files(state.turns):
            record: Content = [text_block(left_out_record(notice))]
            await self._conversations.append(state.conversation, "assistant", record)
            return state.finished(notice)
        state.notices.append(notice)
        return None

    async def _call(self, state: "_TurnState", force_answer: bool) -> Message:
        """Send the conversation with its turns and files; stream to its progress, if any."""
        conversation = state.conversation
        request = build_request(
            model=self._config.model,
            max_tokens=self._config.max_tokens,
            tools=state.tools + (self._web.definitions(state.web) if self._web else []),
            memory_block=conversation.memory_block,
            summary=join_summary(conversation.summary, conversation.summary_changes),
            turns=[(t.role, t.content) for t in state.turns],
            force_answer=force_answer,
            files=state.files,
            # Telegram's groups have negative chat ids; a private chat's is the user's id.
            group=conversation.chat_id < 0,
        )
        state.request = request
        # Tools run outside the deadline: a database write is never cut off halfway.
        async with asyncio.timeout_at(state.deadline):
            if state.progress is None:
                message = await self._client.messages.create(**request)
            else:
                # The texts of this turn's earlier rounds: the reply so far starts with them.
                message = await stream_message(self._client, request, state.progress, state.texts)
        usage = message.usage
        logger.debug(
            "model call: in=%s cache_read=%s cache_write=%s out=%s stop=%s",
            usage.input_tokens,
            usage.cache_read_input_tokens,
            usage.cache_creation_input_tokens,
            usage.output_tokens,
            message.stop_reason,
        )
        return message
