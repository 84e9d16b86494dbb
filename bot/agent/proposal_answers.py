"""The user's answers to the model's memory questions by button, and what the model is told.

A tap of Remember saves the question's chosen facts at once, through add_to_memory's own
checks and write (an update through the same write as update_memory), each logged for Undo,
without a model call; a fact toggled off, and a tap of No, are declined. Either, and an Undo
of one of the model's changes, becomes a note the model reads in the user's next message
(bot.conversations.notes). In a group only the member a question is about may answer it.
"""

from dataclasses import dataclass
from enum import StrEnum

from bot.conversations.notes import PendingNotes
from bot.conversations.snapshot import ChatThread
from memory.block import quoted
from memory.budget import MemoryFull
from memory.items import (
    ChangeKind,
    MemoryChange,
    MemoryNotFound,
    ProposalStatus,
    UndoResult,
    UpdateMemory,
)
from memory.proposals import Proposal, ProposalStore, ProposedFact
from memory.secret_text import secret_in
from memory.store import MemoryStore
from memory.switch import MemorySwitch
from memory.tools import ToolContext
from memory.tools.args import AddToMemoryArgs
from memory.tools.memory_tools import add_to_memory
from memory.tools.subjects import is_speaker


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
    NOT_YOURS = "not_yours"  # in a group, a member it is not about
    # Left unanswered by the user's next message: it expired (memory/proposal_expiry.py).
    EXPIRED = "expired"
    TOGGLED = "toggled"  # a fact's toggle flipped: the question is shown again


@dataclass(frozen=True)
class Member:
    """The group member who tapped: their Telegram id and name as the group sees it."""

    user_id: int
    name: str


def may_answer(proposal: Proposal, member: Member) -> bool:
    """Tell whether a group member may answer a question: only the member it is about.

    A fact about someone is saved only with their agreement (the instructions' rule, kept by
    code here); a question about the whole group (about None) is any member's to answer.
    """
    return proposal.about is None or is_speaker(proposal.about, member.name)


@dataclass(frozen=True)
class Tap:
    """The outcome of a tap: what came of it, the question, and the changes it made."""

    result: TapResult
    proposal: Proposal | None = None
    changes: tuple[MemoryChange | MemoryFull, ...] = ()


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
        self, owner_id: int, proposal: Proposal | None, member: Member | None
    ) -> Tap | Proposal:
        """Return the owner's question while it waits for this member's answer, else the outcome.

        member: who tapped in a group (None in a private chat, where the owner is the user).
        """
        if proposal is None:
            return Tap(TapResult.GONE)
        if proposal.status is ProposalStatus.EXPIRED:
            return Tap(TapResult.EXPIRED, proposal)
        if proposal.status is not ProposalStatus.PENDING:
            return Tap(TapResult.ANSWERED, proposal)
        if member is not None and not may_answer(proposal, member):
            return Tap(TapResult.NOT_YOURS, proposal)
        return proposal

    async def toggle(self, owner_id: int, fact_id: int, member: Member | None = None) -> Tap:
        """Flip one fact's toggle of a waiting question; return the question as it now is."""
        found = await self.proposals.find_by_fact(owner_id, fact_id)
        proposal = await self._pending(owner_id, found, member)
        if isinstance(proposal, Tap):
            return proposal
        if not await self.proposals.toggle(owner_id, fact_id):
            return Tap(TapResult.ANSWERED, proposal)
        return Tap(TapResult.TOGGLED, await self.proposals.find(owner_id, proposal.id))

    async def remember(self, owner_id: int, proposal_id: int, member: Member | None = None) -> Tap:
        """Save the question's chosen facts now, as add_to_memory would, and tell the model."""
        found = await self.proposals.find(owner_id, proposal_id)
        proposal = await self._pending(owner_id, found, member)
        if isinstance(proposal, Tap):
            return proposal
        if not await self._switch.is_on(owner_id):
            return Tap(TapResult.MEMORY_OFF, proposal)
        ctx = ToolContext(
            self._store,
            self._switch,
            owner_id,
            proposal.conversation_id,
            memory_limit=self._store.limit,
        )
        changes: list[MemoryChange | MemoryFull] = []
        said: list[str] = []
        results: list[TapResult] = []
        waiting = [f for f in proposal.facts if f.status is ProposalStatus.PENDING]
        for fact in waiting:
            if not fact.chosen:
                await self.proposals.answer(owner_id, fact.id, ProposalStatus.DECLINED)
                said.append(f"{quoted(fact.content)}: toggled off, not saved")
                continue
            result, line, change = await self._save(ctx, fact)
            results.append(result)
            if change is not None:
                changes.append(change)
            if result is TapResult.FULL:
                break  # kept waiting: a tap after deleting some saves the rest
            said.append(line)
        if said:
            await self._note(proposal, "Remember", "; ".join(said))
        result = next(
            (r for r in (TapResult.SAVED, TapResult.FULL) if r in results),
            results[0] if results else TapResult.DECLINED,
        )
        return Tap(result, await self.proposals.find(owner_id, proposal.id), tuple(changes))

    async def _save(
        self, ctx: ToolContext, fact: ProposedFact
    ) -> tuple[TapResult, str, MemoryChange | MemoryFull | None]:
        """Save (or update) one chosen fact; return what came of it and the model's line."""
        owner_id = ctx.owner_id
        if (secret := secret_in(fact.content, fact.subject)) is not None:
            await self.proposals.answer(owner_id, fact.id, ProposalStatus.EXPIRED)
            line = f"nothing was saved: it looks like {secret}, and secrets are never kept."
            return TapResult.SECRET, f"{quoted(fact.content)}: {line}", None
        if fact.target_id is not None:
            try:
                change = await self._store.apply_undoable(
                    owner_id, UpdateMemory(fact.target_id, fact.content), ctx.conversation_id
                )
            except MemoryNotFound:
                await self.proposals.answer(owner_id, fact.id, ProposalStatus.EXPIRED)
                line = f"[id:{fact.target_id}] is gone, so nothing was updated."
                return TapResult.SUBJECT_TAKEN, f"{quoted(fact.content)}: {line}", None
            await self.proposals.answer(owner_id, fact.id, ProposalStatus.ACCEPTED, change.item.id)
            return TapResult.SAVED, f"{quoted(fact.content)}: updated [id:{change.item.id}]", change
        args = AddToMemoryArgs(content=fact.content, category=fact.category, subject=fact.subject)
        outcome = await add_to_memory(ctx, args)
        if outcome.refusal is not None:
            return TapResult.FULL, "", outcome.refusal
        if outcome.change is None:
            await self.proposals.answer(owner_id, fact.id, ProposalStatus.EXPIRED)
            line = f"nothing was saved. {outcome.content}"
            return TapResult.SUBJECT_TAKEN, f"{quoted(fact.content)}: {line}", None
        saved = outcome.change.item.id
        await self.proposals.answer(owner_id, fact.id, ProposalStatus.ACCEPTED, saved)
        return TapResult.SAVED, f"{quoted(fact.content)}: saved as [id:{saved}]", outcome.change

    async def decline(self, owner_id: int, proposal_id: int, member: Member | None = None) -> Tap:
        """Record the user's No for every fact, and tell the model not to ask about them again."""
        found = await self.proposals.find(owner_id, proposal_id)
        proposal = await self._pending(owner_id, found, member)
        if isinstance(proposal, Tap):
            return proposal
        declined = [
            f
            for f in proposal.facts
            if await self.proposals.answer(owner_id, f.id, ProposalStatus.DECLINED)
        ]
        if not declined:
            return Tap(TapResult.ANSWERED, proposal)
        facts = "; ".join(quoted(f.content) for f in declined)
        done = f"{facts}: not saved. Don't ask about it again in this conversation."
        await self._note(proposal, "No", done)
        return Tap(TapResult.DECLINED, proposal)

    async def _note(self, proposal: Proposal, button: str, done: str) -> None:
        """Leave the model its note of what the user's tap did."""
        note = f"[Since your last reply the user tapped {button} on your memory question: {done}.]"
        await self.notes.add(proposal.owner_id, proposal.conversation_id, note)

    async def undone(self, place: ChatThread, owner_id: int, result: UndoResult) -> None:
        """Tell the model, in the chat's open conversation, that the user undid its change."""
        await self.notes.add_to_open(place, owner_id, undone_note(result))
