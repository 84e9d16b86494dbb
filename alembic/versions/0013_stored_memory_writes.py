"""A turn keeps the memory writes of its tool results; a summary keeps its list of them apart.

Until now compaction read which memories a tool call saved, updated or forgot out of the
result's wording, and split the list of memory changes back out of the stored summary by its
heading line. Now each is stored: conversation_turns.memory_writes, and
conversations.summary_changes beside the summary's prose. Rows already stored are read here,
once, as the bot read them before.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-26 01:20:00.000000
"""

import re
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# How the results of the memory writes began, and how the list was headed, until now.
SAVED = re.compile(r"^Saved as ([A-Za-z0-9]{8})\b")
UPDATED = re.compile(r"^Updated ([A-Za-z0-9]{8}) \(version \d+\)")
FORGOT = re.compile(r"^Forgot ([A-Za-z0-9]{8}) \('(.*)'\)\. The user can undo", re.DOTALL)
HEADING = (
    "Memory changes made earlier in this conversation, from your tool results (the memory "
    "block does not show them; use these ids):"
)

TURNS = sa.table(
    "conversation_turns",
    sa.column("id", sa.Integer()),
    sa.column("conversation_id", sa.Integer()),
    sa.column("content", sa.JSON()),
    sa.column("memory_writes", sa.JSON()),
)
CONVERSATIONS = sa.table(
    "conversations",
    sa.column("id", sa.Integer()),
    sa.column("summary", sa.Text()),
    sa.column("summary_changes", sa.JSON()),
)


def _result_text(block: dict[str, Any]) -> str:
    """Return a tool_result's content as text."""
    content = block.get("content", "")
    if isinstance(content, str):
        return content
    return "\n".join(part["text"] for part in content if part.get("type") == "text")


def _write(call: dict[str, Any], result: str) -> dict[str, Any] | None:
    """Return the write a successful memory call made, read as the bot read it, else None."""
    name, arguments = call["name"], call.get("input") or {}
    subject = str(arguments["subject"]) if arguments.get("subject") else None
    content = str(arguments.get("content", ""))
    write = {"tool_use_id": call["id"], "subject": None, "content": content}
    if name == "add_to_memory" and (match := SAVED.match(result)):
        return {**write, "kind": "added", "memory_id": match.group(1), "subject": subject}
    if name == "update_memory" and (match := UPDATED.match(result)):
        return {**write, "kind": "updated", "memory_id": match.group(1)}
    if name == "forget_memory" and (match := FORGOT.match(result)):
        return {**write, "kind": "forgotten", "memory_id": match.group(1), "content": match[2]}
    return None


def _backfill_turns(connection: sa.Connection) -> None:
    """Store with each turn of tool results the writes they made."""
    query = (
        sa.select(TURNS.c.id, TURNS.c.conversation_id, TURNS.c.content)
        .where(sa.cast(TURNS.c.content, sa.Text).like("%tool_use%"))
        .order_by(TURNS.c.conversation_id, TURNS.c.id)
    )
    calls: dict[str, dict[str, Any]] = {}
    for row in connection.execute(query).all():
        blocks = [block for block in row.content or [] if isinstance(block, dict)]
        calls.update({b["id"]: b for b in blocks if b.get("type") == "tool_use"})
        writes = [
            write
            for block in blocks
            if block.get("type") == "tool_result" and not block.get("is_error")
            and (call := calls.get(block.get("tool_use_id", ""))) is not None
            and (write := _write(call, _result_text(block))) is not None
        ]  # fmt: skip
        if writes:
            connection.execute(
                TURNS.update().where(TURNS.c.id == row.id).values(memory_writes=writes)
            )


def _split(summary: str) -> tuple[str | None, list[str]] | None:
    """Return a summary's prose and its list of changes, or None if it has no list."""
    lines = summary.split("\n")
    # The last heading line is the list's: prose may quote the heading, list lines cannot.
    at = max((i for i, line in enumerate(lines) if line == HEADING), default=None)
    listed = [line for line in lines[at + 1 :] if line] if at is not None else []
    if at is None or not all(line.startswith("- ") for line in listed):
        return None
    return "\n".join(lines[:at]).strip() or None, listed


def upgrade() -> None:
    """Apply this revision."""
    # Plain ALTERs on both engines: SQLite's batch mode would rebuild the tables and lose
    # the triggers that keep conversation_search in step.
    op.add_column("conversation_turns", sa.Column("memory_writes", sa.JSON(), nullable=True))
    op.add_column("conversations", sa.Column("summary_changes", sa.JSON(), nullable=True))
    connection = op.get_bind()
    _backfill_turns(connection)
    summaries = sa.select(CONVERSATIONS.c.id, CONVERSATIONS.c.summary).where(
        CONVERSATIONS.c.summary.like(f"%{HEADING}%")
    )
    for row in connection.execute(summaries).all():
        if (split := _split(row.summary)) is not None:
            prose, listed = split
            connection.execute(
                CONVERSATIONS.update()
                .where(CONVERSATIONS.c.id == row.id)
                .values(summary=prose, summary_changes=listed or None)
            )


def downgrade() -> None:
    """Revert this revision: each summary's list goes back under its heading in the text."""
    connection = op.get_bind()
    listed = sa.select(CONVERSATIONS.c.id, CONVERSATIONS.c.summary, CONVERSATIONS.c.summary_changes)
    rows = connection.execute(listed.where(CONVERSATIONS.c.summary_changes.is_not(None))).all()
    for row in rows:
        ledger = "\n".join([HEADING, *row.summary_changes]) if row.summary_changes else ""
        summary = "\n\n".join(part for part in (row.summary, ledger) if part) or None
        connection.execute(
            CONVERSATIONS.update().where(CONVERSATIONS.c.id == row.id).values(summary=summary)
        )
    op.execute("ALTER TABLE conversations DROP COLUMN summary_changes")
    op.execute("ALTER TABLE conversation_turns DROP COLUMN memory_writes")
