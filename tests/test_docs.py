"""The docs hold together: every relative link in README, docs/ and evals/ leads somewhere."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "evals" / "README.md"]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """Return GitHub's anchor for a heading: lower case, punctuation dropped, spaces to -."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Return the anchors of a Markdown file's headings."""
    return {
        slug(line.lstrip("#")) for line in path.read_text().splitlines() if line.startswith("#")
    }


def links(path: Path) -> list[str]:
    """Return the relative links of a Markdown file, outside code blocks."""
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.DOTALL)
    return [target for target in LINK.findall(text) if not re.match(r"[a-z]+:", target)]


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_every_relative_link_leads_to_a_file_and_heading(doc):
    broken = []
    for target in links(doc):
        file, _, anchor = target.partition("#")
        path = (doc.parent / file).resolve() if file else doc
        if not path.exists() or (anchor and path.suffix == ".md" and anchor not in anchors(path)):
            broken.append(target)
    assert broken == []


def test_readme_is_short_and_links_every_doc():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 220
    for doc in DOCS[1:]:
        assert str(doc.relative_to(ROOT)) in readme or doc.name == "README.md", doc


ARCHITECTURE = ROOT / "docs" / "architecture.md"
LISTED_ROOTS = ("bot", "memory", "evals")
ENTRY = re.compile(r"( *)([\w.]+(?:/|\.py))(?:  |$)")


def listed_modules(text: str) -> list[str]:
    """Return the paths the layout tree of docs/architecture.md lists, a folder as its package."""
    tree = text.split("```")[1]
    stack: list[str] = []
    listed = []
    for line in tree.splitlines():
        entry = ENTRY.match(line)
        if not entry or len(entry.group(1)) % 2 or len(entry.group(1)) > 16:
            continue  # a description carried over to the next line
        depth, name = len(entry.group(1)) // 2, entry.group(2)
        del stack[depth:]
        path = "/".join([*stack, name.rstrip("/")])
        if name.endswith("/"):
            stack.append(name.rstrip("/"))
            path += "/__init__.py"
        listed.append(path)
    return [path for path in listed if path.split("/")[0] in LISTED_ROOTS]


def product_modules() -> set[str]:
    """Return the path of every module of bot/, memory/ and evals/."""
    return {
        str(path.relative_to(ROOT))
        for package in LISTED_ROOTS
        for path in (ROOT / package).rglob("*.py")
    }


def test_the_architecture_lists_every_module_and_no_other():
    listed = listed_modules(ARCHITECTURE.read_text())
    assert sorted(product_modules() - set(listed)) == [], "missing from docs/architecture.md"
    assert sorted(set(listed) - product_modules()) == [], "listed but not there"
    assert len(listed) == len(set(listed)), "listed twice"


def test_the_module_list_misses_a_removed_line_and_a_made_up_one():
    text = ARCHITECTURE.read_text()
    assert "bot/telegram/chat/drafts.py" in listed_modules(text)
    without = text.replace("      drafts.py ", "      nothing ", 1)
    assert "bot/telegram/chat/drafts.py" not in listed_modules(without)
    made_up = text.replace("  agent/ ", "  agent/\n    made_up.py ", 1)
    assert "bot/agent/made_up.py" in listed_modules(made_up)
