"""Keep a conversation's history under its token budget by summarising the older part."""

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import replace

from anthropic import (
    APIConnectionError,
    APIError,
    AsyncAnthropic,
    InternalServerError,
    RateLimitError,
)
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

from bot.agent.account import account_problem
from bot.agent.history.ledger import carried, memory_changes, open_question_lines
from bot.agent.history.unanswered import first_unanswered
from bot.conversations.content import block_text, is_tool_result
from bot.conversations.snapshot import ConversationState, Snapshot, StoredTurn
from bot.conversations.store import ConversationStore
from memory.proposals import ProposalStore

logger = logging.getLogger(__name__)


class ModelAway(Exception):
    """The model cannot answer now (an outage, or the account's problem): fold nothing yet."""


# Compact down to this share of the budget, so the cached prefix then lasts many turns.
KEEP_SHARE = 0.4
SUMMARY_MAX_TOKENS = 1024
# The transcript to fold ends with the assistant's last reply before the user's newest
# message: a memory question there has had no answer yet, and that message may be the yes.
OPEN_QUESTION_RULE = (
    "If the transcript ends with the assistant asking whether to remember something, that "
    "question is still open, not declined: the user's next message may answer it. End the "
    "summary with it word for word, after 'Still open:', with the fact it would save."
)
SUMMARY_INSTRUCTIONS = (
    "You maintain the running summary of a chat between a user and their assistant. "
    "Given the previous summary (if any) and the next part of the transcript, write an "
    "updated summary of at most 300 words: what was discussed, decisions, open questions, "
    "facts the user shared, and anything the assistant promised. Keep, word for word, every "
    "fact the user declined to have remembered (a question about remembering that they said "
    "no to, or talked past, counts as declined). "
    f"{OPEN_QUESTION_RULE} "
    "Leave out memory tool calls: they are listed separately. Write plain prose in the third "
    "person. Output only the summary."
)


def is_turn_start(turn: StoredTurn) -> bool:
    """Tell whether history may begin at this turn: a user message, not a tool result."""
    return turn.role == "user" and not is_tool_result(turn.content)


def choose_cut(turns: Sequence[StoredTurn], budget: int) -> int | None:
    """Return how many of the oldest turns to fold away, or None if under budget or no cut.

    Turns newer than the model's last answer are never folded: the model has not seen them.
    """
    if sum(t.tokens for t in turns) <= budget:
        return None
    cut = _cut_by_size(turns, budget)
    if cut is None:
        return None
    cut = min(cut, first_unanswered(turns))
    return cut or None


def _cut_by_size(turns: Sequence[StoredTurn], budget: int) -> int | None:
    """Return the cut that keeps the newest turns within the share of the budget, or None."""
    keep_target = int(budget * KEEP_SHARE)
    kept = 0
    cut = len(turns)
    for index in range(len(turns) - 1, 0, -1):
        kept += turns[index].tokens
        if kept > keep_target:
            break
        cut = index
    # Move forward to a turn that starts an exchange, so tool_use/tool_result pairs stay whole.
    while cut < len(turns) and not is_turn_start(turns[cut]):
        cut += 1
    if cut >= len(turns):
        # The newest message alone is over the share: keep at least the newest exchange.
        starts = [i for i, t in enumerate(turns) if is_turn_start(t) and i > 0]
        if not starts:
            return None
        cut = starts[-1]
    return cut


def transcript(turns: Sequence[StoredTurn]) -> str:
    """Render turns as plain text for the summariser."""
    return "\n".join(
        f"{turn.role}: {block_text(block)}" for turn in turns for block in turn.content
    )


def summary_request(
    model: str, previous: str | None, turns: Sequence[StoredTurn]
) -> MessageCreateParamsNonStreaming:
    """Return the messages.create arguments that ask for an updated summary."""
    previous_part = f"Previous summary:\n{previous}\n\n" if previous else ""
    return {
        "model": model,
        "max_tokens": SUMMARY_MAX_TOKENS,
        "system": SUMMARY_INSTRUCTIONS,
        "messages": [
            {
                "role": "user",
                "content": f"{previous_part}Transcript to fold in:\n{transcript(turns)}",
            }
        ],
    }


class Compactor:
    """Folds the older part of an over-budget history into the conversation's summary."""

    def __init__(
        self,
        client: AsyncAnthropic,
        model: str,
        conversations: ConversationStore,
        budget: int,
        proposals: ProposalStore | None = None,
    ):
        self._client = client
        self._model = model
        self._conversations = conversations
        self._budget = budget
        # Whose open memory questions the list names, so a later yes finds them.
        self._proposals = proposals

    async def _summarise(
        self, conversation_id: int, previous: str | None, folded: list[StoredTurn]
    ) -> str | None:
        """Return the new prose summary, or the previous one if the request is refused.

        Raises ModelAway when the model is away, so that nothing is folded this turn.
        """
        try:
            response = await self._client.messages.create(
                **summary_request(self._model, previous, folded)
            )
        except (APIConnectionError, RateLimitError, InternalServerError) as error:
            raise ModelAway(error) from error  # not the request at fault: the caller postpones
        except APIError as error:
            if account_problem(error) is not None:
                # A wrong key or no credits: dropping turns would lose them for nothing.
                raise ModelAway(error) from error
            # The request itself is refused: dropping the oldest turns beats blocking the user.
            logger.warning("summarising conversation %s failed: %s", conversation_id, error)
            return previous
        prose = "".join(b.text for b in response.content if b.type == "text").strip()
        return prose or previous

    async def _ledger(
        self, conversation: ConversationState, folded: Sequence[StoredTurn]
    ) -> tuple[str, ...]:
        """Return the list of changes: the earlier list's, the folded turns', open questions.

        The memory questions still open are tool calls, which the summary leaves out.
        """
        asked = (
            await self._proposals.open_questions(conversation.owner_id, conversation.id)
            if self._proposals is not None
            else []
        )
        return (
            *carried(conversation.summary_changes),
            *memory_changes(folded),
            *open_question_lines(asked),
        )

    async def compact_if_needed(
        self, snapshot: Snapshot, deadline: float | None = None
    ) -> Snapshot:
        """Compact the conversation when over budget; return it as it stands afterwards.

        Summarising still running at the deadline (the event loop's time) is postponed.
        """
        turns = snapshot.turns
        cut = choose_cut(turns, self._budget)
        if cut is None:
            return snapshot
        conversation = snapshot.conversation
        folded = turns[:cut]
        previous = conversation.summary
        try:
            async with asyncio.timeout_at(deadline):
                prose = await self._summarise(conversation.id, previous, folded)
        except (ModelAway, TimeoutError) as error:
            # The model is away (the SDK's retries ran out): keep everything, try next turn.
            logger.warning("summarising conversation %s postponed: %s", conversation.id, error)
            return snapshot
        # The memory changes are listed by code, not by the summariser, so none is lost.
        changes = await self._ledger(conversation, folded)
        await self._conversations.compact(conversation.id, prose, folded[-1].id, changes)
        logger.info(
            "compacted conversation %s: folded %d turns (%d tokens)",
            conversation.id,
            len(folded),
            sum(t.tokens for t in folded),
        )
        conversation = replace(conversation, summary=prose, summary_changes=changes)
        return replace(snapshot, conversation=conversation, turns=turns[cut:])
