"""The web tools' blocks in the history a request sends: kept exactly, or told as text.

With the web tools offered, stored blocks go back as the API sent them. A web call the API
paused on is only continued while it is the newest message; later, a call without its result
is left out, as the API takes no server_tool_use without its result. Without the web tools
(WEB_TOOLS=off, refused, or the day's uses spent), the blocks become text and the citations
go, so the request holds nothing that needs the tools.
"""

from typing import cast

from bot.conversations.blocks import WEB_BLOCK_TYPES, Block, Content, text_block
from bot.conversations.web_blocks import web_block_text


def answered_web_calls(content: Content) -> Content:
    """Return an assistant message's content without web calls that have no result in it."""
    answered = {
        b["tool_use_id"]
        for b in content
        if b["type"] == "web_search_tool_result" or b["type"] == "web_fetch_tool_result"
    }
    return [b for b in content if b["type"] != "server_tool_use" or b["id"] in answered]


def _plain(block: Block) -> Block:
    """Return a block with no web parts: a web block as text, a text without citations."""
    if block["type"] in WEB_BLOCK_TYPES:
        return text_block(web_block_text(cast(dict, block)))
    if block["type"] == "text" and "citations" in block:
        return text_block(block["text"])
    return block


def web_blocks_as_text(content: Content) -> Content:
    """Return content with its web blocks as text and its citations dropped."""
    return [_plain(block) for block in content]
