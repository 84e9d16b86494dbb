"""A memory question the user's next message leaves unanswered expires: unanswered means no.

One behaviour, said alike by the instructions (rule UNANSWERED), propose_memory's texts and the
buttons: the question stays open while the model answers the user's next message (a yes in
words saves it then, a tap at any time before); once that reply is done and it is still
pending, it expires. Its buttons then say it expired, it no longer blocks a later question,
and the same fact is not asked again in the conversation (memory/proposals.py counts it as
declined).
"""

from sqlalchemy import or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memory.items import ProposalStatus
from memory.models import MemoryProposalRecord, utcnow

# The answers after which a fact is not asked about again: a no, or no answer (expired).
NOT_ASKED_AGAIN = frozenset({ProposalStatus.DECLINED, ProposalStatus.EXPIRED})


async def expire_unanswered(
    sessionmaker: async_sessionmaker[AsyncSession],
    owner_id: int,
    conversation_id: int,
    answered_turn_id: int,
) -> int:
    """Expire the conversation's questions asked before the message just answered; count them.

    A question is all its facts (question_id): it expires whole, every fact of it.
    """
    Record = MemoryProposalRecord
    async with sessionmaker.begin() as session:
        open_rows = await session.execute(
            select(Record.id, Record.question_id).where(
                Record.owner_id == owner_id,
                Record.conversation_id == conversation_id,
                Record.status == ProposalStatus.PENDING.value,
                or_(Record.turn_id.is_(None), Record.turn_id < answered_turn_id),
            )
        )
        questions = {question_id or row_id for row_id, question_id in open_rows}
        if not questions:
            return 0
        await session.execute(
            update(Record)
            .where(
                Record.owner_id == owner_id,
                Record.status == ProposalStatus.PENDING.value,
                or_(Record.question_id.in_(questions), Record.id.in_(questions)),
            )
            .values(status=ProposalStatus.EXPIRED.value, answered_at=utcnow())
        )
        return len(questions)
