"""What propose_memory tells the model: the proposal shown, or which bound on asking refused it."""

from memory.block import quoted
from memory.proposals import AskingBound, Proposal


def proposed(proposal: Proposal) -> str:
    """Say the bot asks the user about the memory with buttons, and what to do meanwhile."""
    return (
        f"Proposed, not saved: under your reply the bot shows the user {quoted(proposal.content)} "
        "with Remember and No buttons. So don't ask about it in your reply and don't repeat it: "
        "finish your reply as you would. Don't call add_to_memory for it now. The answer comes "
        "with the user's next message: a tap as a note in it, or words (a clear yes: call "
        "add_to_memory with these arguments; anything else: save nothing). If that message "
        "does not answer it, the question expires with your reply to it: a no."
    )


def not_proposed(bound: AskingBound, limit: int) -> str:
    """Say which bound on asking refused a proposal, and what to do instead."""
    match bound:
        case AskingBound.SAME_REPLY:
            why = (
                "you already proposed a memory in this reply, and one question per reply is "
                "the most. Don't ask about this one now (a later natural pause may do)"
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
                "conversation. Don't ask about it again"
            )
    return f"Not proposed: {why}. Save only what the user asks you to remember."
