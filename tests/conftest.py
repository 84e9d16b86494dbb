"""Shared fixtures: a database per test on each engine, and the memory store on it.

Every test that uses `database_url` (and so `engine`, `store`) runs twice: on a SQLite file
(id "sqlite") and on Postgres (id "postgres"). TEST_DATABASES=sqlite or TEST_DATABASES=postgres
runs one leg only. An end-to-end test (one that runs the whole bot through `start_bot` or
`harness`) runs on the first selected engine only, unless it is marked `engines` (its
behaviour depends on the engine) or TEST_E2E_ENGINES=all asks for every engine.

`database_url` is migrated to head and holds no rows, as after the bot's first start: the
migrations run once per run, and each test starts from a copy (SQLite) or an emptied
database (Postgres), which is several times faster than migrating per test.
`empty_database_url` has no tables at all, for tests of the migrations themselves.
"""

import compileall
import gc
import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from bot.migrations import upgrade_database_async, upgrade_engine
from memory.db import create_engine, create_sessionmaker
from memory.store import MemoryStore
from memory.switch import MemorySwitch
from memory.undo import UndoLog
from tests import pg, process
from tests.builders import sqlite_url

ENGINES = ("sqlite", "postgres")
# The files whose tests take longest (processes, migration walks, benchmarks), with about the
# seconds one of their tests takes on a quiet machine. Each worker starts with its share of
# them, so none is left running one alone at the end (see order_for_workers).
SLOW_FILES = {
    "tests/test_migration_walk.py": 30,
    "tests/test_scale_out.py": 25,
    "tests/perf/test_smoke.py": 20,
    "tests/evals/test_cases.py": 20,
    "tests/test_restarts.py": 15,
    "tests/test_engines.py": 10,
    "tests/test_shutdown.py": 10,
    "tests/reminders/test_delivery_process.py": 10,
    "tests/test_db_outage.py": 8,
    "tests/test_process.py": 6,
    "tests/test_process_account.py": 6,
    "tests/test_database_url.py": 4,
    "tests/test_webhook.py": 4,
    "tests/test_migration_repair.py": 4,
    "tests/test_search_isolation.py": 4,
    "tests/test_alembic_cli.py": 3,
    "tests/test_backup.py": 3,
    "tests/test_backup_urls.py": 3,
}
# The fixture every end-to-end test uses, directly or through another fixture.
END_TO_END_FIXTURE = "start_bot"


def selected_engines() -> tuple[str, ...]:
    """Return the engines TEST_DATABASES asks for (comma-separated), all by default."""
    wanted = os.environ.get("TEST_DATABASES", "").replace(" ", "")
    if not wanted:
        return ENGINES
    names = tuple(dict.fromkeys(wanted.lower().split(",")))
    unknown = [name for name in names if name not in ENGINES]
    if unknown or not names:
        raise pytest.UsageError(
            f"TEST_DATABASES={wanted!r}: use sqlite, postgres or sqlite,postgres"
        )
    return names


ENGINE_PARAMS = [
    pytest.param(name, id=name, marks=getattr(pytest.mark, name)) for name in selected_engines()
]


def pytest_configure(config) -> None:
    """Register the markers of the two database legs; compile our packages once, first."""
    for name in ENGINES:
        config.addinivalue_line("markers", f"{name}: runs on the {name} leg of the suite")
    # Start `python -m bot` by forking an imported one (tests/zygote.py); TEST_FORK=0 does not.
    process.FORK = os.environ.get("TEST_FORK", "1") != "0"
    if not hasattr(config, "workerinput"):  # the controller, before any worker starts
        for package in ("bot", "memory", "evals"):
            compileall.compile_dir(Path(__file__).parent.parent / package, quiet=1)


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc) -> None:
    """Run an end-to-end test on the first selected engine only, unless marked `engines`."""
    if END_TO_END_FIXTURE not in metafunc.fixturenames or len(ENGINE_PARAMS) < 2:
        return
    if metafunc.definition.get_closest_marker("engines") is not None:
        return
    if os.environ.get("TEST_E2E_ENGINES", "").strip().lower() == "all":
        return
    chosen = [
        mark
        for mark in metafunc.definition.iter_markers("parametrize")
        if "database_url" in mark.args[0]
    ]
    if not chosen:  # a test that names its engine keeps it
        # As a mark, which pytest applies instead of the fixture's own params.
        only = pytest.mark.parametrize("database_url", ENGINE_PARAMS[:1], indirect=True)
        metafunc.definition.add_marker(only)


def order_for_workers(items: list, workers: int) -> list:
    """Order items so each worker's first share (xdist worksteal's split) starts with slow ones.

    worksteal hands the workers consecutive shares of the collection and lets an idle worker
    take the tail of a busy one's queue, so a slow test at the head of each share starts at
    once, and the quick ones fill in around it.
    """
    weight = {item: SLOW_FILES.get(item.nodeid.split("::")[0], 0) for item in items}
    slow = sorted(
        (item for item in items if weight[item]), key=lambda item: weight[item], reverse=True
    )
    quick = [item for item in items if not weight[item]]
    shares: list[list] = [[] for _ in range(workers)]
    loads = [0] * workers
    for item in slow:  # the heaviest first, each to the lightest share so far
        lightest = loads.index(min(loads))
        shares[lightest].append(item)
        loads[lightest] += weight[item]
    # The sizes worksteal gives: of what is left, an equal part to each worker in turn.
    ordered: list = []
    left = len(items)
    for index, share in enumerate(shares):
        size = left // (workers - index)
        left -= size
        fill = max(0, size - len(share))
        ordered += share + quick[:fill]
        quick = quick[fill:]
    return ordered + quick


def pytest_collection_finish(session) -> None:
    """Keep what imports and collection made out of the collector's way for the whole run."""
    # A full collection otherwise walks every imported module's objects again (~8% of a
    # worker's CPU in end-to-end tests); frozen, it walks what the tests make.
    gc.freeze()


def pytest_collection_modifyitems(config, items) -> None:
    """Start the slow tests first, spread over the xdist workers."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers > 1:
        items[:] = order_for_workers(items, workers)


def _check_selected(engine_name: str) -> None:
    """Skip a test that picked an engine (indirect parametrization) TEST_DATABASES leaves out."""
    if engine_name not in selected_engines():
        pytest.skip(f"TEST_DATABASES leaves out {engine_name}")


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory) -> Path:
    """Migrate a SQLite file to head once per run."""
    path = tmp_path_factory.mktemp("template") / "bot.db"
    pg.run(upgrade_database_async, sqlite_url(path))
    return path


@pytest.fixture(scope="session")
def postgres_database():
    """Create this run's Postgres database on first use; drop it when the run ends."""
    pg.require_postgres()
    name = pg.new_database_name()
    pg.create_database(name)
    yield name
    pg.drop_database(name)


@pytest.fixture(scope="session")
def postgres_tables(postgres_database) -> frozenset[str]:
    """Migrate this run's Postgres database to head once; return its tables."""
    pg.reset_database(postgres_database)
    pg.run(upgrade_database_async, pg.url_for(postgres_database))
    return pg.table_names(postgres_database)


@pytest.fixture(params=ENGINE_PARAMS)
def database_url(request, tmp_path) -> str:
    """Return the URL of a database migrated to head, with no rows."""
    _check_selected(request.param)
    if request.param == "sqlite":
        path = tmp_path / "bot.db"
        # The online backup API copies a consistent image, WAL or not.
        template = request.getfixturevalue("sqlite_template")
        with closing(sqlite3.connect(template)) as source, closing(sqlite3.connect(path)) as copy:
            source.backup(copy)
        return sqlite_url(path)
    name = request.getfixturevalue("postgres_database")
    tables = request.getfixturevalue("postgres_tables")
    if not pg.empty_tables(name, tables):
        # A test left a different schema behind: start again from nothing.
        pg.reset_database(name)
        pg.run(upgrade_database_async, pg.url_for(name))
    return pg.url_for(name)


@pytest.fixture(params=ENGINE_PARAMS)
def empty_database_url(request, tmp_path) -> str:
    """Return the URL of a database without any table: a new SQLite file, an emptied Postgres."""
    _check_selected(request.param)
    if request.param == "sqlite":
        return sqlite_url(tmp_path / "bot.db")
    name = request.getfixturevalue("postgres_database")
    pg.reset_database(name)
    return pg.url_for(name)


@pytest.fixture
async def engine(database_url):
    """Yield an engine on a database migrated to head."""
    engine = create_engine(database_url)
    await upgrade_engine(engine)
    yield engine
    await engine.dispose()


@pytest.fixture
def sessionmaker(engine):
    """Return a session factory on the test database."""
    return create_sessionmaker(engine)


@pytest.fixture
def store(sessionmaker) -> MemoryStore:
    """Return a memory store on the test database."""
    return MemoryStore(sessionmaker)


@pytest.fixture
def switch(sessionmaker) -> MemorySwitch:
    """Return the memory switch on the test database."""
    return MemorySwitch(sessionmaker)


@pytest.fixture
def undo_log(sessionmaker) -> UndoLog:
    """Return the undo log on the test database."""
    return UndoLog(sessionmaker)


@pytest.fixture
async def fakes():
    """Start the fake Bot API and Messages API servers on loopback."""
    from tests.fakes.anthropic_server import FakeAnthropic
    from tests.fakes.telegram_server import FakeTelegram

    async with FakeTelegram() as tg, FakeAnthropic() as model:
        yield tg, model
    # Telegram drops formatting it cannot nest without a word: the bot must never send such.
    assert tg.mangled == [], tg.mangled


@pytest.fixture
async def start_bot(fakes, database_url, tmp_path):
    """Yield a function that starts a bot on a migrated database, with settings overridden.

    app_options are keyword arguments of build_application, such as max_concurrent_updates.
    Its file cache is the test's folder `files` unless file_cache_dir says otherwise.
    """
    from bot.migrations import upgrade_database_async
    from tests.harness import BotHarness, make_settings

    tg, model = fakes
    started: list[BotHarness] = []

    async def start(url: str = database_url, *, app_options=None, **overrides) -> BotHarness:
        overrides.setdefault("file_cache_dir", tmp_path / "files")
        if url != database_url:  # database_url is at head already; a check costs ~30 ms
            await upgrade_database_async(url)
        settings = make_settings(tg, model, url, **overrides)
        bot = await BotHarness(tg, model, settings, app_options).start()
        started.append(bot)
        return bot

    yield start
    for bot in reversed(started):
        await bot.stop()


@pytest.fixture
async def harness(start_bot):
    """Yield the running bot, on a migrated database, wired to the fakes."""
    return await start_bot()
