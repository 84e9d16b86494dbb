"""The model's memory question with Remember and No buttons, and their answers: pure builders."""

from html import escape

from bot.agent.proposal_answers import Tap, TapResult
from bot.telegram.callbacks import AnswerProposal, ToggleFact, encode
from bot.telegram.ui import Button, View
from memory.proposals import Proposal, ProposedFact

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
    TapResult.NOT_YOURS: ("Only the member this is about can answer it. Nothing was saved."),
    TapResult.EXPIRED: (
        "This question expired when the chat moved on without an answer, so nothing was "
        "saved. Tell me if I should remember it."
    ),
    TapResult.SECRET: (
        "Not saved: it looks like a secret, and I never keep secrets. A password manager is "
        "the place for it."
    ),
}


# A toggle's label shows this much of its fact; the message above shows it whole.
TOGGLE_LABEL = 48
CHOSEN, NOT_CHOSEN = "\u2705", "\u2b1c"


def _fact_line(fact: ProposedFact) -> str:
    """Show a fact as it would be saved: an update as old -> new."""
    if fact.target_id is not None and fact.previous is not None:
        return f"'{escape(fact.previous)}' \u2192 '{escape(fact.content)}'"
    return f"'{escape(fact.content)}'"


def _toggle(number: int, fact: ProposedFact) -> Button:
    """Return a fact's toggle: on (saved by Remember) or off."""
    mark = CHOSEN if fact.chosen else NOT_CHOSEN
    words = (
        fact.content
        if len(fact.content) <= TOGGLE_LABEL
        else fact.content[:TOGGLE_LABEL] + "\u2026"
    )
    return Button(f"{mark} {number}. {words}", encode(ToggleFact(fact.id)))


def question(proposal: Proposal) -> View:
    """Ask whether to remember the proposed facts, showing exactly what would be saved.

    One fact: its line with Remember and No. Several: a numbered line and a toggle each, then
    Remember (saves the toggled-on ones) and No. An update shows old -> new.
    """
    answer = (
        Button(REMEMBER_BUTTON, encode(AnswerProposal(proposal.id, True))),
        Button(NO_BUTTON, encode(AnswerProposal(proposal.id, False))),
    )
    facts = proposal.facts
    if len(facts) == 1:
        [fact] = facts
        ask = "Update this memory?" if fact.target_id else "Remember this?"
        return View(f"{ask} {_fact_line(fact)}", (answer,))
    lines = [f"{n}. {_fact_line(f)}" for n, f in enumerate(facts, 1)]
    toggles = tuple((_toggle(n, f),) for n, f in enumerate(facts, 1))
    return View("\n".join(["Remember these?", *lines]), (*toggles, answer))


def answered_alert(tap: Tap) -> str:
    """Say a question was answered before, and how."""
    if tap.proposal is not None and tap.proposal.saved_ids:
        return "Already answered: it was saved."
    return "Already answered: it was not saved."


def subject_taken_alert(tap: Tap) -> str:
    """Say a memory with the proposal's subject came first, so nothing was saved."""
    subjects = ", ".join(f"'{f.subject}'" for f in tap.proposal.facts) if tap.proposal else ""
    return f"Not saved: I already remember something about {subjects}. Tell me if it should change."
