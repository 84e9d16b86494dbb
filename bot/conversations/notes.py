"""Notes for the model that wait for the user's next message, and go into its turn once.

What the user did between two messages without the model (a tap of Remember, No or Undo)
reaches the model as lines in the user's next turn: stored there, so later requests send the
same history and the cached prefix holds, and never in the cached system prompt.
"""

import functools
from dataclasses import replace

from sqlalchemy import Label, Select, bindparam, exists, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession, async_sessionmaker

from bot.conversations.blocks import Content, text_block
from bot.conversations.content import content_tokens
from bot.conversations.models import Conversation, PendingNote, Turn
from bot.conversations.snapshot import ChatThread, Snapshot, Waiting
from bot.conversations.statements import NamedRow
from memory.items import ProposalStatus
from memory.models import MemoryProposalRecord, utcnow

# The waiting flags' column names, as a turns' read selects them too (turn_rows.py).
NOTES_WAIT, QUESTIONS_WAIT = "notes_wait", "questions_wait"


def with_notes(content: Content, notes: list[str]) -> Content:
    """Return a user's turn with the notes as a text block after the message."""
    return [*content, text_block("\n".join(notes))]


async def waiting_for(connection: AsyncConnection, owner_id: int, conversation_id: int) -> Waiting:
    """Tell whether notes or open memory questions wait for the conversation's next reply."""
    parameters = {"owner": owner_id, "conversation_id": conversation_id}
    row = (await connection.execute(_waiting_statement(), parameters)).one()
    return waiting_of(row)


def waiting_of(row: NamedRow) -> Waiting:
    """Read the waiting flags of a row that selected waiting_columns()."""
    values = row._mapping
    return Waiting(notes=bool(values[NOTES_WAIT]), questions=bool(values[QUESTIONS_WAIT]))


def waiting_columns() -> tuple[Label[bool], Label[bool]]:
    """Return whether notes and open questions wait, for :conversation_id of :owner."""
    Question = MemoryProposalRecord
    notes = select(PendingNote.id).where(
        PendingNote.conversation_id == bindparam("conversation_id"),
        PendingNote.turn_id.is_(None),
    )
    questions = select(Question.id).where(
        Question.owner_id == bindparam("owner"),
        Question.conversation_id == bindparam("conversation_id"),
        Question.status == ProposalStatus.PENDING.value,
    )
    return exists(notes).label(NOTES_WAIT), exists(questions).label(QUESTIONS_WAIT)


@functools.cache
def _waiting_statement() -> Select[bool, bool]:
    """Select whether notes and open questions wait (for a conversation without turns to read)."""
    return select(*waiting_columns())


class PendingNotes:
    """Notes left for a conversation's next user message, each delivered once."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession]):
        self._sessionmaker = sessionmaker

    async def add(self, owner_id: int, conversation_id: int, text: str) -> None:
        """Leave a note for the conversation's next user message."""
        async with self._sessionmaker.begin() as session:
            session.add(_note(owner_id, conversation_id, text))

    async def add_to_open(self, place: ChatThread, owner_id: int, text: str) -> bool:
        """Leave a note for the topic's open conversation, if it has one; tell whether."""
        query = (
            select(Conversation.id)
            .where(
                Conversation.chat_id == place.chat_id,
                Conversation.thread_id.is_not_distinct_from(place.thread_id),
                Conversation.owner_id == owner_id,
                Conversation.ended_at.is_(None),
            )
            .order_by(Conversation.id.desc())
            .limit(1)
        )
        async with self._sessionmaker.begin() as session:
            conversation_id = await session.scalar(query)
            if conversation_id is None:
                return False
            session.add(_note(owner_id, conversation_id, text))
        return True

    async def deliver(self, snapshot: Snapshot) -> Snapshot:
        """Write the conversation's waiting notes into its newest turn, the user's message."""
        if not snapshot.unanswered or not snapshot.waiting.notes:
            return snapshot
        conversation_id, turn = snapshot.conversation.id, snapshot.turns[-1]
        waiting = PendingNote.conversation_id == conversation_id, PendingNote.turn_id.is_(None)
        # Most messages find none: a read, so they take no write lock for it.
        async with self._sessionmaker() as session:
            if await session.scalar(select(PendingNote.id).where(*waiting).limit(1)) is None:
                return snapshot
        async with self._sessionmaker.begin() as session:
            claimed = await session.execute(
                update(PendingNote)
                .where(*waiting)
                .values(turn_id=turn.id)
                .returning(PendingNote.id, PendingNote.text)
            )
            notes = [text for _, text in sorted(claimed.all())]
            if not notes:
                return snapshot  # another message took them first
            content = with_notes(turn.content, notes)
            tokens = content_tokens(content)
            await session.execute(
                update(Turn).where(Turn.id == turn.id).values(content=content, tokens=tokens)
            )
        turns = [*snapshot.turns[:-1], replace(turn, content=content, tokens=tokens)]
        return replace(snapshot, turns=turns)


def _note(owner_id: int, conversation_id: int, text: str) -> PendingNote:
    """Return a new waiting note."""
    return PendingNote(
        owner_id=owner_id, conversation_id=conversation_id, text=text, created_at=utcnow()
    )
