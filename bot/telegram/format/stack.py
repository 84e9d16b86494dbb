"""The elements open at a point of the HTML, as a persistent stack.

Pushing and popping take constant time and share what lies below, so every point of a piece
can remember its stack for free; each element carries what splitting asks of the whole
stack (the cost of closing it, whether whitespace is code indentation), and a link to the
nearest active element around it, so reopening and closing walk only emitted tags.
"""

from __future__ import annotations

from typing import NamedTuple

_KEEPS_SPACE = ("pre", "code")
_new = tuple.__new__


class Open(NamedTuple):
    """An open element and those around it; inactive ones are not emitted."""

    name: str
    src: str
    active: bool
    outer: Open | None
    shown_outer: Open | None
    close_cost: int
    keeps_space: bool


Stack = Open | None


def push(stack: Stack, name: str, src: str, active: bool) -> Open:
    """Return the stack with one more element open."""
    own = len(name) + 3 if active else 0  # </name>, in ASCII
    # tuple.__new__ skips the NamedTuple constructor's Python frame: every tag pushes.
    if stack is None:
        return _new(Open, (name, src, active, None, None, own, name in _KEEPS_SPACE))
    shown_outer = stack if stack.active else stack.shown_outer
    keeps_space = stack.keeps_space or name in _KEEPS_SPACE
    return _new(Open, (name, src, active, stack, shown_outer, stack.close_cost + own, keeps_space))


def close_cost(stack: Stack) -> int:
    """Return the UTF-16 units of the end tags that close the active elements."""
    return stack.close_cost if stack else 0


def has_active(stack: Stack) -> bool:
    """Tell whether any element of the stack is emitted."""
    return stack is not None and (stack.active or stack.shown_outer is not None)


def keeps_space(stack: Stack) -> bool:
    """Tell whether whitespace here is inside code, where it is indentation."""
    return stack is not None and stack.keeps_space


def _shown(stack: Stack) -> list[Open]:
    """Return the active elements, innermost first."""
    node = stack if stack is None or stack.active else stack.shown_outer
    shown = []
    while node is not None:
        shown.append(node)
        node = node.shown_outer
    return shown


def opening(stack: Stack) -> str:
    """Return the start tags that reopen the active elements."""
    return "".join(o.src for o in reversed(_shown(stack)))


def closing(stack: Stack) -> str:
    """Return the end tags that close the active elements."""
    return "".join(f"</{o.name}>" for o in _shown(stack))


def deactivate(stack: Stack) -> Stack:
    """Return the stack with every element's formatting dropped."""
    # Only elements from the top down to the outermost active one need rebuilding, and each
    # of those was pushed since the last time: rebuilding costs what pushing did.
    rebuilt: list[Open] = []
    while stack is not None and has_active(stack):
        rebuilt.append(stack)
        stack = stack.outer
    for element in reversed(rebuilt):
        stack = push(stack, element.name, element.src, False)
    return stack
