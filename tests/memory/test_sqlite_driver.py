"""SQLite statements make one trip to aiosqlite's thread, with SQLAlchemy's results and errors."""

from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.connectors.asyncio import AsyncAdapt_dbapi_cursor
from sqlalchemy.dialects.sqlite.aiosqlite import AsyncAdapt_aiosqlite_connection
from sqlalchemy.exc import IntegrityError

from memory.db import create_engine
from memory.sqlite_driver import OneTripConnection, supported

one_trip = pytest.mark.skipif(not supported(), reason="SQLAlchemy's stock adapter is in use")


@pytest.fixture
async def sqlite_engine(tmp_path):
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'trips.db'}")
    yield engine
    await engine.dispose()


def count_trips(driver: Any, trips: list[object]) -> None:
    """Note in trips each function the driver sends to its thread."""
    execute = driver._execute

    async def counted(fn, *args, **kwargs):
        trips.append(fn)
        return await execute(fn, *args, **kwargs)

    driver._execute = counted


@one_trip
async def test_a_statement_is_one_trip_to_the_thread(sqlite_engine):
    async with sqlite_engine.begin() as connection:
        await connection.execute(text("CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT)"))
        raw = await connection.get_raw_connection()
        assert isinstance(raw.dbapi_connection, OneTripConnection)
        driver = raw.driver_connection
        trips: list[object] = []
        count_trips(driver, trips)
        try:
            rows = await connection.execute(
                text("INSERT INTO t (b) VALUES ('x'), ('y') RETURNING a")
            )
            assert rows.scalars().all() == [1, 2]
            assert len(trips) == 1  # the stock adapter takes four: cursor, execute, fetch, close
        finally:
            del driver._execute


@one_trip
async def test_results_rowcounts_many_rows_and_errors_are_sqlalchemys(sqlite_engine):
    async with sqlite_engine.begin() as connection:
        await connection.execute(text("CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT)"))
        inserted = await connection.execute(
            text("INSERT INTO t (b) VALUES (:b)"), [{"b": str(n)} for n in range(50)]
        )
        assert inserted.rowcount == 50
        one = await connection.execute(text("INSERT INTO t (b) VALUES ('last')"))
        assert (one.rowcount, one.lastrowid) == (1, 51)
        updated = await connection.execute(text("UPDATE t SET b = 'even' WHERE a % 2 = 0"))
        assert updated.rowcount == 25
        result = await connection.execute(text("SELECT a FROM t ORDER BY a"))
        assert result.fetchone() == (1,)
        assert result.fetchmany(2) == [(2,), (3,)]
        assert len(result.fetchall()) == 48
        with pytest.raises(IntegrityError):
            await connection.execute(text("INSERT INTO t (a, b) VALUES (1, 'again')"))


@one_trip
async def test_a_rollback_undoes_what_the_transaction_wrote(sqlite_engine):
    async with sqlite_engine.begin() as connection:
        await connection.execute(text("CREATE TABLE t (a INTEGER)"))
    async with sqlite_engine.connect() as connection:
        await connection.execute(text("INSERT INTO t VALUES (1)"))
        await connection.rollback()
        assert (await connection.execute(text("SELECT count(*) FROM t"))).scalar() == 0


@one_trip
async def test_ending_a_read_makes_no_trip_and_ending_a_write_still_does(sqlite_engine):
    async with sqlite_engine.begin() as connection:
        await connection.execute(text("CREATE TABLE t (a INTEGER)"))
    trips: list[object] = []
    for end in ("rollback", "commit"):
        async with sqlite_engine.connect() as connection:
            driver = (await connection.get_raw_connection()).driver_connection
            count_trips(driver, trips)
            try:
                await connection.execute(text("SELECT count(*) FROM t"))
                trips.clear()
                await getattr(connection, end)()
                assert trips == []  # no transaction open: nothing to end, no trip
                await connection.execute(text("INSERT INTO t VALUES (1)"))
                trips.clear()
                await getattr(connection, end)()
                assert len(trips) == 1
            finally:
                del driver._execute
    async with sqlite_engine.connect() as connection:
        # The rolled-back row is gone, the committed one kept.
        assert (await connection.execute(text("SELECT count(*) FROM t"))).scalar() == 1


async def test_an_adapter_of_another_shape_keeps_sqlalchemys_own(tmp_path, monkeypatch):
    # A SQLAlchemy whose adapter lacks a method the one-trip cursor overrides (as 2.0's does).
    monkeypatch.delattr(AsyncAdapt_dbapi_cursor, "_executemany_async")
    assert not supported()
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'stock.db'}")
    try:
        async with engine.begin() as connection:
            raw = await connection.get_raw_connection()
            assert type(raw.dbapi_connection) is AsyncAdapt_aiosqlite_connection
            assert (await connection.execute(text("SELECT 41 + 1"))).scalar() == 42
    finally:
        await engine.dispose()
