"""Memories the model proposes (propose_memory), the user's answers, and the bounds on asking.

A question carries one to MAX_FACTS facts, each a new memory or an update of one (shown old
-> new), each with a toggle; Remember saves the chosen ones. In a group it records the member
it is about: only they may answer it (None: a fact about the whole group, any member may).
Asking is bounded in code, not only in the instructions: one question per reply, none while
one is unanswered, at most a few per conversation, and never again, in this conversation, for
a fact the user declined. Every read and write is scoped by owner.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy import Select, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memory.categories import Category
from memory.db import affected
from memory.items import ProposalStatus, subject_key
from memory.models import MemoryProposalRecord, utcnow
from memory.proposal_expiry import NOT_ASKED_AGAIN, expire_unanswered
from memory.write_check import checked_write

DEFAULT_MAX_PROPOSALS = 3
# The most facts one question carries: one message, a toggle each.
MAX_FACTS = 5
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
class NewFact:
    """A fact to propose: a new memory, or (target_id) the complete new content of one."""

    content: str
    category: Category
    subject: str
    target_id: str | None = None
    previous: str | None = None  # the target's content when asked


@dataclass(frozen=True)
class ProposedFact:
    """One fact of a question, its toggle, and where its answer stands."""

    id: int
    content: str
    category: Category
    subject: str
    status: ProposalStatus
    memory_id: str | None = None
    target_id: str | None = None
    previous: str | None = None
    chosen: bool = True


@dataclass(frozen=True)
class Proposal:
    """A memory question the model asked one owner: its facts, and whom it is about.

    id is the question's (its first fact's); turn_id the stored user's message whose reply
    asked it; about the group member only who may answer it (None: anyone of the owner).
    """

    id: int
    owner_id: int
    conversation_id: int
    facts: tuple[ProposedFact, ...]
    turn_id: int | None = None
    about: str | None = None

    @property
    def status(self) -> ProposalStatus:
        """Return PENDING while a fact waits, else the first fact's answer."""
        waiting = any(f.status is ProposalStatus.PENDING for f in self.facts)
        return ProposalStatus.PENDING if waiting else self.facts[0].status

    @property
    def saved_ids(self) -> tuple[str, ...]:
        """Return the memories its answers saved or updated."""
        return tuple(f.memory_id for f in self.facts if f.memory_id is not None)


def fact_key(subject: str, content: str) -> tuple[str | None, str]:
    """Return a fact as compared: case, spacing and end punctuation folded."""
    folded = " ".join(content.split()).casefold()
    return subject_key(subject), _END_MARKS.sub("", folded)


def _question_of(record: MemoryProposalRecord) -> int:
    """Return a row's question: rows from before questions had several facts are their own."""
    return record.question_id or record.id


def _fact(record: MemoryProposalRecord) -> ProposedFact:
    """Return a stored fact as a plain value."""
    return ProposedFact(
        record.id,
        record.content,
        Category(record.category),
        record.subject,
        ProposalStatus(record.status),
        record.memory_id,
        record.target_id,
        record.previous,
        record.chosen,
    )


def _proposal(records: Sequence[MemoryProposalRecord]) -> Proposal:
    """Return a question's stored facts (in order) as one plain value."""
    first = records[0]
    return Proposal(
        _question_of(first),
        first.owner_id,
        first.conversation_id,
        tuple(_fact(r) for r in records),
        first.turn_id,
        first.about,
    )


def asking_bound(
    earlier: list[MemoryProposalRecord],
    turn_id: int | None,
    keys: Sequence[tuple[str | None, str]],
    limit: int,
) -> AskingBound | None:
    """Return the bound a new question would pass, given the conversation's earlier facts."""
    if turn_id is not None and any(p.turn_id == turn_id for p in earlier):
        return AskingBound.SAME_REPLY
    if any(p.status == ProposalStatus.PENDING for p in earlier):
        return AskingBound.UNANSWERED
    not_again = (p for p in earlier if ProposalStatus(p.status) in NOT_ASKED_AGAIN)
    if {fact_key(p.subject, p.content) for p in not_again} & set(keys):
        return AskingBound.DECLINED
    if len({_question_of(p) for p in earlier}) >= limit:
        return AskingBound.TOO_MANY
    return None


class ProposalStore:
    """The owner's memory questions and their answers, at most limit per conversation."""

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
        facts: Sequence[NewFact],
        about: str | None = None,
    ) -> Proposal | AskingBound:
        """Store a pending question of 1 to MAX_FACTS facts, or say which bound stops it."""
        if not 1 <= len(facts) <= MAX_FACTS:
            raise ValueError(f"a question carries 1 to {MAX_FACTS} facts, not {len(facts)}")
        async with checked_write(self._sessionmaker) as session:
            earlier = list(await session.scalars(self._in_conversation(owner_id, conversation_id)))
            keys = [fact_key(f.subject, f.content) for f in facts]
            if (bound := asking_bound(earlier, turn_id, keys, self.limit)) is not None:
                return bound
            records = [
                MemoryProposalRecord(
                    owner_id=owner_id,
                    conversation_id=conversation_id,
                    turn_id=turn_id,
                    content=fact.content,
                    category=fact.category.value,
                    subject=fact.subject,
                    target_id=fact.target_id,
                    previous=fact.previous,
                    about=about,
                    chosen=True,
                    status=ProposalStatus.PENDING.value,
                    created_at=utcnow(),
                )
                for fact in facts
            ]
            session.add_all(records)
            await session.flush()
            for record in records:
                record.question_id = records[0].id
            await session.flush()
            return _proposal(records)

    @staticmethod
    def _in_conversation(owner_id: int, conversation_id: int) -> Select[MemoryProposalRecord]:
        """Select the owner's facts asked in a conversation, in order."""
        return (
            select(MemoryProposalRecord)
            .where(
                MemoryProposalRecord.owner_id == owner_id,
                MemoryProposalRecord.conversation_id == conversation_id,
            )
            .order_by(MemoryProposalRecord.id)
        )

    async def expire_unanswered(
        self, owner_id: int, conversation_id: int, answered_turn_id: int
    ) -> int:
        """Expire the questions the user's message just answered left open (proposal_expiry)."""
        return await expire_unanswered(
            self._sessionmaker, owner_id, conversation_id, answered_turn_id
        )

    async def find(self, owner_id: int, proposal_id: int) -> Proposal | None:
        """Return one of the owner's questions by its id; another owner's is not found."""
        async with self._sessionmaker() as session:
            records = list(
                await session.scalars(
                    select(MemoryProposalRecord)
                    .where(
                        MemoryProposalRecord.owner_id == owner_id,
                        (MemoryProposalRecord.question_id == proposal_id)
                        | (MemoryProposalRecord.id == proposal_id),
                    )
                    .order_by(MemoryProposalRecord.id)
                )
            )
        mine = [r for r in records if _question_of(r) == proposal_id]
        return _proposal(mine) if mine else None

    async def find_by_fact(self, owner_id: int, fact_id: int) -> Proposal | None:
        """Return the owner's question that holds a fact."""
        async with self._sessionmaker() as session:
            record = await session.scalar(
                select(MemoryProposalRecord).where(
                    MemoryProposalRecord.id == fact_id,
                    MemoryProposalRecord.owner_id == owner_id,
                )
            )
        return None if record is None else await self.find(owner_id, _question_of(record))

    async def open_questions(self, owner_id: int, conversation_id: int) -> list[Proposal]:
        """Return the conversation's questions still waiting for an answer, oldest first."""
        async with self._sessionmaker() as session:
            records = list(await session.scalars(self._in_conversation(owner_id, conversation_id)))
        questions: dict[int, list[MemoryProposalRecord]] = {}
        for record in records:
            questions.setdefault(_question_of(record), []).append(record)
        found = [_proposal(rows) for rows in questions.values()]
        return [q for q in found if q.status is ProposalStatus.PENDING]

    async def toggle(self, owner_id: int, fact_id: int) -> bool:
        """Flip a pending fact's toggle; tell whether it was still pending."""
        async with self._sessionmaker.begin() as session:
            record = await session.scalar(
                select(MemoryProposalRecord).where(
                    MemoryProposalRecord.id == fact_id,
                    MemoryProposalRecord.owner_id == owner_id,
                    MemoryProposalRecord.status == ProposalStatus.PENDING.value,
                )
            )
            if record is None:
                return False
            record.chosen = not record.chosen
            return True

    async def answer(
        self,
        owner_id: int,
        fact_id: int,
        status: ProposalStatus,
        memory_id: str | None = None,
    ) -> bool:
        """Record the answer to a pending fact; tell whether it was still pending."""
        async with self._sessionmaker.begin() as session:
            result = await session.execute(
                update(MemoryProposalRecord)
                .where(
                    MemoryProposalRecord.id == fact_id,
                    MemoryProposalRecord.owner_id == owner_id,
                    MemoryProposalRecord.status == ProposalStatus.PENDING.value,
                )
                .values(status=status.value, answered_at=utcnow(), memory_id=memory_id)
            )
            return affected(result) > 0

    async def saved_in_words(
        self, owner_id: int, conversation_id: int, subject: str | None, memory_id: str
    ) -> None:
        """Settle a pending fact a save (by subject) or an update (by memory) in words answered."""
        wanted = subject_key(subject) if subject is not None else None
        async with self._sessionmaker.begin() as session:
            pending = await session.scalars(
                select(MemoryProposalRecord).where(
                    MemoryProposalRecord.owner_id == owner_id,
                    MemoryProposalRecord.conversation_id == conversation_id,
                    MemoryProposalRecord.status == ProposalStatus.PENDING.value,
                )
            )
            for record in pending:
                if (
                    record.target_id == memory_id
                    if wanted is None
                    else record.target_id is None and subject_key(record.subject) == wanted
                ):
                    record.status = ProposalStatus.ACCEPTED.value
                    record.answered_at = utcnow()
                    record.memory_id = memory_id
