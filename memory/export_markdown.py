"""The export as Markdown: the active memories by category, readable by people and assistants."""

from collections.abc import Sequence
from datetime import datetime

from memory.categories import Category
from memory.items import MemoryItem

HEADINGS = {
    Category.PERSON: "People",
    Category.PREFERENCE: "Preferences",
    Category.CONTEXT: "Context",
    Category.PROJECT: "Projects",
}


def _line(item: MemoryItem) -> str:
    """Return one memory as a list item, its subject in bold, on one line."""
    content = " ".join(item.content.split())
    subject = " ".join(item.subject.split()) if item.subject else ""
    return f"- **{subject}**: {content}" if subject else f"- {content}"


def markdown_export(items: Sequence[MemoryItem], exported_at: datetime) -> bytes:
    """Return the memories as a Markdown document, grouped by category, oldest first."""
    parts = [
        "# What my assistant remembers about me",
        "",
        f"Exported {exported_at.date().isoformat()}: {len(items)} memories.",
    ]
    for category, heading in HEADINGS.items():
        mine = sorted((i for i in items if i.category is category), key=lambda i: i.created_at)
        if mine:
            parts += ["", f"## {heading}", "", *(_line(item) for item in mine)]
    return ("\n".join(parts) + "\n").encode("utf-8")
