"""The plan message and its buttons: skip toggles, Apply or Import, Cancel; then Undo all."""

from bot.telegram.format import utf16_len
from bot.telegram.format.rich import rich_list
from bot.telegram.tidy import texts
from bot.telegram.tidy.callbacks import PlanAction, PlanTap, encode_plan
from bot.telegram.ui import Button, View
from memory.batches.values import Batch, Reverted

SKIPS_PER_ROW = 5
# Telegram's limit is 4096; the widths shrink until the plan fits in one message.
MAX_TEXT_UNITS = 4000
WIDTHS = (80, 50, 30, 15)
# A rich plan holds 32,768 characters: a memory's content is shown this long there.
RICH_WIDTH = 300


def _skip_rows(batch: Batch) -> tuple[tuple[Button, ...], ...]:
    """Return one toggle per line: its number, ticked while it is kept."""
    buttons = [
        Button(
            f"{number} {'✗' if line.skip else '✓'}",
            encode_plan(PlanAction(PlanTap.SKIP, batch.id, number - 1)),
        )
        for number, line in enumerate(batch.lines, 1)
    ]
    return tuple(
        tuple(buttons[i : i + SKIPS_PER_ROW]) for i in range(0, len(buttons), SKIPS_PER_ROW)
    )


def _rich_plan(batch: Batch) -> str | None:
    """Return the plan as a Rich Message's Markdown if it is long enough to read better so."""
    markdown = texts.plan_markdown(batch, RICH_WIDTH)
    return markdown if rich_list(len(batch.lines), markdown) else None


def plan_view(batch: Batch, *, rich: bool = False) -> View:
    """Show a proposed plan, each line with its reason, with the buttons to decide it.

    With rich (RICH_MESSAGES), a long plan goes as a Rich Message, its contents cut far later.
    """
    text = ""
    for width in WIDTHS:
        text = texts.plan_text(batch, width)
        if utf16_len(text) <= MAX_TEXT_UNITS:
            break
    decide = (
        Button(
            f"{texts.APPLY_LABEL[batch.kind]} ({len(batch.chosen)})",
            encode_plan(PlanAction(PlanTap.APPLY, batch.id)),
        ),
        Button(texts.CANCEL_LABEL, encode_plan(PlanAction(PlanTap.CANCEL, batch.id))),
    )
    return View(text, (*_skip_rows(batch), decide), _rich_plan(batch) if rich else None)


def decided_view(batch: Batch, outcome: str, *, undoable: bool) -> View:
    """Show a plan as decided: its lines, the outcome, and Undo all once it is applied."""
    text = texts.plan_text(batch, WIDTHS[-1]) + "\n\n" + outcome
    if utf16_len(text) > MAX_TEXT_UNITS:
        text = outcome
    return View(text, revert_buttons(batch.id, redo=False) if undoable else ())


def revert_buttons(batch_id: int, *, redo: bool) -> tuple[tuple[Button, ...], ...]:
    """Return the one button that reverts a batch: Undo all, or Redo all for an Undo all."""
    label = texts.REDO_ALL_LABEL if redo else texts.UNDO_ALL_LABEL
    return ((Button(label, encode_plan(PlanAction(PlanTap.REVERT, batch_id))),),)


def reverted_view(result: Reverted, redo: bool) -> View:
    """Show what an Undo all (or Redo all) did, with the button that reverts it in turn."""
    return View(texts.reverted(result, redo), revert_buttons(result.batch_id, redo=not redo))
