"""Read a model response: the content to store, the reply text, and why it stopped."""

import itertools
import logging
from typing import cast

from anthropic.types import Message, TextBlock

from bot.agent.citations import visible_texts, without_markers
from bot.conversations.blocks import WEB_BLOCK_TYPES, Block, Content, text_block

logger = logging.getLogger(__name__)

MAX_TOKENS_NOTE = "(My reply was cut off because it reached the length limit.)"
REFUSAL_NOTE = "(I can't help with that request.)"
TOOL_LIMIT_NOTE = "(I stopped after too many memory operations in one turn.)"
PAUSED_NOTE = "(I stopped before finishing: looking this up took too many steps.)"


def stored_content(message: Message) -> Content:
    """Return the assistant content blocks to store and send back, as the user saw them.

    A run of text blocks (split where the API cited a search result) is stored as one text
    block, without its citations and markers: the cited ids are kept apart (the turn's
    sources), and a citation sent back could name a search result compaction took away.
    """
    blocks: Content = []
    for is_text, run in itertools.groupby(message.content, key=lambda b: b.type == "text"):
        if is_text:
            blocks += _text_run([block for block in run if block.type == "text"])
            continue
        for block in run:
            if block.type in WEB_BLOCK_TYPES:
                # The web tools' calls and results, exactly as sent: the API reads them back.
                blocks.append(cast(Block, block.to_dict(mode="json")))
            elif block.type == "tool_use":
                # The API only accepts object inputs when the history is sent back.
                tool_input = block.input if isinstance(block.input, dict) else {}
                blocks.append(
                    {"type": "tool_use", "id": block.id, "name": block.name, "input": tool_input}
                )
            else:
                # Only text, tool calls and web blocks come back: requests turn on no thinking.
                logger.warning("left out a response block of type %s", block.type)
    return blocks


def _text_run(run: list[TextBlock]) -> Content:
    """Return a run of text blocks to store: one text as shown, or, cited from the web, as sent.

    Memory citations and markers never stay (the turn's sources keep the ids): a citation of a
    search result names it by its place in the request, which compaction can take away. Web
    citations are replayed as sent: later turns cite the same results, and the API checks them.
    """
    if not any(c.type != "search_result_location" for b in run for c in b.citations or ()):
        text = without_markers("".join(block.text for block in run))
        return [text_block(text)] if text.strip() else []
    kept: Content = []
    for block in run:
        text = without_markers(block.text)
        web = [c for c in block.citations or () if c.type != "search_result_location"]
        if not text.strip():
            continue
        if not web:
            kept.append(text_block(text))
            continue
        sent = cast(Block, block.to_dict(mode="json"))
        cited = [c.to_dict(mode="json") for c in web]
        kept.append(cast(Block, {**sent, "text": text, "citations": cited}))
    return kept


def reply_text(message: Message) -> str:
    """Join the text of a model response as the user sees it: without citation markers."""
    return "\n\n".join(visible_texts(message.content))


def closing_note(message: Message, out_of_rounds: bool, has_text: bool) -> str | None:
    """Return the note that explains why the model stopped where it did, if it needs one."""
    if message.stop_reason == "tool_use" and out_of_rounds:
        return TOOL_LIMIT_NOTE
    if message.stop_reason == "pause_turn" and out_of_rounds:
        return PAUSED_NOTE
    if message.stop_reason == "max_tokens":
        return MAX_TOKENS_NOTE
    if message.stop_reason == "refusal" and not has_text:
        return REFUSAL_NOTE
    return None
