"""Figure 16: what a reply's sources cost in tokens per turn.

A search's memories go to the model as search_result blocks (a header text, then per memory
its source, title and content) instead of one text of lines; block memories are cited by
markers the model writes, and the instructions gain the citing rule. Counted with cl100k
(memory/tokens.py), as figure 4: the search result's text fields, and as an upper bound its
JSON (how the API frames a search_result block is not public; cited_text is never counted).
"""

import json
from datetime import UTC
from pathlib import Path

from bot.agent.instructions import STATIC_INSTRUCTIONS
from bot.agent.tool_calls import result_content
from memory.block import quoted
from memory.items import MemoryItem
from memory.tokens import count_tokens
from memory.tools import FoundMemory, ToolOutcome
from memory.tools.texts import found_memories, found_title
from tests.perf.common import Config, Row, command
from tests.perf.data import memory_items

SEARCH_RESULTS = 10
RULE_START = "When a sentence of your reply uses a memory"
RULE_END = "(it is cited by itself). "


def plain_result(query: str, items: list[MemoryItem]) -> str:
    """Return a search's result as the plain text of lines it was before search results."""
    lines = [found_memories(query, len(items))]
    for item in items:
        subject = f", subject {quoted(item.subject)}" if item.subject else ""
        changed = item.updated_at.astimezone(UTC).strftime("%Y-%m-%d")
        lines.append(
            f"- [id:{item.id}] {item.category.value}{subject}, changed {changed}, archived: "
            f"{quoted(item.content)}"
        )
    return "\n".join(lines)


def search_result_tokens(query: str, items: list[MemoryItem]) -> tuple[int, int]:
    """Return the tokens of a search's result as search_result blocks: text fields, JSON."""
    found = tuple(
        FoundMemory(item.id, found_title(item, False, UTC), item.content) for item in items
    )
    content = result_content(ToolOutcome(found_memories(query, len(items)), found=found))
    assert isinstance(content, list)
    fields = 0
    for block in content:
        if block["type"] == "text":
            fields += count_tokens(block["text"])
        elif block["type"] == "search_result":
            texts = [block["source"], block["title"], *(t["text"] for t in block["content"])]
            fields += sum(count_tokens(text) for text in texts)
    return fields, count_tokens(json.dumps(content, ensure_ascii=False))


def rule_tokens() -> int:
    """Return the tokens of the instructions' citing rule (cached with the instructions)."""
    start = STATIC_INSTRUCTIONS.index(RULE_START)
    end = STATIC_INSTRUCTIONS.index(RULE_END) + len(RULE_END)
    return count_tokens(STATIC_INSTRUCTIONS[start:end])


async def run(config: Config, workdir: Path) -> list[Row]:
    """Count the tokens sources add: per search, per marker, and the rule."""
    items = memory_items(SEARCH_RESULTS)
    query = "sister birthday"
    plain = count_tokens(plain_result(query, items))
    fields, as_json = search_result_tokens(query, items)
    per_search = fields - plain
    marker = count_tokens(f" [[mem:{items[0].id}]]")
    rule = rule_tokens()
    return [
        Row(
            key="sources",
            figure=(
                f"16. Sources: input tokens a search of {SEARCH_RESULTS} adds as search "
                "results (vs plain text), output tokens per marker, the rule (cached)"
            ),
            value=f"+{per_search} / {marker} / {rule} tokens",
            numbers=(float(per_search), float(marker), float(rule)),
            command=command("sources"),
            details=(
                f"plain text {plain}, search results {fields} in their text fields, "
                f"{as_json} as JSON (upper bound, +{as_json - plain})",
            ),
        )
    ]
