"""What propose_memory tells the model: the question shown, or why nothing was asked."""

from collections.abc import Sequence

from memory.block import quoted
from memory.items import subject_key
from memory.proposals import AskingBound, NewFact, Proposal

MIXED_MEMBERS = (
    "Nothing was proposed: in a group one question is about one member (about, and the name "
    "its subjects start with) or about the whole group. Ask about one member's facts at a time."
)


def proposed(proposal: Proposal) -> str:
    """Say the bot asks the user about the facts with buttons, and what to do meanwhile."""
    shown = "; ".join(
        f"update [id:{f.target_id}] to {quoted(f.content)}" if f.target_id else quoted(f.content)
        for f in proposal.facts
    )
    whom = f" Only {proposal.about} can answer it." if proposal.about else ""
    return (
        f"Proposed, not saved: under your reply the bot shows the user {shown} with Remember "
        f"and No buttons (a toggle per fact when there are several).{whom} So don't ask about "
        "it in your reply and don't repeat it: finish your reply as you would. Don't save it "
        "now. The answer comes with the user's next message: a tap as a note in it, or words "
        "(a clear yes: call add_to_memory with these arguments, or update_memory for an "
        "update; anything else: save nothing). If that message does not answer it, the "
        "question expires with your reply to it: a no."
    )


def fact_refused(number: int, count: int, why: str) -> str:
    """Say one fact of a question cannot be asked about, so nothing was asked."""
    which = f"Fact {number} of {count}: " if count > 1 else ""
    return (
        f"Nothing was proposed. {which}{why} Call propose_memory again without it, or as "
        "the sentence says."
    )


def same_subjects(facts: Sequence[NewFact]) -> str | None:
    """Say two facts of one question have one subject (one memory per subject), if they do."""
    seen: set[str | None] = set()
    for fact in facts:
        key = fact.target_id or subject_key(fact.subject)
        if key in seen:
            return (
                f"Nothing was proposed: two facts have the subject {quoted(fact.subject)}. "
                "One memory per subject: put both in one fact's content."
            )
        seen.add(key)
    return None


def not_proposed(bound: AskingBound, limit: int) -> str:
    """Say which bound on asking refused a proposal, and what to do instead."""
    match bound:
        case AskingBound.SAME_REPLY:
            why = (
                "you already asked a memory question in this reply, and one question per reply "
                "is the most (it can carry several facts). Don't ask about this one now (a "
                "later natural pause may do)"
            )
        case AskingBound.UNANSWERED:
            why = (
                "your memory question is still unanswered: it is open until you answer this "
                "message, then it expires. Don't ask another in this reply, in words either"
            )
        case AskingBound.TOO_MANY:
            why = (
                f"you already asked {limit} memory questions in this conversation, the most "
                "allowed. Don't ask again in this conversation"
            )
        case AskingBound.DECLINED:
            why = (
                "the user declined to remember this, or left the question unanswered, in this "
                "conversation. Don't ask about it again in this conversation"
            )
    return f"Not proposed: {why}. Save only what the user asks you to remember."
