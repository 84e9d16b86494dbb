"""Read a model response: the content to store, the reply text, and why it stopped."""

import logging
from collections.abc import Sequence
from typing import cast

from anthropic.types import ContentBlock, Message

from bot.conversations.blocks import WEB_BLOCK_TYPES, Block, Content, text_block

logger = logging.getLogger(__name__)

MAX_TOKENS_NOTE = "(My reply was cut off because it reached the length limit.)"
REFUSAL_NOTE = "(I can't help with that request.)"
TOOL_LIMIT_NOTE = "(I stopped after too many memory operations in one turn.)"
PAUSED_NOTE = "(I stopped before finishing: looking this up took too many steps.)"


def stored_content(message: Message) -> Content:
    """Return the assistant content blocks to store and send back, without empty text."""
    blocks: Content = []
    for block in message.content:
        if block.type == "text" and block.citations:
            # Replayed as sent: later turns cite the same results, and the API checks them.
            blocks.append(cast(Block, block.to_dict(mode="json")))
        elif block.type == "text":
            if block.text:
                blocks.append(text_block(block.text))
        elif block.type in WEB_BLOCK_TYPES:
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


def joined_text(content: Sequence[ContentBlock]) -> str:
    """Join a response's texts: neighbours as one (citations split a sentence), runs by blanks."""
    runs: list[str] = []
    run: list[str] | None = None
    for block in content:
        if block.type != "text":
            run = None
        elif run is None:
            run = [block.text]
            runs.append("")
        else:
            run.append(block.text)
        if run is not None:
            runs[-1] = "".join(run)
    return "\n\n".join(text for text in runs if text.strip())


def reply_text(message: Message) -> str:
    """Join the text blocks of a model response."""
    return joined_text(message.content)


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
