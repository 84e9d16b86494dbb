"""Spare start-up the collector's full passes; then freeze what it made, return what it freed."""

import ctypes
import gc
import logging
import sys

logger = logging.getLogger(__name__)

# Importing makes some 260,000 objects that live as long as the process. Each full pass of the
# collector scans every one of them: together a third of a second of start-up. The young
# passes stay on; they collect what importing throws away.
_NEVER = 1_000_000_000
# Python's own: a full pass after ten passes of the middle generation.
FULL_PASS_EVERY = 10


def hold_full_passes() -> None:
    """Let the collector pass over young objects only, while start-up imports."""
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, _NEVER)


def resume_full_passes() -> None:
    """Freeze what start-up made, so no pass scans it again, and let full passes run again."""
    young, middle, full = gc.get_threshold()
    if full != _NEVER:
        return
    gc.freeze()
    gc.set_threshold(young, middle, FULL_PASS_EVERY)
    logger.debug("full collections on, %d objects of start-up frozen", gc.get_freeze_count())


def give_back_freed_memory() -> None:
    """Hand the pages the C allocator holds free back to the system (glibc's malloc_trim)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        trim = ctypes.CDLL(None).malloc_trim  # glibc's; musl and others have none
    except (OSError, AttributeError):
        return
    trim(0)
