"""A tidy pass: duplicates by code, the rest by one model call, validated whole, kept as a plan."""

import logging
from dataclasses import dataclass, field
from datetime import date, datetime, tzinfo
from enum import StrEnum
from functools import partial

from anthropic import APIError, AsyncAnthropic

from bot.upkeep.tidy_request import ask_for_plan, plan_request
from memory.batches.store import BatchStore
from memory.batches.values import BatchKind, BatchState, digest_of
from memory.items import MemoryItem
from memory.plan_lines import TidyLine
from memory.store import MemoryStore
from memory.tidy.dupes import duplicate_lines
from memory.tidy.plan import PlanLine, PlanRejected, TidyPlan, max_changes, validate_plan

logger = logging.getLogger(__name__)


class PassResult(StrEnum):
    """How a pass ended."""

    PROPOSED = "proposed"
    NOTHING_NEW = "nothing_new"  # nothing changed since the last pass: no model call
    NOTHING_TO_DO = "nothing_to_do"
    REJECTED = "rejected"
    MODEL_FAILED = "model_failed"


@dataclass(frozen=True)
class PassOutcome:
    """What a pass did: its result, its batch, why it was rejected, what it cost."""

    result: PassResult
    batch_id: int | None = None
    problem: str | None = None
    tokens: int = 0
    lines: list[TidyLine] = field(default_factory=list)


def stored_line(line: PlanLine, by_id: dict[str, MemoryItem]) -> TidyLine:
    """Return a plan line as the batch keeps it: with the versions and texts it saw."""
    ids = [line.memory_id, *line.merged_ids]
    return TidyLine(
        action=line.action,
        memory_id=line.memory_id,
        merged_ids=line.merged_ids,
        content=line.content,
        reason=line.reason,
        versions={memory_id: by_id[memory_id].version for memory_id in ids},
        texts={memory_id: by_id[memory_id].content for memory_id in ids},
        skip=False,
    )


class TidyService:
    """Runs tidy passes for owners: at most one model call each, within a token cap."""

    def __init__(
        self,
        client: AsyncAnthropic,
        model: str,
        store: MemoryStore,
        batches: BatchStore,
        token_cap: int,
    ):
        self._client = client
        self._model = model
        self._store = store
        self.batches = batches
        self.token_cap = token_cap

    async def run(
        self, owner_id: int, now: datetime, zone: tzinfo, *, automatic: bool = False
    ) -> PassOutcome:
        """Propose a plan for the owner's memories, unless nothing changed since the last pass."""
        items = await self._store.list_active(owner_id)
        digest = digest_of(items)
        if await self.batches.last_digest(owner_id) == digest:
            return PassOutcome(PassResult.NOTHING_NEW)
        record = partial(
            self.batches.record,
            owner_id,
            BatchKind.TIDY,
            digest=digest,
            at=now,
            automatic=automatic,
        )
        tokens = 0
        try:
            lines, tokens = await self._plan(items, now.astimezone(zone).date())
        except PlanRejected as error:
            await record(BatchState.REJECTED, [], tokens=error.tokens)
            return PassOutcome(PassResult.REJECTED, problem=str(error), tokens=error.tokens)
        except APIError as error:
            logger.warning("tidy pass for owner %s: the model call failed: %s", owner_id, error)
            return PassOutcome(PassResult.MODEL_FAILED)
        by_id = {item.id: item for item in items}
        stored = [stored_line(line, by_id) for line in lines]
        state = BatchState.PROPOSED if stored else BatchState.EMPTY
        batch_id = await record(state, stored, tokens=tokens)
        result = PassResult.PROPOSED if stored else PassResult.NOTHING_TO_DO
        return PassOutcome(result, batch_id, tokens=tokens, lines=stored)

    async def _plan(self, items: list[MemoryItem], today: date) -> tuple[list[PlanLine], int]:
        """Return the code's merges and the model's changes, validated whole, and the tokens.

        Raises PlanRejected (with the tokens spent) when any line breaks a rule.
        """
        room = max_changes(len(items))
        # More duplicates than one plan may hold: the rest wait for the next pass.
        lines = duplicate_lines(items)[:room]
        merged = {memory_id for line in lines for memory_id in line.merged_ids}
        rest = [item for item in items if item.id not in merged]
        tokens = 0
        if len(lines) < room and sum(not item.pinned for item in rest) >= 2:
            room -= len(lines)
            request, covered = plan_request(self._model, rest, today, self.token_cap, room)
            asked = await ask_for_plan(self._client, request, covered)
            logger.info("tidy pass: %d memories, %d tokens", covered, asked.tokens)
            lines, tokens = lines + asked.plan.changes, asked.tokens
        try:
            validate_plan(TidyPlan(changes=lines), items)
        except PlanRejected as error:
            error.tokens = tokens
            raise
        return lines, tokens
