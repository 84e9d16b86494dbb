"""The model's memory question with Remember and No buttons, and their answers: pure builders."""

from html import escape

from bot.agent.proposal_answers import Tap, TapResult
from bot.telegram.callbacks import AnswerProposal, encode
from bot.telegram.ui import Button, View
from memory.proposals import Proposal

REMEMBER_BUTTON = "Remember"
NO_BUTTON = "No"
SAVED_ALERT = "Saved."
DECLINED_ALERT = "Not saved."
REMEMBERED_LINE = "Remembered."
DECLINED_LINE = "Not remembered."
EXPIRED_LINE = "Expired: not remembered."
# A tap that saves nothing says why, and what would make the next tap work.
TAP_ALERTS = {
    TapResult.MEMORY_OFF: (
        "Memory is off, so nothing was saved. Turn it on with /memory on, then tap Remember again."
    ),
    TapResult.FULL: (
        "My memory is full, so nothing was saved. Delete some with /memory, then tap Remember "
        "again."
    ),
    TapResult.NOT_YOURS: (
        "Only the member this is about, or who said it, can answer it. Nothing was saved."
    ),
    TapResult.EXPIRED: (
        "This question expired when the chat moved on without an answer, so nothing was "
        "saved. Tell me if I should remember it."
    ),
    TapResult.SECRET: (
        "Not saved: it looks like a secret, and I never keep secrets. A password manager is "
        "the place for it."
    ),
}


def question(proposal: Proposal) -> View:
    """Ask whether to remember the proposed memory, showing exactly what would be saved."""
    return View(
        f"Remember this? '{escape(proposal.content)}'",
        (
            (
                Button(REMEMBER_BUTTON, encode(AnswerProposal(proposal.id, True))),
                Button(NO_BUTTON, encode(AnswerProposal(proposal.id, False))),
            ),
        ),
    )


def answered_alert(tap: Tap) -> str:
    """Say a question was answered before, and how."""
    if tap.proposal is not None and tap.proposal.memory_id is not None:
        return "Already answered: it was saved."
    return "Already answered: it was not saved."


def subject_taken_alert(tap: Tap) -> str:
    """Say a memory with the proposal's subject came first, so nothing was saved."""
    subject = tap.proposal.subject if tap.proposal else ""
    return (
        f"Not saved: I already remember something about '{subject}'. Tell me if it should change."
    )
