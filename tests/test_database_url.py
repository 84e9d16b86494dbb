"""DATABASE_URL as hosts set it: mapped to asyncpg, with libpq's sslmode honoured for real."""

import asyncio
import contextlib
import logging
import os
import shutil
import socket
import sqlite3
import ssl
import struct
import subprocess
import sys
import threading
from contextlib import closing
from pathlib import Path

import pytest
from sqlalchemy import text as sql
from sqlalchemy.engine import make_url

from bot.settings import SettingsError, load_settings
from memory.db import SSL_MODES, DatabaseUrlError, create_engine, parse_database_url
from tests import pg
from tests.process import run_merged

ROOT = Path(__file__).resolve().parent.parent

# --- the URL forms hosts hand out ---------------------------------------------------------


@pytest.mark.parametrize(
    "given",
    [
        "postgres://user:pass@db.example.com:5432/app",
        "postgresql://user:pass@db.example.com:5432/app",
        "postgresql+psycopg2://user:pass@db.example.com:5432/app",
        "postgresql+asyncpg://user:pass@db.example.com:5432/app",
    ],
)
def test_postgres_urls_map_to_asyncpg_and_keep_every_part(given):
    url = parse_database_url(given).url
    assert url.drivername == "postgresql+asyncpg"
    assert (url.username, url.password, url.host, url.port, url.database) == (
        "user",
        "pass",
        "db.example.com",
        5432,
        "app",
    )
    assert dict(url.query) == {}


def test_a_password_with_reserved_characters_survives():
    url = parse_database_url("postgres://u:p%40ss%2Fw%3Ard@h:5432/d").url
    assert url.password == "p@ss/w:rd"


@pytest.mark.parametrize("mode", SSL_MODES)
def test_every_libpq_sslmode_becomes_asyncpgs_ssl_argument(mode):
    target = parse_database_url(f"postgres://u:p@h:5432/d?sslmode={mode}")
    assert dict(target.url.query) == {"ssl": mode}
    assert target.connect_args == {}


def test_jdbc_style_ssl_true_means_require_as_in_libpq():
    assert dict(parse_database_url("postgres://h/d?ssl=true").url.query) == {"ssl": "require"}


def test_an_unknown_sslmode_is_refused_by_name():
    with pytest.raises(DatabaseUrlError, match="unknown sslmode 'required'"):
        parse_database_url("postgres://h/d?sslmode=required")


def test_certificate_files_and_server_settings_travel_in_a_dsn_asyncpg_reads():
    target = parse_database_url(
        "postgres://u:p@h/d?sslmode=verify-full&sslrootcert=/certs/root.pem"
        "&application_name=membot&connect_timeout=7"
    )
    assert dict(target.url.query) == {"ssl": "verify-full"}
    assert target.connect_args == {
        "dsn": "postgresql://?sslrootcert=%2Fcerts%2Froot.pem&application_name=membot",
        "timeout": 7.0,
    }


def test_options_asyncpg_lacks_are_ignored_with_a_warning(caplog):
    target = parse_database_url("postgres://u:p@h/d?sslmode=require&channel_binding=require")
    assert target.ignored == ("channel_binding",)
    with caplog.at_level(logging.WARNING, logger="memory.db"):
        create_engine("postgres://u:p@h/d?sslmode=require&channel_binding=require")
    assert "channel_binding is not supported" in caplog.text


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("sqlite:///./data/bot.db", "sqlite+aiosqlite:///./data/bot.db"),
        ("sqlite+aiosqlite:///./data/bot.db", "sqlite+aiosqlite:///./data/bot.db"),
        ("sqlite+aiosqlite:////abs/bot.db", "sqlite+aiosqlite:////abs/bot.db"),
    ],
)
def test_sqlite_urls_use_aiosqlite(given, expected):
    assert parse_database_url(given).url.render_as_string() == expected


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("mysql://u:secretpw@h/d", "must be a SQLite or Postgres URL, not 'mysql'"),
        ("not a url secretpw", "is not a database URL"),
    ],
)
def test_unusable_urls_are_named_without_repeating_the_password(given, message):
    with pytest.raises(DatabaseUrlError, match=message) as caught:
        parse_database_url(given)
    assert "secretpw" not in str(caught.value)


def test_settings_default_to_the_sqlite_file_and_reject_a_bad_url_in_one_line(monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    settings = load_settings(_env_file=None, telegram_bot_token="t", anthropic_api_key="k")
    assert parse_database_url(settings.database_url).url.render_as_string() == (
        "sqlite+aiosqlite:///./data/bot.db"
    )
    monkeypatch.setenv("DATABASE_URL", "postgres://u:secretpw@h/d?sslmode=bogus")
    with pytest.raises(SettingsError) as caught:
        load_settings(_env_file=None, telegram_bot_token="t", anthropic_api_key="k")
    assert str(caught.value).startswith("Invalid settings: DATABASE_URL has an unknown sslmode")
    assert "secretpw" not in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "given",
    [
        "sqlite://",
        "sqlite:///:memory:",
        "sqlite+aiosqlite://",
        "sqlite+aiosqlite:///:memory:",
        "sqlite:///file::memory:",
        "sqlite+aiosqlite:///file::memory:?cache=shared&uri=true",
        "sqlite:///file:bot?mode=memory&cache=shared&uri=true",
    ],
)
def test_an_in_memory_sqlite_database_is_refused_in_one_line(monkeypatch, given):
    monkeypatch.setenv("DATABASE_URL", given)
    with pytest.raises(SettingsError) as caught:
        load_settings(_env_file=None, telegram_bot_token="t", anthropic_api_key="k")
    assert str(caught.value) == (
        "Invalid settings: DATABASE_URL is an in-memory SQLite database, which each connection "
        "sees empty (use a file, like sqlite+aiosqlite:///./data/bot.db)"
    )


def test_a_sqlite_file_uri_is_still_a_file():
    target = parse_database_url("sqlite:///file:data/bot.db?mode=rwc&uri=true")
    assert target.url.database == "file:data/bot.db"


# --- sslmode for real: asyncpg through a TLS-terminating proxy in front of Postgres ---------

SSL_REQUEST = 80877103
GSSENC_REQUEST = 80877104


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def certificates(tmp_path_factory) -> dict[str, Path]:
    """Make a CA, a certificate for 127.0.0.1 and one for another name, and a stranger CA."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed to make test certificates")
    folder = tmp_path_factory.mktemp("tls")
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    for ca in ("ca", "stranger"):
        _openssl(
            "req", "-x509", *key, "-keyout", f"{ca}.key", "-out", f"{ca}.pem", "-days", "2",
            "-subj", f"/CN=Test {ca}", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=folder,
        )  # fmt: skip
    for name, san in (("server", "IP:127.0.0.1"), ("elsewhere", "DNS:db.elsewhere.example")):
        (folder / f"{name}.ext").write_text(
            f"subjectAltName={san}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
        )
        _openssl(
            "req", *key, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}",
            cwd=folder,
        )  # fmt: skip
        _openssl(
            "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-out", f"{name}.pem", "-extfile", f"{name}.ext",
            cwd=folder,
        )  # fmt: skip
    return {p.stem: p for p in folder.glob("*.pem")} | {"folder": folder}


class TlsProxy:
    """Answer an SSLRequest like a Postgres server with TLS (or without), then relay to ours.

    Plain threads and blocking sockets: the client under test owns the event loop.
    """

    def __init__(self, certificate: Path | None = None, key: Path | None = None):
        self.context = None
        if certificate is not None:
            self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            self.context.load_cert_chain(certificate, key)
        self.sessions: list[bool] = []  # one per relayed connection: did it use TLS?
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._sockets: list[socket.socket] = []
        self._threads: list[threading.Thread] = []

    @property
    def port(self) -> int:
        return self._listener.getsockname()[1]

    def __enter__(self) -> "TlsProxy":
        self._spawn(self._accept)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for sock in [self._listener, *self._sockets]:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked on it
            sock.close()
        for thread in self._threads:
            thread.join(timeout=5)

    def _spawn(self, target, *args) -> threading.Thread:
        thread = threading.Thread(target=target, args=args, daemon=True)
        self._threads.append(thread)
        thread.start()
        return thread

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            self._sockets.append(client)
            self._spawn(self._serve, client)

    def _serve(self, client: socket.socket) -> None:
        try:
            head = _receive_exactly(client, 8)
            encrypted = False
            while struct.unpack("!ii", head)[1] in (SSL_REQUEST, GSSENC_REQUEST):
                if struct.unpack("!ii", head)[1] == GSSENC_REQUEST or self.context is None:
                    client.sendall(b"N")
                else:
                    client.sendall(b"S")
                    client = self.context.wrap_socket(client, server_side=True)
                    self._sockets.append(client)
                    encrypted = True
                head = _receive_exactly(client, 8)
            self.sessions.append(encrypted)
            upstream_url = make_url(pg.ADMIN_URL)
            upstream = socket.create_connection((upstream_url.host, upstream_url.port or 5432))
            self._sockets.append(upstream)
            upstream.sendall(head)
            self._spawn(_relay, upstream, client)
            _relay(client, upstream)
        except (OSError, EOFError):
            pass  # the client gave up, as a failed verification makes it do


def _receive_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def _relay(source: socket.socket, target: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            target.sendall(data)
    with contextlib.suppress(OSError):
        target.shutdown(socket.SHUT_RDWR)


@pytest.fixture
def tls_env(monkeypatch, tmp_path):
    """Keep asyncpg from finding the developer's own certificates or sslmode."""
    pg.require_postgres()
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("PGSSLMODE", "PGSSLROOTCERT", "PGSSLCERT", "PGSSLKEY", "PGSSLCRL"):
        monkeypatch.delenv(name, raising=False)


def _proxied_url(proxy: TlsProxy, host: str = "127.0.0.1") -> str:
    admin = make_url(pg.ADMIN_URL)
    credentials = (admin.username or "") + (f":{admin.password}" if admin.password else "")
    return f"postgres://{credentials}@{host}:{proxy.port}/{admin.database}"


async def _connects(url: str) -> bool:
    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            return (await connection.execute(sql("SELECT 1"))).scalar() == 1
    finally:
        await engine.dispose()


@pytest.mark.parametrize(
    ("mode", "encrypted"),
    [
        ("disable", False),
        ("allow", False),  # libpq and asyncpg try plain first and only then TLS
        ("prefer", True),
        ("require", True),
    ],
)
async def test_unverified_modes_connect_encrypted_or_not_as_libpq_would(
    tls_env, certificates, mode, encrypted
):
    with TlsProxy(certificates["server"], certificates["folder"] / "server.key") as proxy:
        assert await _connects(_proxied_url(proxy) + f"?sslmode={mode}")
    assert proxy.sessions[-1] is encrypted


@pytest.mark.parametrize("mode", ["verify-ca", "verify-full"])
async def test_verifying_modes_connect_with_the_right_root_certificate(tls_env, certificates, mode):
    root = certificates["ca"]
    with TlsProxy(certificates["server"], certificates["folder"] / "server.key") as proxy:
        assert await _connects(_proxied_url(proxy) + f"?sslmode={mode}&sslrootcert={root}")
    assert proxy.sessions == [True]


@pytest.mark.parametrize("mode", ["verify-ca", "verify-full"])
async def test_verifying_modes_refuse_a_server_signed_by_another_ca(tls_env, certificates, mode):
    stranger = certificates["stranger"]
    with TlsProxy(certificates["server"], certificates["folder"] / "server.key") as proxy:
        with pytest.raises(ssl.SSLCertVerificationError, match="certificate verify failed"):
            await _connects(_proxied_url(proxy) + f"?sslmode={mode}&sslrootcert={stranger}")


async def test_verify_full_checks_the_host_name_and_verify_ca_does_not(tls_env, certificates):
    root = certificates["ca"]
    key = certificates["folder"] / "elsewhere.key"
    with TlsProxy(certificates["elsewhere"], key) as proxy:
        url = _proxied_url(proxy)
        assert await _connects(url + f"?sslmode=verify-ca&sslrootcert={root}")
        with pytest.raises(ssl.SSLCertVerificationError, match="IP address mismatch"):
            await _connects(url + f"?sslmode=verify-full&sslrootcert={root}")


@pytest.mark.parametrize(("mode", "connects"), [("prefer", True), ("require", False)])
async def test_without_tls_on_the_server_prefer_goes_plain_and_require_fails(
    tls_env, mode, connects
):
    with TlsProxy() as proxy:
        url = _proxied_url(proxy) + f"?sslmode={mode}"
        if connects:
            assert await _connects(url)
            assert proxy.sessions == [False]
        else:
            with pytest.raises(ConnectionError, match="rejected SSL upgrade"):
                await _connects(url)
            assert proxy.sessions == []


# --- start-up with a database it cannot use -------------------------------------------------


async def _start_bot(database_url: str, cwd: Path) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "TELEGRAM"))}
    env.update(
        TELEGRAM_BOT_TOKEN="123:token-not-used",
        ANTHROPIC_API_KEY="sk-key-not-used",
        DATABASE_URL=database_url,
        PYTHONPATH=str(ROOT),
    )
    return await run_merged(sys.executable, "-m", "bot", env=env, cwd=cwd)


async def test_a_database_it_cannot_use_stops_start_up_with_one_clear_line(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    unreachable = f"postgres://bot:secretpw@127.0.0.1:{closed_port}/bot?sslmode=disable"
    # A database a newer release has migrated further than this code knows.
    newer = tmp_path / "newer.db"
    with closing(sqlite3.connect(newer)) as db:
        db.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) PRIMARY KEY)")
        db.execute("INSERT INTO alembic_version VALUES ('9999')")
        db.commit()
    results = await asyncio.gather(
        _start_bot(unreachable, tmp_path), _start_bot(f"sqlite:///{newer}", tmp_path)
    )
    for (code, output), problem in zip(results, ("Connect call failed", "'9999'"), strict=True):
        assert code == 1, output
        [error] = [line for line in output.splitlines() if " ERROR " in line]
        assert "ERROR bot: cannot migrate the database:" in error and problem in error
        assert "Traceback" not in output and "secretpw" not in output
