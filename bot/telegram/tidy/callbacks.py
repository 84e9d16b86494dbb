"""The callback data of a plan's buttons (tidy pass or import): Apply, skip, Cancel, Undo all."""

import re
from dataclasses import dataclass
from enum import StrEnum

from bot.telegram.ui import callback_data

# Every callback data of a plan's buttons starts so; a malformed one is a stale button.
PREFIX = "t:"
_DATA = re.compile(r"t:([ascr]):([1-9][0-9]{0,17})(?::([0-9]{1,3}))?")


class PlanTap(StrEnum):
    """What a plan's button does."""

    APPLY = "a"
    SKIP = "s"  # skip a line, or take it back in
    CANCEL = "c"
    REVERT = "r"  # Undo all, or Redo all of an Undo all


@dataclass(frozen=True)
class PlanAction:
    """A tap on a plan's button: what, on which batch, and which line for a skip."""

    tap: PlanTap
    batch_id: int
    line: int | None = None


def encode_plan(action: PlanAction) -> str:
    """Return the callback data of a plan's button."""
    line = [] if action.line is None else [action.line]
    return callback_data("t", action.tap.value, action.batch_id, *line)


def parse_plan(data: str | None) -> PlanAction | None:
    """Return the action of a plan button's data, or None if it is malformed."""
    match = _DATA.fullmatch(data or "")
    if match is None:
        return None
    tap = PlanTap(match[1])
    if (tap is PlanTap.SKIP) != (match[3] is not None):
        return None
    return PlanAction(tap, int(match[2]), None if match[3] is None else int(match[3]))
