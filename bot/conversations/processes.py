"""Which bot process this is, and whether one that ran on this host is gone.

A process's row in bot_processes names its host, pid and start time. On the same host a
process is known gone at once when its pid no longer exists, or now belongs to a process that
started at another time (pids are reused: a container's first process is always pid 1).
"""

import os
import socket
from dataclasses import dataclass
from pathlib import Path

# /proc/<pid>/stat's fields after the command's closing parenthesis: the start time is the 20th.
_STARTTIME_FIELD = 19


@dataclass(frozen=True)
class ProcessId:
    """A process on a host: its pid, and when it started (None where that cannot be read)."""

    host: str
    pid: int
    started: int | None


def started_at(pid: int) -> int | None:
    """Return when the process started, in clock ticks since boot, or None if not readable."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # no /proc (not Linux), or the process is gone
        return None
    # The command may hold spaces and parentheses: the fields start after the last ")".
    fields = stat.rpartition(")")[2].split()
    try:
        return int(fields[_STARTTIME_FIELD])
    except (IndexError, ValueError):
        return None


def this_process() -> ProcessId:
    """Return this process's host, pid and start time."""
    pid = os.getpid()
    return ProcessId(socket.gethostname()[:64], pid, started_at(pid))


def gone_here(process: ProcessId) -> bool:
    """Tell whether a process of this host is known gone (False when it cannot be told)."""
    if process.pid <= 0:  # 0 and negative pids name process groups, never one process
        return False
    try:
        os.kill(process.pid, 0)  # signal 0: only asks whether the pid exists
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # another user's process has the pid: perhaps reused, the start time tells
    if process.started is None:
        return False
    now_started = started_at(process.pid)
    return now_started is not None and now_started != process.started
