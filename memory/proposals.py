"""Memories the model proposes (propose_memory), the user's answers, and the bounds on asking.

Asking is bounded in code, not only in the instructions: one proposal per reply, none while
one is unanswered, at most a few per conversation, and never again for a fact the user
declined in the same conversation. Every read and write is scoped by owner.
"""

import re
from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memory.categories import Category
from memory.db import affected
from memory.items import ProposalStatus, subject_key
from memory.models import MemoryProposalRecord, utcnow
from memory.proposal_expiry import NOT_ASKED_AGAIN, expire_unanswered

DEFAULT_MAX_PROPOSALS = 3
# What a fact's comparison ignores at its ends: the model may end a sentence or not.
_QUOTES = "\"'\u2018\u2019\u201c\u201d\u00ab\u00bb"
_END_MARKS = re.compile(rf"^[\s{_QUOTES}]+|[\s.!?{_QUOTES}]+$")


class AskingBound(StrEnum):
    """Why a proposal was refused: which bound on asking it would pass."""

    SAME_REPLY = "same_reply"
    UNANSWERED = "unanswered"
    TOO_MANY = "too_many"
    DECLINED = "declined"


@dataclass(frozen=True)
class Proposal:
    """A memory the model proposed to one owner, and where the user's answer stands."""

    id: int
    owner_id: int
    conversation_id: int
    content: str
    category: Category
    subject: str
    status: ProposalStatus
    memory_id: str | None = None
    # The stored user's message whose reply asked it: in a group, whose words they were.
    turn_id: int | None = None


def fact_key(subject: str, content: str) -> tuple[str | None, str]:
    """Return a fact as compared: case, spacing and end punctuation folded."""
    folded = " ".join(content.split()).casefold()
    return subject_key(subject), _END_MARKS.sub("", folded)


def _proposal(record: MemoryProposalRecord) -> Proposal:
    """Return a stored proposal as a plain value."""
    return Proposal(
        record.id,
        record.owner_id,
        record.conversation_id,
        record.content,
        Category(record.category),
        record.subject,
        ProposalStatus(record.status),
        record.memory_id,
        record.turn_id,
    )


def asking_bound(
    earlier: list[MemoryProposalRecord],
    turn_id: int | None,
    key: tuple[str | None, str],
    limit: int,
) -> AskingBound | None:
    """Return the bound a new proposal would pass, given the conversation's earlier ones."""
    if turn_id is not None and any(p.turn_id == turn_id for p in earlier):
        return AskingBound.SAME_REPLY
    if any(p.status == ProposalStatus.PENDING for p in earlier):
        return AskingBound.UNANSWERED
    declined = (p for p in earlier if ProposalStatus(p.status) in NOT_ASKED_AGAIN)
    if any(fact_key(p.subject, p.content) == key for p in declined):
        return AskingBound.DECLINED
    if len(earlier) >= limit:
        return AskingBound.TOO_MANY
    return None


class ProposalStore:
    """The owner's proposed memories and their answers, at most limit per conversation."""

    def __init__(
        self, sessionmaker: async_sessionmaker[AsyncSession], limit: int = DEFAULT_MAX_PROPOSALS
    ):
        self._sessionmaker = sessionmaker
        self.limit = limit

    async def propose(
        self,
        owner_id: int,
        conversation_id: int,
        turn_id: int | None,
        memory: tuple[str, Category, str],
    ) -> Proposal | AskingBound:
        """Store a pending proposal of (content, category, subject), or say which bound stops it."""
        content, category, subject = memory
        async with self._sessionmaker.begin() as session:
            earlier = list(
                await session.scalars(
                    select(MemoryProposalRecord).where(
                        MemoryProposalRecord.owner_id == owner_id,
                        MemoryProposalRecord.conversation_id == conversation_id,
                    )
                )
            )
            bound = asking_bound(earlier, turn_id, fact_key(subject, content), self.limit)
            if bound is not None:
                return bound
            record = MemoryProposalRecord(
                owner_id=owner_id,
                conversation_id=conversation_id,
                turn_id=turn_id,
                content=content,
                category=category.value,
                subject=subject,
                status=ProposalStatus.PENDING.value,
                created_at=utcnow(),
            )
            session.add(record)
            await session.flush()
            return _proposal(record)

    async def expire_unanswered(
        self, owner_id: int, conversation_id: int, answered_turn_id: int
    ) -> int:
        """Expire the questions the user's message just answered left open (proposal_expiry)."""
        return await expire_unanswered(
            self._sessionmaker, owner_id, conversation_id, answered_turn_id
        )

    async def find(self, owner_id: int, proposal_id: int) -> Proposal | None:
        """Return one of the owner's proposals; another owner's is not found."""
        async with self._sessionmaker() as session:
            record = await session.scalar(
                select(MemoryProposalRecord).where(
                    MemoryProposalRecord.id == proposal_id,
                    MemoryProposalRecord.owner_id == owner_id,
                )
            )
        return None if record is None else _proposal(record)

    async def answer(
        self,
        owner_id: int,
        proposal_id: int,
        status: ProposalStatus,
        memory_id: str | None = None,
    ) -> bool:
        """Record the answer to a pending proposal; tell whether it was still pending."""
        async with self._sessionmaker.begin() as session:
            result = await session.execute(
                update(MemoryProposalRecord)
                .where(
                    MemoryProposalRecord.id == proposal_id,
                    MemoryProposalRecord.owner_id == owner_id,
                    MemoryProposalRecord.status == ProposalStatus.PENDING.value,
                )
                .values(status=status.value, answered_at=utcnow(), memory_id=memory_id)
            )
            return affected(result) > 0

    async def saved_in_words(
        self, owner_id: int, conversation_id: int, subject: str, memory_id: str
    ) -> None:
        """Settle a pending proposal with this subject that a save in words answered."""
        wanted = subject_key(subject)
        async with self._sessionmaker.begin() as session:
            pending = await session.scalars(
                select(MemoryProposalRecord).where(
                    MemoryProposalRecord.owner_id == owner_id,
                    MemoryProposalRecord.conversation_id == conversation_id,
                    MemoryProposalRecord.status == ProposalStatus.PENDING.value,
                )
            )
            for record in pending:
                if subject_key(record.subject) == wanted:
                    record.status = ProposalStatus.ACCEPTED.value
                    record.answered_at = utcnow()
                    record.memory_id = memory_id
