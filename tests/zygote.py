"""Start `python -m bot` and friends by forking one process that has already imported the bot.

Each of a test run's bot processes would otherwise spend its first seconds of CPU importing the
same libraries (the Anthropic SDK alone is 3,500 modules). A worker starts this server once, as
`python -m tests.zygote SOCKET`; it imports the bot and waits. For each command it forks: the
child takes the caller's pipes, environment, directory and arguments, then runs the module,
code or console script (`alembic`) as `python -m`, `python -c` or its #! line would, and
exits through the interpreter as they do (atexit, flushing, the same exit codes). Its parent
reports the child's pid, then how it ended.

The server holds no threads, event loop or open files of the bot's when it forks. The bot reads
its settings when it runs, not when it is imported, so children see their own environment.
`tests/test_startup_imports.py` and the start-up benchmark still start fresh interpreters.
"""

import asyncio
import concurrent.futures
import contextlib
import gc
import importlib
import json
import os
import runpy
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

# What every child would import anyway; alembic and the drivers for new databases and Postgres.
PRELOAD = (
    "bot.__main__",
    "bot.migrations",
    "alembic.command",
    "alembic.config",
    "alembic.runtime.migration",
    "aiosqlite",
    "asyncpg",
    "sqlalchemy.dialects.sqlite.aiosqlite",
    "sqlalchemy.dialects.postgresql.asyncpg",
)
READY = b"ready\n"
SCRIPT = "script"  # a request's flag for a script run by its #! line's Python
MAX_REQUEST = 1 << 20
ROOT = Path(__file__).resolve().parent.parent
# Settings the interpreter reads as it starts: a command that sets them otherwise starts afresh.
INTERPRETER = (
    "PYTHONPATH",
    "PYTHONHASHSEED",
    "PYTHONMALLOC",
    "PYTHONDEVMODE",
    "PYTHONUTF8",
    "PYTHONIOENCODING",
    "PYTHONWARNINGS",
    "PYTHONOPTIMIZE",
    "PYTHONSAFEPATH",
)


@dataclass(frozen=True)
class Request:
    """A command to run in a child: `-m module`, `-c code` or a script, with its arguments."""

    flag: str
    target: str
    args: list[str]
    env: dict[str, str]
    cwd: str
    fds: list[int]  # stdin, stdout, stderr


def serve(path: str) -> Request | None:
    """Accept commands until stdin closes; return the request in a forked child, None at the end."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: dict[int, socket.socket] = {}
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(wake_r, selectors.EVENT_READ, "reap")
    selector.register(sys.stdin.fileno(), selectors.EVENT_READ, "stdin")
    assert threading.active_count() == 1, "a fork server must hold no threads"
    os.write(1, READY)
    while True:
        for key, _ in selector.select():
            if key.data == "stdin" and not os.read(sys.stdin.fileno(), 4096):
                for pid in children:  # the worker is gone: so are its processes
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                return None
            if key.data == "reap":
                os.read(wake_r, 4096)
                _reap(children)
            if key.data == "accept":
                connection, _ = listener.accept()
                request = _receive(connection)
                pid = os.fork()
                if pid == 0:
                    signal.set_wakeup_fd(-1)
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    selector.close()
                    for sock in (listener, connection, *children.values()):
                        sock.close()
                    os.close(wake_r)
                    os.close(wake_w)
                    return request
                for fd in request.fds:
                    os.close(fd)
                connection.sendall(f"{pid}\n".encode())
                children[pid] = connection
                _reap(children)  # a child may have ended before it was listed


def _receive(connection: socket.socket) -> Request:
    """Read one request: JSON, then its three file descriptors."""
    data, fds, _, _ = socket.recv_fds(connection, MAX_REQUEST, 3)
    while not data.endswith(b"\n"):
        more = connection.recv(MAX_REQUEST)
        if not more:
            break
        data += more
    fields = json.loads(data)
    return Request(fds=list(fds), **fields)


def _reap(children: dict[int, socket.socket]) -> None:
    """Tell each ended child's caller how it ended, as asyncio's returncode would."""
    for pid in list(children):
        with contextlib.suppress(ChildProcessError):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done == 0:
                continue
            connection = children.pop(pid)
            with contextlib.suppress(OSError):
                connection.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
            connection.close()


def run(request: Request) -> None:
    """Become the command: its pipes, directory, environment and arguments, then run it."""
    stdin, stdout, stderr = request.fds
    for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
        os.dup2(fd, target)
    for fd in set(request.fds):
        os.close(fd)
    os.chdir(request.cwd)
    os.environ.clear()
    os.environ.update(request.env)
    if request.flag == SCRIPT:
        sys.path[0] = os.path.dirname(request.target)
        sys.argv = [request.target, *request.args]
        runpy.run_path(request.target, run_name="__main__")
    elif request.flag == "-m":
        sys.path[0] = request.cwd
        sys.argv = [request.target, *request.args]  # runpy puts the module's file first
        runpy.run_module(request.target, run_name="__main__", alter_sys=True)
    else:
        sys.path[0] = ""
        sys.argv = ["-c", *request.args]
        exec(compile(request.target, "<string>", "exec"), {"__name__": "__main__"})


class Forked:
    """A child of the fork server, with the part of asyncio's Process that the tests use."""

    def __init__(
        self,
        pid: int,
        status: tuple[asyncio.StreamReader, asyncio.StreamWriter],
        stdout: asyncio.StreamReader,
        stderr: asyncio.StreamReader | None,
    ):
        self.pid = pid
        self.returncode: int | None = None
        self.stdout: asyncio.StreamReader | None = stdout
        self.stderr = stderr
        # The writer is kept with its reader: a writer closes the connection when collected.
        self._status, self._writer = status

    def send_signal(self, signum: int) -> None:
        """Send a signal, unless the process has ended."""
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)

    def kill(self) -> None:
        """Send SIGKILL."""
        self.send_signal(signal.SIGKILL)

    async def wait(self) -> int:
        """Wait for the end; return the exit code (minus the signal's number when killed)."""
        if self.returncode is None:
            self.returncode = int(await self._status.readline())
            self._writer.close()
        return self.returncode

    async def communicate(self) -> tuple[bytes, bytes | None]:
        """Read the output (and the errors, when apart) to their end; wait for the exit."""
        assert self.stdout is not None
        streams = [self.stdout] if self.stderr is None else [self.stdout, self.stderr]
        output, *errors = await asyncio.gather(*(stream.read() for stream in streams))
        await self.wait()
        return output, (errors[0] if errors else None)


async def _reader(fd: int) -> asyncio.StreamReader:
    """Return a stream reading the pipe fd in the running loop."""
    reader = asyncio.StreamReader(limit=1 << 24)
    await asyncio.get_running_loop().connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", 0)
    )
    return reader


class Zygote:
    """The fork server of one test worker: started early, waited for at the first command."""

    def __init__(self) -> None:
        self._server: subprocess.Popen | None = None
        self._path = ""
        self._ready: concurrent.futures.Future[bytes] = concurrent.futures.Future()

    def start(self) -> None:
        """Start the server in the background, unless it runs."""
        if self._server is not None and self._server.poll() is None:
            return
        folder = Path(tempfile.mkdtemp(prefix="zygote-"))
        self._path, self._ready = str(folder / "socket"), concurrent.futures.Future()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "TELEGRAM"))}
        env["PYTHONPATH"] = str(ROOT)
        with (folder / "log").open("wb") as log:  # the server's own errors, if any
            self._server = subprocess.Popen(
                [sys.executable, "-m", "tests.zygote", self._path],
                cwd=ROOT,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
            )
        # One reader of its first line, whichever test and loop ask first: they all wait for it.
        out, ready = self._server.stdout, self._ready
        assert out is not None
        threading.Thread(target=lambda: ready.set_result(out.readline()), daemon=True).start()

    async def _socket(self) -> str:
        """Return the server's socket, once it has said it is ready."""
        self.start()
        line = await asyncio.wrap_future(self._ready)
        if line != READY:
            raise RuntimeError(f"the fork server did not start ({line!r}): {self._path}")
        return self._path

    async def spawn(
        self,
        flag: str,
        target: str,
        args: list[str],
        *,
        env: dict[str, str],
        cwd: Path,
        merge_stderr: bool,
    ) -> Forked:
        """Run `python flag target args` as a forked child; its output comes back in one pipe."""
        path = await self._socket()
        out_read, out_write = os.pipe()
        err_read, err_write = (None, out_write) if merge_stderr else os.pipe()
        devnull = os.open(os.devnull, os.O_RDONLY)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
            fields = {"flag": flag, "target": target, "args": args, "env": env, "cwd": str(cwd)}
            message = json.dumps(fields).encode() + b"\n"
            socket.send_fds(sock, [message], [devnull, out_write, err_write])
        finally:
            for fd in {devnull, out_write, err_write}:
                os.close(fd)
        stdout = await _reader(out_read)
        stderr = None if err_read is None else await _reader(err_read)
        sock.setblocking(False)
        status, writer = await asyncio.open_unix_connection(sock=sock)
        pid = int(await status.readline())
        return Forked(pid, (status, writer), stdout, stderr)


ZYGOTE = Zygote()


def forkable(command: tuple[str, ...], env: dict[str, str]) -> tuple[str, str, list[str]] | None:
    """Return (flag, target, args) when the server can run command.

    That is this Python's `-m module` or `-c code`, or a script of this environment's (a
    console script such as `alembic`, found on the command's PATH) run by it.
    """
    if len(command) >= 3 and command[0] == sys.executable and command[1] in ("-m", "-c"):
        flag, target, args = command[1], command[2], list(command[3:])
    elif command and (script := _our_script(command[0], env)) is not None:
        flag, target, args = SCRIPT, script, list(command[1:])
    else:
        return None
    ours = {name: os.environ.get(name) for name in INTERPRETER} | {"PYTHONPATH": str(ROOT)}
    if any(env.get(name) != ours[name] for name in INTERPRETER):
        return None
    return flag, target, args


def _our_script(name: str, env: dict[str, str]) -> str | None:
    """Return the path of name when it is a script whose #! line is a Python of ours."""
    path = shutil.which(name, path=env.get("PATH"))
    if path is None:
        return None
    with open(path, "rb") as script:
        first = script.readline(1024)
    interpreter = Path(first[2:].decode(errors="replace").strip()) if first[:2] == b"#!" else None
    if interpreter is None or interpreter.parent != Path(sys.executable).parent:
        return None
    return path if interpreter.name.startswith("python") else None


if __name__ == "__main__":
    for name in PRELOAD:
        importlib.import_module(name)
    # A child runs bot/__main__.py afresh as __main__, as `python -m bot` does.
    del sys.modules["bot.__main__"]
    delattr(sys.modules["bot"], "__main__")
    gc.freeze()  # what a child inherits stays shared, not copied by its collector's marks
    request = serve(sys.argv[1])
    if request is not None:
        run(request)
