"""The end-to-end tests marked `engines` are exactly those docs/testing.md lists, and all exist."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LISTED = re.compile(r"^- `(tests/[\w/]+\.py)::(test_\w+)`", re.MULTILINE)


def _is_engines_mark(decorator: ast.expr) -> bool:
    """Tell whether a decorator is pytest.mark.engines."""
    return ast.unparse(decorator) == "pytest.mark.engines"


def marked_tests() -> set[str]:
    """Return path::name of every test function marked engines."""
    found = set()
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
                _is_engines_mark(d) for d in node.decorator_list
            ):
                found.add(f"{path.relative_to(ROOT)}::{node.name}")
    return found


def test_docs_list_every_engine_marked_test_and_no_other():
    docs = (ROOT / "docs" / "testing.md").read_text()
    listed = {f"{path}::{name}" for path, name in LISTED.findall(docs)}
    assert len(marked_tests()) >= 20
    assert marked_tests() == listed
