"""What an import may save: our own export read back, and each proposed memory checked as a save."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from memory.export import EXPORT_FORMAT
from memory.facts import missing_facts
from memory.import_file import DEFAULT_BOUNDS, ImportBounds, ImportUnreadable, read_document
from memory.items import MemoryItem, subject_key
from memory.plan_lines import ImportLine
from memory.secret_text import secret_in
from memory.tidy.dupes import normalised
from memory.tools.args import AddToMemoryArgs

MAX_IMPORT_LINES = 20


@dataclass(frozen=True)
class Checked:
    """The memories an import proposes, and those it left out with why."""

    lines: list[ImportLine]
    left_out: list[tuple[str, str]]


def read_export(data: bytes, bounds: ImportBounds = DEFAULT_BOUNDS) -> list[dict[str, Any]] | None:
    """Return the active memories of our own export (JSON or zipped), or None if it is not one.

    Raises ImportTooBig when the file, or what it inflates to, passes the bounds.
    """
    try:
        document = read_document(data, bounds)
    except ImportUnreadable:
        return None
    if not isinstance(document, dict) or document.get("format") != EXPORT_FORMAT:
        return None
    memories = document.get("memories")
    if not isinstance(memories, list):
        return None
    return [m for m in memories if isinstance(m, dict) and m.get("deleted_at") is None]


def _why_not(args: AddToMemoryArgs, taken: set[str], known: set[str], source: str | None) -> str:
    """Return why a proposed memory cannot be saved, or "" if it can."""
    if (secret := secret_in(args.content, args.subject)) is not None:
        return f"looks like {secret}: secrets are never saved"
    if subject_key(args.subject) in taken:
        return f"a memory about '{args.subject}' exists already"
    if normalised(args.content) in known:
        return "already remembered"
    if source is not None and (lost := missing_facts(args.content, source)):
        return f"not stated in what you sent ({', '.join(lost[:3])})"
    return ""


def _import_line(args: AddToMemoryArgs, subject: str | None, reason: str) -> ImportLine:
    """Return a memory the checks kept as the batch keeps it."""
    return ImportLine(
        action="add", category=args.category, subject=subject, content=args.content, reason=reason
    )


def check_imports(
    proposed: Sequence[dict[str, Any]],
    existing: Sequence[MemoryItem],
    source: str | None,
    reason: str,
) -> Checked:
    """Keep the proposed memories a save would take; source: the text they must come from."""
    taken = {subject_key(item.subject) or "" for item in existing if item.subject}
    known = {normalised(item.content) for item in existing}
    lines: list[ImportLine] = []
    left_out: list[tuple[str, str]] = []
    for raw in proposed:
        fields = {key: raw.get(key) for key in ("content", "category", "subject")}
        # Our own export may hold memories saved before subjects were required.
        no_subject = source is None and fields["subject"] is None
        try:
            args = AddToMemoryArgs.model_validate({**fields, "subject": fields["subject"] or "-"})
        except ValidationError:
            left_out.append((str(fields.get("content") or "")[:80], "not a valid memory"))
            continue
        why = _why_not(args, taken, known, source)
        if fields["subject"] is None and not no_subject:
            why = why or "it needs a subject"
        if not why and len(lines) >= MAX_IMPORT_LINES:
            why = f"more than {MAX_IMPORT_LINES} at once: import the rest next"
        if why:
            left_out.append((args.content, why))
            continue
        subject = None if no_subject else args.subject
        if subject:
            taken.add(subject_key(subject) or "")
        known.add(normalised(args.content))
        lines.append(_import_line(args, subject, reason))
    return Checked(lines, left_out)
