"""The cases, as data: a table per theme, and CASES, all of them in a fixed order.

A table per theme rather than one module (some 30 cases with their rules do not fit one
readable module) or a file per case (30 files repeating the same imports, and nowhere to read a
theme's cases side by side). Imports: evals.case, evals.rules, evals.judge and memory only.
"""

import fnmatch

from evals.case import Case
from evals.cases import (
    changes,
    context,
    every_rule,
    not_saved,
    reminders,
    shapes,
    spec,
    trust,
    web,
)

CASES: tuple[Case, ...] = (
    *spec.CASES,
    *not_saved.CASES,
    *changes.CASES,
    *context.CASES,
    *reminders.CASES,
    *trust.CASES,
    *web.CASES,
    *every_rule.CASES,
    *shapes.CASES,
)


class UnknownCase(ValueError):
    """A --case pattern matches no case."""


def select(patterns: list[str] | None, cases: tuple[Case, ...] = CASES) -> list[Case]:
    """Return the cases matching any name or glob, in table order; all when none are given."""
    if not patterns:
        return list(cases)
    names = [case.name for case in cases]
    unmatched = [p for p in patterns if not fnmatch.filter(names, p)]
    if unmatched:
        raise UnknownCase(
            f"no case matches {', '.join(unmatched)} (see --list for the {len(names)} cases)"
        )
    return [case for case in cases if any(fnmatch.fnmatchcase(case.name, p) for p in patterns)]
