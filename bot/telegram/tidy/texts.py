"""What the bot says about tidy passes, imports and their batches (HTML)."""

from html import escape

from bot.telegram.format.rich import HTML, MARKDOWN, Markup, escape_markdown
from bot.upkeep.tidy import PassOutcome, PassResult
from memory.batches.values import Batch, BatchKind, BatchNote, Reverted
from memory.import_file import MAX_FILE_BYTES, MAX_JSON_BYTES
from memory.items import MemoryItem
from memory.plan_lines import BatchLine, ImportLine
from memory.text import shorten
from memory.tidy.plan import TidyAction

PLAN_HEAD = {
    BatchKind.TIDY: "Tidy plan: {count} change(s). Tap a number to skip that line or keep it.",
    BatchKind.IMPORT: "Import plan: {count} memory(ies). Tap a number to skip one or keep it.",
}
APPLY_LABEL = {BatchKind.TIDY: "Apply", BatchKind.IMPORT: "Import"}
CANCEL_LABEL = "Cancel"
UNDO_ALL_LABEL = "Undo all"
REDO_ALL_LABEL = "Redo all"
CANCELLED = "Cancelled: nothing changed."
STALE_PLAN = "This plan was already decided."
CHANGED_SINCE = (
    "Some of these memories changed since the plan was made, so nothing was applied. "
    "Run /memory tidy again."
)
NOTHING_CHOSEN = "Every line is skipped: nothing to apply."
PASS_TEXTS = {
    PassResult.NOTHING_NEW: "Nothing changed since the last tidy pass, so there is nothing new "
    "to tidy (and no model call was made).",
    PassResult.NOTHING_TO_DO: "I looked through your memories: nothing to merge, update or "
    "archive.",
    PassResult.MODEL_FAILED: "I couldn't reach the model for the tidy pass. Nothing changed; "
    "try again later.",
}


def too_full(limit: int) -> str:
    """Say a batch would pass the limit of memories."""
    return f"That would take you past {limit} memories, so nothing changed."


def rejected(outcome: PassOutcome) -> str:
    """Say the model's plan broke a rule and nothing was changed."""
    return (
        "The tidy plan broke a rule, so I set it aside whole and changed nothing "
        f"({escape(outcome.problem or 'unknown')})."
    )


def _line_body(line: BatchLine, width: int, markup: Markup = HTML) -> str:
    """Render what one line of a plan does."""
    content = markup.escape(shorten(line.content or "", width))
    if isinstance(line, ImportLine):
        if not line.subject:
            return f"Save '{content}'"
        return f"Save '{content}' " + markup.italic.format(text=f"({markup.escape(line.subject)})")
    ids = " + ".join(
        markup.code.format(text=f"[{i}]") for i in [line.memory_id, *line.merged_ids] if i
    )
    match line.action:
        case TidyAction.MERGE:
            return f"Merge {ids} → '{content}'"
        case TidyAction.UPDATE:
            return f"Update {ids} → '{content}'"
        case TidyAction.ARCHIVE:
            old = markup.escape(shorten(line.texts[line.memory_id], width))
            return f"Archive {ids} '{old}'"


def plan_line(number: int, line: BatchLine, width: int) -> str:
    """Render one line of a plan with its reason, marked when skipped."""
    reason = escape(shorten(line.reason, width + 20))
    text = f"{_line_body(line, width)} — {reason}"
    # Telegram drops code inside strikethrough, so a skipped line is only marked.
    return f"{number}. (skipped) {text}" if line.skip else f"{number}. {text}"


def plan_text(batch: Batch, width: int) -> str:
    """Render a plan: its head, then one numbered line per change."""
    head = PLAN_HEAD[batch.kind].format(count=len(batch.lines))
    lines = [plan_line(n, line, width) for n, line in enumerate(batch.lines, 1)]
    return "\n".join([head, "", *lines])


def plan_markdown(batch: Batch, width: int) -> str:
    """Render a plan as a Rich Message's Markdown: its head, then a numbered list item a line."""
    head = PLAN_HEAD[batch.kind].format(count=len(batch.lines))
    lines = []
    for number, line in enumerate(batch.lines, 1):
        reason = escape_markdown(shorten(line.reason, width + 20))
        skipped = "(skipped) " if line.skip else ""
        lines.append(f"{number}. {skipped}{_line_body(line, width, MARKDOWN)} — {reason}")
    return "\n".join([f"**{head}**", "", *lines])


def applied(batch: Batch) -> str:
    """Confirm a plan was applied as one batch."""
    count = len(batch.chosen)
    if batch.kind is BatchKind.IMPORT:
        return f"Imported {count} memory(ies) as one batch. <b>Undo all</b> forgets them again."
    return (
        f"Applied {count} change(s) as one batch. <b>Undo all</b> puts every memory back; "
        "/memory history &lt;id&gt; shows each change."
    )


IMPORT_HOW = (
    "To bring what another assistant remembers about you, ask it:\n"
    "<i>List everything you remember about me, one fact per line, with dates as written.</i>\n"
    "Then send me its answer after the command: <code>/memory import</code> followed by the "
    "text. Or send a file with the caption <code>/memory import</code>: my own export "
    "(/memory export), or a Markdown or text list. I show what I'd save first."
)
IMPORT_TOO_LONG = "That is too long for one import; send it in parts."
IMPORT_UNREADABLE = (
    "I can import my own export (.json or .zip) or a Markdown or text file; this file is neither."
)
MEGABYTE = 1024 * 1024
IMPORT_TOO_BIG = (
    f"That file is too big to import: I read files up to {MAX_FILE_BYTES // MEGABYTE} MB, "
    f"at most {MAX_JSON_BYTES // MEGABYTE} MB once unzipped. Nothing changed."
)
IMPORT_NOTHING = "I found nothing new to save in that."
IMPORT_FAILED = "I couldn't reach the model to read that. Nothing changed; try again later."


def left_out(items: list[tuple[str, str]]) -> str:
    """List what an import will not save, and why."""
    shown = [f"- '{escape(shorten(content, 80))}': {escape(why)}" for content, why in items[:15]]
    more = f"\n…and {len(items) - 15} more" if len(items) > 15 else ""
    return "Left out of the import:\n" + "\n".join(shown) + more


def reverted(result: Reverted, redo: bool) -> str:
    """Say what an Undo all (or Redo all) did, and which memories it left alone."""
    verb = "Redone" if redo else "Undone"
    text = f"{verb}: {result.restored} memory change(s) reverted as one batch."
    if result.left_alone:
        text += "\nLeft alone, as you changed them since:\n" + "\n".join(
            _left(item) for item in result.left_alone
        )
    return text


def _left(item: MemoryItem) -> str:
    """Render a memory an Undo all left alone."""
    return f"<code>[{item.id}]</code> {escape(shorten(item.content, 80))}"


MARKDOWN_EMPTY = "I don't remember anything yet, so there is nothing to export."


def markdown_caption(count: int) -> str:
    """Describe the Markdown export (plain text caption)."""
    return f"{count} memories as Markdown, to read or to give another assistant."


BATCH_NAMES = {
    BatchKind.TIDY: "tidy pass",
    BatchKind.IMPORT: "import",
    BatchKind.REVERT: "Undo all / Redo all",
}


def batch_notes(notes: list[BatchNote]) -> str:
    """Say which versions of a memory tidy passes, imports and Undo all made, and why."""
    if not notes:
        return ""
    lines = []
    for note in notes:
        what = "archived" if note.archived else f"v{note.version}"
        why = f": {escape(note.reason)}" if note.reason else ""
        lines.append(f"{what} by {BATCH_NAMES[note.kind]} {note.batch_id}{why}")
    return "\n\n<b>Batches</b>\n" + "\n".join(lines)
