"""The callback data of our inline buttons: each action and its compact encoding."""

import re
from dataclasses import dataclass

from bot.telegram.ui import callback_data
from memory.ids import ID_REGEX

# Every callback data of these actions starts with one of these (bot/telegram/buttons.py).
PREFIXES = ("m:", "u:", "p:")


@dataclass(frozen=True)
class ShowPage:
    """Show one page of the memory list."""

    page: int


@dataclass(frozen=True)
class DeleteFromPage:
    """Forget a memory from a page, then show that page again."""

    memory_id: str
    page: int


@dataclass(frozen=True)
class PinFromPage:
    """Pin a memory from a page (or unpin it), then show that page again."""

    memory_id: str
    page: int
    pinned: bool


@dataclass(frozen=True)
class AnswerClear:
    """Confirm or cancel forgetting everything."""

    confirmed: bool


@dataclass(frozen=True)
class Undo:
    """Undo one logged change the model made."""

    change_id: int


@dataclass(frozen=True)
class AnswerProposal:
    """Remember a memory the model proposed, or decline it."""

    proposal_id: int
    remember: bool


@dataclass(frozen=True)
class ToggleFact:
    """Flip one fact's toggle of a memory question with several facts."""

    fact_id: int


Action = ShowPage | DeleteFromPage | PinFromPage | AnswerClear | Undo | AnswerProposal | ToggleFact

_SHOW_PAGE = re.compile(r"m:p:([1-9][0-9]{0,5})")
_DELETE = re.compile(rf"m:d:({ID_REGEX}):([1-9][0-9]{{0,5}})")
_PIN = re.compile(rf"m:([+-]):({ID_REGEX}):([1-9][0-9]{{0,5}})")
_CLEAR = re.compile(r"m:c:([yn])")
_UNDO = re.compile(r"u:([1-9][0-9]{0,17})")
_PROPOSAL = re.compile(r"p:([1-9][0-9]{0,17}):([yn])")
_TOGGLE = re.compile(r"p:([1-9][0-9]{0,17}):t")


def encode(action: Action) -> str:
    """Return the callback data of an action."""
    match action:
        case ShowPage(page):
            return callback_data("m", "p", page)
        case DeleteFromPage(memory_id, page):
            return callback_data("m", "d", memory_id, page)
        case PinFromPage(memory_id, page, pinned):
            return callback_data("m", "+" if pinned else "-", memory_id, page)
        case AnswerClear(confirmed):
            return callback_data("m", "c", "y" if confirmed else "n")
        case Undo(change_id):
            return callback_data("u", change_id)
        case AnswerProposal(proposal_id, remember):
            return callback_data("p", proposal_id, "y" if remember else "n")
        case ToggleFact(fact_id):
            return callback_data("p", fact_id, "t")


def parse_callback(data: str | None) -> Action | None:
    """Return the action of a button's callback data, or None if it is not one of ours."""
    data = data or ""
    if match := _SHOW_PAGE.fullmatch(data):
        return ShowPage(int(match[1]))
    if match := _DELETE.fullmatch(data):
        return DeleteFromPage(match[1], int(match[2]))
    if match := _PIN.fullmatch(data):
        return PinFromPage(match[2], int(match[3]), match[1] == "+")
    if match := _CLEAR.fullmatch(data):
        return AnswerClear(match[1] == "y")
    if match := _UNDO.fullmatch(data):
        return Undo(int(match[1]))
    if match := _PROPOSAL.fullmatch(data):
        return AnswerProposal(int(match[1]), match[2] == "y")
    if match := _TOGGLE.fullmatch(data):
        return ToggleFact(int(match[1]))
    return None
