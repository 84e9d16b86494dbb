"""Read a model response: the content to store, the reply text, and why it stopped."""

import logging

from anthropic.types import Message

from bot.conversations.blocks import Content, text_block

logger = logging.getLogger(__name__)

MAX_TOKENS_NOTE = "(My reply was cut off because it reached the length limit.)"
REFUSAL_NOTE = "(I can't help with that request.)"
TOOL_LIMIT_NOTE = "(I stopped after too many memory operations in one turn.)"


def stored_content(message: Message) -> Content:
    """Return the assistant content blocks to store and send back, without empty text."""
    blocks: Content = []
    for block in message.content:
        if block.type == "text":
            if block.text:
                blocks.append(text_block(block.text))
        elif block.type == "tool_use":
            # The API only accepts object inputs when the history is sent back.
            tool_input = block.input if isinstance(block.input, dict) else {}
            blocks.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": tool_input}
            )
        else:
            # Only text and tool calls come back: requests turn on no thinking, no server tools.
            logger.warning("left out a response block of type %s", block.type)
    return blocks


def reply_text(message: Message) -> str:
    """Join the text blocks of a model response."""
    return "\n\n".join(b.text for b in message.content if b.type == "text" and b.text.strip())


def closing_note(message: Message, out_of_rounds: bool, has_text: bool) -> str | None:
    """Return the note that explains why the model stopped where it did, if it needs one."""
    if message.stop_reason == "tool_use" and out_of_rounds:
        return TOOL_LIMIT_NOTE
    if message.stop_reason == "max_tokens":
        return MAX_TOKENS_NOTE
    if message.stop_reason == "refusal" and not has_text:
        return REFUSAL_NOTE
    return None
