"""The web tools' blocks in the history a request sends: kept exactly, or told as text.

With the web tools offered, stored blocks go back as the API sent them. A web call the API
paused on is only continued while it is the newest message; later, a call without its result
is left out, as the API takes no server_tool_use without its result. Without a web tool
(WEB_TOOLS=off, refused, the day's uses spent, or no share of what is left), its blocks
become text and the citations it made go, so the request holds nothing that needs it.
"""

from collections.abc import Collection, Mapping

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


# The tool whose call a stored block is, or made the citation: by the block's or its type.
_RESULT_TOOLS = {"web_search_tool_result": "web_search", "web_fetch_tool_result": "web_fetch"}


def _tool_of(block: Block) -> str:
    """Return the web tool a web block belongs to."""
    if block["type"] == "server_tool_use":
        return str(block["name"])
    return _RESULT_TOOLS[block["type"]]


def _citing_tool(citation: Mapping[str, object]) -> str:
    """Return the web tool whose result a stored citation points into."""
    # A search result is cited by its location; a read page is a document, cited by place.
    return "web_search" if citation.get("type") == "web_search_result_location" else "web_fetch"


def _plain(block: Block, offered: Collection[str]) -> Block:
    """Return a block without the parts of web tools not offered: as text, or uncited."""
    if block["type"] in WEB_BLOCK_TYPES:
        if _tool_of(block) in offered:
            return block
        return text_block(web_block_text(block))
    if block["type"] == "text" and "citations" in block:
        cited = [c for c in block["citations"] or () if _citing_tool(c) in offered]
        return {**block, "citations": cited} if cited else text_block(block["text"])
    return block


def web_blocks_as_text(content: Content, offered: Collection[str] = ()) -> Content:
    """Return content with the blocks and citations of web tools not offered as plain text."""
    return [_plain(block, offered) for block in content]
