"""Every row an owner has in the database, found from the live schema, not from the models.

The tables are read with SQLAlchemy's inspector from the migrated database, so a table a
migration adds is counted whether or not a model imports it. A row is the owner's when a
column of OWNER_COLUMNS holds the owner's id, or when a foreign key points at a parent row
that is the owner's. A table with neither fails the count: /delete_my_data must know whose
its rows are, or say here why they are nobody's.
"""

from typing import Any

from sqlalchemy import Connection, and_, column, exists, func, inspect, or_, select, table
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.sql.expression import TableClause

# The columns the schema names an owner by: the user in a private chat, the group in a group
# (a chat's id is its owner's id: bot/telegram/context.py owner_id).
OWNER_COLUMNS = ("owner_id", "chat_id")
# Tables whose rows are nobody's data, and why.
NOT_OWNED = {
    "alembic_version": "the schema's version",
    # Which process answers a chat now; the deletion holds it, and the lease keeper lets it
    # go at its next tick (bot/upkeep/erasure.py).
    "turn_leases": "a process's claim on a chat",
    # Which processes run (host, pid, start time), so a dead one's leases are freed soon.
    "bot_processes": "a running process",
    # Which process ran a periodic job (retention, a nightly tidy pass) for which period; a
    # tidy pass's period names the owner's id and local date only, and done claims are
    # deleted after a while (bot/conversations/job_claims.py KEPT).
    "job_claims": "a process's claim on a periodic job",
    # SQLite's external-content index: its rows are conversation_turns' (by triggers).
    "conversation_search": "the index of conversation_turns",
}
# The tables SQLite's FTS5 keeps for each of its virtual tables.
FTS5_SHADOWS = ("config", "content", "data", "docsize", "idx")


def _schema(sync: Connection) -> dict[str, dict[str, Any]]:
    """Return each table's columns and foreign keys, as the database has them."""
    found = inspect(sync)
    shadows: set[str] = set()
    if sync.dialect.name == "sqlite":
        virtual = sync.exec_driver_sql(
            "SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%'"
        ).scalars()
        shadows = {f"{name}_{suffix}" for name in virtual for suffix in FTS5_SHADOWS}
    return {
        name: {
            "columns": [c["name"] for c in found.get_columns(name)],
            "foreign_keys": found.get_foreign_keys(name),
        }
        for name in found.get_table_names()
        if name not in shadows and name not in NOT_OWNED
    }


def _table(schema: dict[str, dict[str, Any]], name: str) -> TableClause:
    """Return a table with its columns, as the database has them."""
    return table(name, *(column(c) for c in schema[name]["columns"]))


def _owned_by(schema: dict[str, dict[str, Any]], me: TableClause, owner: int) -> Any:
    """Return the condition that a row of the table is the owner's, or None if none says."""
    columns = schema[me.name]["columns"]
    direct = [me.c[c] == owner for c in OWNER_COLUMNS if c in columns]
    if direct:
        return or_(*direct)
    through = []
    for key in schema[me.name]["foreign_keys"]:
        if key["referred_table"] == me.name:
            continue  # a row pointing at another of its table: whose it is comes from elsewhere
        parent_columns = schema.get(key["referred_table"], {}).get("columns", [])
        owners = [c for c in OWNER_COLUMNS if c in parent_columns]
        if not owners:
            continue
        parent = _table(schema, key["referred_table"])
        joined = and_(
            *(
                me.c[mine] == parent.c[theirs]
                for mine, theirs in zip(
                    key["constrained_columns"], key["referred_columns"], strict=True
                )
            )
        )
        through.append(exists().where(joined, or_(*(parent.c[c] == owner for c in owners))))
    return or_(*through) if through else None


async def owner_rows(engine: AsyncEngine, owner: int) -> dict[str, int]:
    """Count each table's rows kept for the owner; fail for a table whose owner is unknown."""
    counts: dict[str, int] = {}
    async with engine.connect() as connection:
        schema = await connection.run_sync(_schema)
        for name in sorted(schema):
            me = _table(schema, name)
            condition = _owned_by(schema, me, owner)
            assert condition is not None, (
                f"{name}: whose rows are these? Add it to bot/upkeep/erasure.py (a column of "
                f"{OWNER_COLUMNS} or a foreign key to a table with one), or to NOT_OWNED here"
            )
            found = await connection.scalar(select(func.count()).select_from(me).where(condition))
            counts[name] = found or 0
    return counts
