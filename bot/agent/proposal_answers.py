"""The user's answers to the model's memory questions by button, and what the model is told.

A tap of Remember saves the proposed memory at once, through add_to_memory's own checks and
write (logged for Undo), without a model call; a tap of No records the decline. Either, and
an Undo of one of the model's changes, becomes a note the model reads in the user's next
message (bot.conversations.notes).
"""

from dataclasses import dataclass
from enum import StrEnum

from bot.conversations.notes import PendingNotes
from bot.conversations.snapshot import ChatThread
from memory.block import quoted
from memory.budget import MemoryFull
from memory.categories import Category
from memory.items import ChangeKind, MemoryChange, ProposalStatus, UndoResult
from memory.proposals import Proposal, ProposalStore
from memory.secret_text import secret_in
from memory.store import MemoryStore
from memory.switch import MemorySwitch
from memory.tools import ToolContext
from memory.tools.args import AddToMemoryArgs
from memory.tools.memory_tools import add_to_memory
from memory.tools.subjects import is_speaker, person_of


class TapResult(StrEnum):
    """What a tap of Remember or No came to."""

    SAVED = "saved"
    DECLINED = "declined"
    # Not this owner's proposal, or none with that id: "not found", never a leak.
    GONE = "gone"
    ANSWERED = "answered"  # answered before (a tap, or a yes in words)
    MEMORY_OFF = "memory_off"  # kept waiting: a tap after /memory on saves it
    FULL = "full"  # kept waiting: a tap after deleting some saves it
    SUBJECT_TAKEN = "subject_taken"  # a memory has its subject now: it expires
    SECRET = "secret"  # it holds a secret (asked before secrets were refused): it expires
    NOT_YOURS = "not_yours"  # in a group, a member it is not about and who did not say it
    # Left unanswered by the user's next message: it expired (memory/proposal_expiry.py).
    EXPIRED = "expired"


@dataclass(frozen=True)
class Member:
    """The group member who tapped: their Telegram id and name as the group sees it."""

    user_id: int
    name: str


def about_whom(proposal: Proposal) -> str | None:
    """Return the member a question is about: "Ann" of "Ann: diet", or a person's name."""
    if (name := person_of(proposal.subject)) is not None:
        return name
    return proposal.subject if proposal.category is Category.PERSON else None


def may_answer(proposal: Proposal, said_by: int | None, member: Member) -> bool:
    """Tell whether a member may answer a group's question: the one it is about, or who said it.

    A fact about someone is saved only with their agreement (the instructions' rule, kept by
    code here); the one who said it may take it back or confirm it.
    """
    if said_by is not None and member.user_id == said_by:
        return True
    about = about_whom(proposal)
    if about is not None and is_speaker(about, member.name):
        return True
    # A question whose sayer and subject are both unknown is left to anyone, not to no one.
    return said_by is None and about is None


@dataclass(frozen=True)
class Tap:
    """The outcome of a tap: what came of it, the proposal, and the change it made."""

    result: TapResult
    proposal: Proposal | None = None
    change: MemoryChange | MemoryFull | None = None


def undone_note(result: UndoResult) -> str:
    """Tell the model the user undid one of its changes, and where the memory stands."""
    item = result.after
    match result.kind:
        case ChangeKind.ADDED:
            done = f"your save of [id:{item.id}] {quoted(item.content)}: it is not remembered"
        case ChangeKind.UPDATED:
            done = f"your update of [id:{item.id}]: it is back to {quoted(item.content)}"
        case ChangeKind.FORGOTTEN:
            done = f"your forget of [id:{item.id}]: {quoted(item.content)} is remembered again"
    return f"[Since your last reply the user tapped Undo on {done}. Don't redo it unasked.]"


class ProposalAnswers:
    """Answers the model's memory questions by button, and tells the model of Undo taps."""

    def __init__(
        self,
        proposals: ProposalStore,
        store: MemoryStore,
        switch: MemorySwitch,
        notes: PendingNotes,
    ):
        self._store = store
        self._switch = switch
        self.proposals = proposals
        self.notes = notes

    async def _pending(
        self, owner_id: int, proposal_id: int, member: Member | None
    ) -> Tap | Proposal:
        """Return the owner's proposal while it waits for this member's answer, else the outcome.

        member: who tapped in a group (None in a private chat, where the owner is the user).
        """
        proposal = await self.proposals.find(owner_id, proposal_id)
        if proposal is None:
            return Tap(TapResult.GONE)
        if proposal.status is ProposalStatus.EXPIRED:
            return Tap(TapResult.EXPIRED, proposal)
        if proposal.status is not ProposalStatus.PENDING:
            return Tap(TapResult.ANSWERED, proposal)
        if member is not None:
            turn = proposal.turn_id
            said_by = None if turn is None else await self.notes.sender_of(owner_id, turn)
            if not may_answer(proposal, said_by, member):
                return Tap(TapResult.NOT_YOURS, proposal)
        return proposal

    async def remember(self, owner_id: int, proposal_id: int, member: Member | None = None) -> Tap:
        """Save the proposed memory now, as add_to_memory would, and tell the model."""
        proposal = await self._pending(owner_id, proposal_id, member)
        if isinstance(proposal, Tap):
            return proposal
        if (secret := secret_in(proposal.content, proposal.subject)) is not None:
            done = f"nothing was saved: it looks like {secret}, and secrets are never kept."
            await self._answer(proposal, ProposalStatus.EXPIRED, done)
            return Tap(TapResult.SECRET, proposal)
        if not await self._switch.is_on(owner_id):
            return Tap(TapResult.MEMORY_OFF, proposal)
        ctx = ToolContext(
            self._store,
            self._switch,
            owner_id,
            proposal.conversation_id,
            memory_limit=self._store.limit,
        )
        args = AddToMemoryArgs(
            content=proposal.content, category=proposal.category, subject=proposal.subject
        )
        outcome = await add_to_memory(ctx, args)
        if outcome.refusal is not None:
            return Tap(TapResult.FULL, proposal, outcome.refusal)
        if outcome.change is None:
            done = f"nothing was saved. {outcome.content}"
            await self._answer(proposal, ProposalStatus.EXPIRED, done)
            return Tap(TapResult.SUBJECT_TAKEN, proposal)
        saved = outcome.change.item
        await self._answer(
            proposal, ProposalStatus.ACCEPTED, f"saved as [id:{saved.id}].", saved.id
        )
        return Tap(TapResult.SAVED, proposal, outcome.change)

    async def decline(self, owner_id: int, proposal_id: int, member: Member | None = None) -> Tap:
        """Record the user's No, and tell the model not to ask about it again."""
        proposal = await self._pending(owner_id, proposal_id, member)
        if isinstance(proposal, Tap):
            return proposal
        done = "not saved. Don't ask about it again in this conversation."
        if not await self._answer(proposal, ProposalStatus.DECLINED, done):
            return Tap(TapResult.ANSWERED, proposal)
        return Tap(TapResult.DECLINED, proposal)

    async def _answer(
        self, proposal: Proposal, status: ProposalStatus, done: str, memory_id: str | None = None
    ) -> bool:
        """Record the answer and leave the model its note; tell whether it was still pending."""
        owner_id = proposal.owner_id
        if not await self.proposals.answer(owner_id, proposal.id, status, memory_id):
            return False
        button = "No" if status is ProposalStatus.DECLINED else "Remember"
        asked = f"your memory question {quoted(proposal.content)}"
        note = f"[Since your last reply the user tapped {button} on {asked}: {done}]"
        await self.notes.add(owner_id, proposal.conversation_id, note)
        return True

    async def undone(self, place: ChatThread, owner_id: int, result: UndoResult) -> None:
        """Tell the model, in the chat's open conversation, that the user undid its change."""
        await self.notes.add_to_open(place, owner_id, undone_note(result))
