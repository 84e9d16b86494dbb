"""The layers hold: a walk over every module's imports, and sizes a newcomer can read."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("bot", "memory", "evals")
WIRING = frozenset({"bot.app", "bot.compose", "bot.__main__"})
MAX_MODULE_LINES = 350
MAX_FUNCTION_LINES = 40
BELOW_WIRING = (
    "bot.telegram",
    "bot.agent",
    "bot.media",
    "bot.upkeep",
    "bot.conversations",
    "bot.reminders",
    "bot.webapp",
)


def forbidden_for(module: str) -> tuple[str, ...]:
    """Return the import prefixes the module's layer must not use."""
    if module.startswith("tests.fakes"):
        # A fake that read media or counted tokens with the bot's own code would agree with
        # it by construction, and could not catch its mistakes.
        return ("bot", "memory", "evals")
    if module.startswith("evals"):
        # The evaluation builds the bot's services; the fakes in tests are not for it.
        return ("telegram", "bot.telegram", "tests")
    if module.startswith("memory"):
        return ("telegram", "anthropic", "bot", "evals")
    rules: list[str] = ["evals"]
    if not module.startswith("bot.telegram") and module not in WIRING:
        rules += ["telegram", "bot.telegram"]
    if module.startswith(BELOW_WIRING):
        rules += sorted(WIRING)
    if module.startswith("bot.conversations"):
        rules += ["bot.agent", "bot.media", "bot.upkeep"]
    if module.startswith("bot.reminders"):
        rules += ["bot.media", "bot.upkeep"]
    if module.startswith("bot.media"):
        # Files and voice sit below the turn and the bulk work that use them.
        rules += ["bot.agent", "bot.upkeep"]
    if module.startswith("bot.upkeep"):
        # Bulk memory work (tidy, import, erasure) runs beside the turn, not through it.
        rules.append("bot.agent")
    if module.startswith("bot.agent"):
        rules.append("bot.upkeep")
    if module.startswith("bot.webapp"):
        # The Mini App calls the memory and reminder services, as the commands do, and no more.
        rules += ["bot.agent", "bot.media", "bot.upkeep", "bot.conversations"]
    if module.startswith(("bot.agent", "bot.conversations", "bot.media", "bot.reminders")):
        rules.append("bot.webapp")
    if module.startswith("bot.upkeep"):
        rules.append("bot.webapp")
    return tuple(rules)


def imported_names(source: str) -> list[str]:
    """Return every module a source imports, absolute, in order."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def violations(module: str, source: str) -> list[str]:
    """Return the imports of a module that break its layer's rules."""
    rules = forbidden_for(module)
    return [
        f"{module} imports {name}"
        for name in imported_names(source)
        if any(name == rule or name.startswith(rule + ".") for rule in rules)
    ]


def modules() -> list[tuple[str, Path]]:
    """Return (dotted name, path) of every module of the product."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found.append((name, path))
    return found


def test_every_module_keeps_to_its_layer():
    broken = [v for name, path in modules() for v in violations(name, path.read_text())]
    assert broken == []


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("memory.store", "from bot.conversations.store import ConversationStore"),
        ("memory.tools", "import anthropic"),
        ("memory.block", "from telegram import Bot"),
        ("bot.agent.loop", "from telegram.constants import ParseMode"),
        ("bot.agent.loop", "from bot.telegram.texts import START"),
        ("bot.conversations.store", "from bot.agent.request import build_request"),
        ("bot.conversations.store", "import telegram.ext"),
        ("bot.telegram.chat.handlers", "from bot.app import build_application"),
        ("bot.settings", "from telegram import Update"),
        ("bot.app", "from evals.runner import run"),
        ("memory.store", "import evals"),
        ("evals.runner", "from tests.fakes.anthropic_server import FakeAnthropic"),
        ("evals.trial", "from bot.telegram.context import Services"),
        ("tests.fakes.anthropic_server", "from memory.tokens import count_tokens"),
        ("tests.fakes.media", "from bot.agent import media"),
        ("tests.fakes.telegram_server", "import bot.telegram.format"),
        ("bot.media.voice", "from bot.agent.loop import Agent"),
        ("bot.media.attachments", "from bot.upkeep.erasure import DataEraser"),
        ("bot.media.voice", "from bot.telegram.chat.voice import voice_message"),
        ("bot.media.voice", "from bot.app import build_services"),
        ("bot.upkeep.tidy", "from bot.agent.loop import Agent"),
        ("bot.upkeep.erasure", "from bot.telegram.context import Services"),
        ("bot.upkeep.erasure", "import telegram"),
        ("bot.upkeep.tidy", "from bot.app import build_services"),
        ("bot.agent.loop", "from bot.upkeep.tidy import TidyService"),
        ("bot.conversations.store", "from bot.media.voice import VoiceNotes"),
        ("bot.conversations.store", "from bot.upkeep.erasure import DataEraser"),
        ("bot.reminders.due", "from bot.media.file_cache import FileCache"),
        ("bot.reminders.due", "from bot.upkeep.tidy import TidyService"),
        ("bot.webapp.memories_api", "from bot.telegram.ui import View"),
        ("bot.webapp.server", "import telegram"),
        ("bot.webapp.server", "from bot.app import build_application"),
        ("bot.webapp.memories_api", "from bot.agent.loop import Agent"),
        ("bot.agent.loop", "from bot.webapp.server import mini_app"),
        ("bot.reminders.due", "from bot.webapp.events import Event"),
    ],
)
def test_a_forbidden_import_is_caught(module, source):
    assert violations(module, source) != []


@pytest.mark.parametrize(
    ("module", "source"),
    [
        (
            "bot.telegram.chat.handlers",
            "from telegram import Update\nfrom bot.agent.loop import Answer",
        ),
        ("bot.app", "from telegram.ext import Application\nfrom bot.telegram import handlers"),
        ("bot.agent.loop", "from anthropic import AsyncAnthropic\nfrom memory.store import X"),
        ("bot.conversations.store", "from memory.stored_block import owner_block"),
        ("evals.trial", "from bot.app import build_services\nfrom memory.store import X"),
        ("bot.agent.loop", "from bot.media.attachments import Files"),
        ("bot.upkeep.erasure", "from bot.media.file_cache import FileCache"),
        ("bot.telegram.tidy.commands", "from bot.upkeep.tidy import TidyService"),
        ("bot.telegram.miniapp.setup", "from bot.webapp.server import mini_app"),
        ("bot.webapp.more_api", "from bot.reminders.store import ReminderStore"),
    ],
)
def test_an_allowed_import_passes(module, source):
    assert violations(module, source) == []


def test_the_migrations_import_neither_the_agent_nor_telegram():
    # Table models live in the storage layers, so migrating loads no agent or chat code.
    env = (ROOT / "alembic" / "env.py").read_text()
    ours = [name for name in imported_names(env) if name.split(".")[0] in PACKAGES]
    loaded = subprocess.run(
        [sys.executable, "-c", LOADED_BY, *ours], cwd=ROOT, capture_output=True, text=True
    )
    assert ours and loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.split() == []


# Import each module named on the command line; print what of bot.agent and bot.telegram loaded.
LOADED_BY = """
import importlib, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
print(*sorted(m for m in sys.modules if m.startswith(("bot.agent", "bot.telegram"))))
"""


def test_the_fakes_use_nothing_of_the_product():
    fakes = sorted((ROOT / "tests" / "fakes").rglob("*.py"))
    broken = [v for path in fakes for v in violations(f"tests.fakes.{path.stem}", path.read_text())]
    assert fakes and broken == []


def test_every_package_says_what_lives_there_and_what_it_must_not_import():
    for name, path in modules():
        if path.name == "__init__.py":
            docstring = ast.get_docstring(ast.parse(path.read_text())) or ""
            assert "import" in docstring.lower(), f"{name} has no docstring naming its import rules"


def test_modules_and_functions_stay_small():
    too_long = []
    for name, path in modules():
        source = path.read_text()
        if len(source.splitlines()) > MAX_MODULE_LINES:
            too_long.append(f"{name}: {len(source.splitlines())} lines")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    too_long.append(f"{name}.{node.name}: {length} lines")
    assert too_long == []
