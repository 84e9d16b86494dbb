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
