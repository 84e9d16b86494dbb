"""SQLite statements in one trip to aiosqlite's thread instead of four.

SQLAlchemy's aiosqlite adapter makes each statement four round trips to the thread that owns
the connection (open a cursor, execute, fetch, close), each a wake-up of that thread and then
of the event loop. A turn runs several statements, so those trips were most of the bot's own
time per message (docs/performance.md). Here a statement is one function run in that thread:
execute, fetch every row, close; the rows come back together. Transactions, errors and
results are SQLAlchemy's as before, but a commit or rollback with no transaction open (the
end of a session that only read) makes no trip. Used only where SQLAlchemy's adapter has
the shape this was written against (2.1.9; pyproject pins 2.1.9 to 2.2); elsewhere
create_engine keeps the stock adapter.
"""

import collections
import sqlite3
from typing import Any

import aiosqlite
from sqlalchemy.dialects.sqlite import aiosqlite as adapter
from sqlalchemy.util import EMPTY_DICT

Run = tuple[Any, list[Any], int, Any]  # description, rows, rowcount, lastrowid


def _run(conn: sqlite3.Connection, operation: Any, parameters: Any, many: bool) -> Run:
    """Run one statement on the connection's own thread and take everything it returns."""
    cursor = conn.cursor()
    try:
        if many:
            cursor.executemany(operation, parameters)
        elif parameters is None:
            cursor.execute(operation)
        else:
            cursor.execute(operation, parameters)
        description = cursor.description
        rows = cursor.fetchall() if description else []
        return description, rows, cursor.rowcount, cursor.lastrowid
    finally:
        cursor.close()


class OneTripCursor(adapter.AsyncAdapt_aiosqlite_cursor):
    """A cursor whose execute is one trip to aiosqlite's thread, with the rows buffered."""

    __slots__ = ("_description", "_lastrowid", "_rowcount")

    def __init__(self, adapt_connection: Any) -> None:
        # No aiosqlite cursor: opening one would be a trip of its own.
        self._adapt_connection = adapt_connection
        self._connection = adapt_connection._connection
        self._soft_closed_memoized = EMPTY_DICT
        self._rows = collections.deque()
        self._description: Any = None
        self._rowcount = -1
        self._lastrowid: Any = None

    @property
    def description(self) -> Any:
        """Return the last statement's column description, None if it returned no rows."""
        return self._description

    @property
    def rowcount(self) -> int:
        """Return the rows the last statement changed."""
        return self._rowcount

    @property
    def lastrowid(self) -> Any:
        """Return the rowid of the last row inserted."""
        return self._lastrowid

    @property
    def arraysize(self) -> int:
        """Return how many rows fetchmany returns by default, as sqlite3 does."""
        return 1

    @arraysize.setter
    def arraysize(self, value: int) -> None:
        """Ignore the size: every row is already fetched."""

    async def _async_soft_close(self) -> None:
        """Keep the buffered rows: there is no driver cursor left to close."""

    def close(self) -> None:
        """Drop the rows not fetched."""
        self._rows.clear()

    async def _trip(self, operation: Any, parameters: Any, many: bool) -> None:
        """Run the statement in one trip, under the connection's mutex, and keep its result."""
        connection = self._connection
        async with self._adapt_connection._execute_mutex:
            result: Run = await connection._execute(
                _run, connection._conn, operation, parameters, many
            )
        self._description, rows, self._rowcount, self._lastrowid = result
        self._rows = collections.deque(rows)

    async def _execute_async(self, operation: Any, parameters: Any) -> None:
        await self._trip(operation, parameters, many=False)

    async def _executemany_async(self, operation: Any, seq_of_parameters: Any) -> None:
        await self._trip(operation, seq_of_parameters, many=True)


class OneTripConnection(adapter.AsyncAdapt_aiosqlite_connection):
    """SQLAlchemy's aiosqlite connection, with one-trip cursors and no trip to end nothing."""

    __slots__ = ()
    _cursor_cls = OneTripCursor

    def commit(self) -> None:
        """Commit, unless SQLite has no transaction open (a session that only read)."""
        if self._in_transaction():
            super().commit()

    def rollback(self) -> None:
        """Roll back, unless SQLite has no transaction open: the pool ends every read so."""
        if self._in_transaction():
            super().rollback()

    def _in_transaction(self) -> bool:
        """Tell whether SQLite has a transaction open; True when it cannot tell."""
        # Read between statements (SQLAlchemy ends a transaction with none running), from
        # sqlite3's flag: a read opens no transaction here, as statements begin one only
        # to write. Without one, COMMIT and ROLLBACK are no-ops costing a trip each.
        connection = self._connection._connection
        return connection is None or connection.in_transaction


class OneTripDBAPI(adapter.AsyncAdapt_aiosqlite_dbapi):
    """SQLAlchemy's aiosqlite DBAPI, whose connections make one-trip cursors."""

    def connect(self, *arg: Any, **kw: Any) -> Any:
        """Connect as SQLAlchemy does, then give the connection one-trip cursors."""
        connection = super().connect(*arg, **kw)
        # The same slots, so the class can change in place.
        connection.__class__ = OneTripConnection
        return connection


def supported() -> bool:
    """Tell whether the installed SQLAlchemy adapts aiosqlite the way this module expects."""
    base = adapter.AsyncAdapt_aiosqlite_cursor
    return (
        hasattr(adapter.AsyncAdapt_aiosqlite_connection, "_cursor_cls")
        and hasattr(base, "_execute_async")
        and hasattr(base, "_executemany_async")
        and hasattr(aiosqlite.Connection, "_execute")
    )


def one_trip_dbapi() -> OneTripDBAPI | None:
    """Return the DBAPI for create_async_engine(module=...), or None to keep the stock one."""
    return OneTripDBAPI(aiosqlite, sqlite3) if supported() else None
