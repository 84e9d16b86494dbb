"""Cut a growing Markdown reply after its finished part, so that what is left fits one message.

A streamed reply is shown as a draft, which holds one message; when the reply outgrows it,
the part before the cut is sent as a message and the draft goes on with the rest.
"""

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.telegram.format.render import open_fence, render_html
from bot.telegram.format.text import MAX_MESSAGE_LENGTH, utf16_len

_LINE_END = re.compile(r"\n")
_SPACE = re.compile(r" ")


@dataclass(frozen=True)
class Cut:
    """Where a Markdown text is cut: the finished head, and where the rest starts."""

    head: str  # Markdown that renders to one message
    resume: int  # index of the rest in the text that was cut
    reopen: str  # a code fence line (with its newline) to put before the rest, or ""


def cut_finished(markdown: str, limit: int = MAX_MESSAGE_LENGTH, floor: int = 0) -> Cut | None:
    """Return where to cut Markdown that needs more than one message, or None if it fits one.

    The cut falls at a line break, a blank line if one is past half the head: every construct
    but a code fence ends with its line, so head and rest render as the whole did, and a fence
    cut in two is reopened. Only a single line longer than a message is cut at a space or, at
    worst, anywhere. No cut falls before index floor.
    """

    def fits(end: int) -> bool:
        # Rendered HTML within the limit is one message, as render_reply sends it.
        return utf16_len(render_html(markdown[:end])) <= limit

    if fits(len(markdown)):
        return None
    lines = [m.start() for m in _LINE_END.finditer(markdown, floor) if m.start() > floor]
    end = _last(lines, fits)
    if end is not None and markdown[:end].strip():
        # A head that ends where a blank line starts; one that ends early would waste a message.
        late = [i for i in lines if end // 2 <= i <= end and markdown[i + 1 : i + 2] == "\n"]
        return _cut_at_line(markdown, late[-1] if late else end)
    spaces = [m.start() for m in _SPACE.finditer(markdown, floor) if m.start() > floor]
    end = _last(spaces, fits)
    if end is not None and markdown[:end].strip():
        return _cut_inside_line(markdown, end, end + 1)
    end = _last(range(floor + 1, len(markdown)), fits) or floor + 1
    return _cut_inside_line(markdown, end, end)


def _last(candidates: Sequence[int], fits: Callable[[int], bool]) -> int | None:
    """Return the last candidate that fits, by bisection (a longer head never fits better)."""
    low, high = 0, len(candidates)
    while low < high:
        middle = (low + high) // 2
        if fits(candidates[middle]):
            low = middle + 1
        else:
            high = middle
    return candidates[low - 1] if low else None


def _cut_at_line(markdown: str, end: int) -> Cut:
    """Cut at the line break at end; the rest starts at the next line with text."""
    head = markdown[:end]
    fence = open_fence(head)
    if fence is not None:
        # Blank lines inside code are part of it: keep them, and reopen the fence.
        return Cut(head, end + 1, fence + "\n")
    resume = end
    while resume < len(markdown) and markdown[resume] == "\n":
        resume += 1
    return Cut(head, resume, "")


def _cut_inside_line(markdown: str, end: int, resume: int) -> Cut:
    """Cut a line too long for one message at end; the rest starts at resume."""
    head = markdown[:end]
    fence = open_fence(head)
    return Cut(head, resume, "" if fence is None else fence + "\n")
