"""The warm exec server: a process that has imported what ``j-cli -j exec`` on a live kernel
uses and forks one child per later ``-j exec`` or ``-j run`` (the protocol:
:mod:`jupyter_jcli.cli._exec_client`). A child runs an exec through its lane
(:mod:`jupyter_jcli.cli._fast_exec`) and a run through the click application, exactly as the
command's own process would.

Run as ``python -m jupyter_jcli.cli._exec_server NAME`` (by
:func:`~jupyter_jcli.cli._exec_client.spawn_server`, in its own session, stdio on
``/dev/null``), with a JSON object on stdin: ``path`` (the spawning command's ``sys.path``),
``modules`` (the names it had imported after its exec: imported here, in order, before the
first fork) and ``registry`` (its kernel registry folder). Each child reports, through a pipe,
the modules it imported that the server had not (a run imports click and the run machinery);
the server imports them while it waits for the next request (:func:`_learn`), so later
children find them loaded too.

It holds no state a command could see: each child takes the command's descriptors, folder,
umask, environment and arguments before it runs the lane, which reads the notebook, the
registry and the settings afresh. It serves only while it is useful and current, and ends:

- when its registry folder holds no kernel entry (``*.json``) at two checks in a row
  (:data:`CHECK_INTERVAL` apart), or has had no request for the registry's idle timeout;
- at the first request after any module file it imported changed (an upgrade or an edit of
  the package): it answers ``F`` and ends, so the command runs the new code itself and
  starts a new server;
- when another process holds its name (a server already there);
- at its start, or after it learned modules, when an import started a thread (a fork copies
  only the forking thread, so a child could inherit a lock held by another): then it never
  forks.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import importlib
import json
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from typing import TYPE_CHECKING

from jupyter_jcli.cli._exec_client import peer_is_us
from jupyter_jcli.kernels._entry import serve_for

if TYPE_CHECKING:
    from jupyter_jcli.notebook._warm import DocumentCache

__all__ = ["CHECK_INTERVAL", "main"]

CHECK_INTERVAL = 1.0
"""Seconds between two checks that the server is still useful (see the module docstring)."""
REQUEST_TIMEOUT = 5.0
"""Seconds a child waits for the command's request, and then for its go-ahead."""
_MAX_REQUEST = 4 * 1024 * 1024
_PREWARM_MAX = 32
_MAX_REPORTS = 256
"""Children whose module report the server reads at most at once (one pipe each)."""
_MAX_REPORT = 256 * 1024
"""Bytes of a child's module report the server reads at most."""


class _Request:
    """A command's request (step 1 of the protocol), decoded."""

    def __init__(self, body: bytes) -> None:
        fields = body.split(b"\0")
        if fields[0] != b"JX1" or len(fields) < 8:
            raise ValueError("not a JX1 request")
        self.executable = os.fsdecode(fields[1])
        self.umask = int(fields[2], 8)
        self.main_module = fields[3].decode()
        self.pid = int(fields[4])
        at = 5
        lists: list[list[bytes]] = []
        for _ in range(3):
            count = int(fields[at])
            lists.append(fields[at + 1 : at + 1 + count])
            if len(lists[-1]) != count:
                raise ValueError("truncated request")
            at += 1 + count
        self.argv = [os.fsdecode(item) for item in lists[0]]
        self.path = [os.fsdecode(item) for item in lists[1]]
        self.environ = [item.partition(b"=") for item in lists[2]]


def _module_files() -> dict[str, tuple[int, int, int]]:
    """``{file: (mtime_ns, ctime_ns, size)}`` of every imported module that has a file (the
    change time, which ``os.utime`` cannot set, catches an edit that restored the mtime)."""
    files: dict[str, tuple[int, int, int]] = {}
    for module in list(sys.modules.values()):
        name = getattr(module, "__file__", None)
        if isinstance(name, str) and name not in files:
            with contextlib.suppress(OSError):
                stat = os.stat(name)
                files[name] = (stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size)
    return files


def _unchanged(files: dict[str, tuple[int, int, int]]) -> bool:
    for name, seen in files.items():
        try:
            stat = os.stat(name)
        except OSError:
            return False
        if (stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size) != seen:
            return False
    return True


def _warm(modules: Sequence[str]) -> None:
    """Import ``modules`` (a module that fails to import is left out), with the cyclic
    collector off, then move what they made out of its reach (``gc.freeze()``: the ``gc``
    module's recipe for a forking server, which also keeps those pages shared)."""
    gc.disable()
    for name in modules:
        if name not in sys.modules:
            with contextlib.suppress(Exception):
                importlib.import_module(name)
    gc.freeze()
    gc.enable()


def _report_modules(report: int, before: frozenset[str]) -> None:
    """A child's last act: the names of the modules it imported that ``before`` (the
    server's, at the fork) lacks, one a line, to the server's pipe ``report`` (what fits in
    the pipe; never waits)."""
    names = [name for name in list(sys.modules) if name not in before and _importable(name)]
    with contextlib.suppress(OSError):
        os.set_blocking(report, False)
        os.write(report, "\n".join(names).encode()[:_MAX_REPORT])
    with contextlib.suppress(OSError):
        os.close(report)


def _importable(name: str) -> bool:
    """Whether ``name`` is a dotted module name this server may import by name."""
    return not name.startswith("_") and all(part.isidentifier() for part in name.split("."))


def _learn(reports: dict[int, bytearray]) -> bool:
    """Read what the children's pipes hold now (``{read end: bytes so far}``; a pipe at its
    end is closed and dropped) and import the modules the finished ones reported.

    Returns:
        False when the imports started a thread: then this server must not fork again.
    """
    learned: list[str] = []
    for fd, got in list(reports.items()):
        try:
            while chunk := os.read(fd, 65536):
                got.extend(chunk[: max(0, _MAX_REPORT - len(got))])
        except BlockingIOError:
            continue  # that child still runs
        except OSError:
            pass
        os.close(fd)
        del reports[fd]
        learned.extend(name for name in got.decode(errors="replace").split("\n"))
    fresh = [name for name in learned if _importable(name) and name not in sys.modules]
    if fresh:
        _warm(fresh)
    return threading.active_count() == 1


def _has_kernels(registry: str) -> bool:
    try:
        with os.scandir(registry) as entries:
            return any(entry.name.endswith(".json") for entry in entries)
    except OSError:
        return False


def _prewarm(registry: str, documents: DocumentCache) -> None:
    """Load the notebook of every kernel entry of ``registry`` into ``documents`` (each
    use re-validates what it holds against the file: ``notebook._warm``), so a child finds
    its notebook parsed, named and analysed. A notebook that fails to load is left out."""
    from jupyter_jcli.kernels._registry import KernelRegistry
    from jupyter_jcli.notebook._warm import warm
    from jupyter_jcli.workbench._load import load

    try:
        with os.scandir(registry) as found:
            files = sorted(Path(e.path) for e in found if e.name.endswith(".json"))
    except OSError:
        return
    for file in files[:_PREWARM_MAX]:
        entry = KernelRegistry.read_file(file)
        if entry is None:
            continue
        with contextlib.suppress(Exception), warm(documents):
            load(entry.notebook_path)


def main(argv: Sequence[str] | None = None) -> int:
    """The server (see the module docstring); returns its exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        return 2
    warm = json.loads(sys.stdin.buffer.read(_MAX_REQUEST))
    sys.path[:] = [str(item) for item in warm["path"]]
    registry = str(warm["registry"])
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:  # the name is ours from here, but a command is refused (and runs the lane itself)
        listener.bind("\0" + args[0])  # until the server listens, once warm
    except OSError:
        return 0  # a server already has the name
    _warm([str(name) for name in warm["modules"]])
    from jupyter_jcli.kernels._registry import idle_timeout
    from jupyter_jcli.notebook._warm import DocumentCache

    idle_limit = idle_timeout()
    documents = DocumentCache()
    _prewarm(registry, documents)
    if threading.active_count() != 1:
        return 0  # an import started a thread: forking could copy a lock another one holds
    files = _module_files()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the system
    listener.listen(64)
    listener.settimeout(CHECK_INTERVAL)
    last_request = time.monotonic()
    empty_checks = 0
    reports: dict[int, bytearray] = {}
    while True:
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            empty_checks = 0 if _has_kernels(registry) else empty_checks + 1
            if empty_checks >= 2 or time.monotonic() - last_request >= idle_limit:
                return 0
            known = len(sys.modules)
            _prewarm(registry, documents)
            if not _learn(reports):
                return 0
            if len(sys.modules) != known:  # the notebooks or the children needed more:
                files = {**_module_files(), **files}  # watch them too
            continue
        last_request = time.monotonic()
        with conn:
            if not peer_is_us(conn):
                continue
            if not _unchanged(files):
                with contextlib.suppress(OSError):
                    conn.sendall(b"F")
                return 0
            read_end, report = os.pipe() if len(reports) < _MAX_REPORTS else (-1, -1)
            if os.fork() == 0:
                status = 1
                try:
                    listener.close()
                    for fd in (*reports, read_end):
                        if fd >= 0:
                            os.close(fd)
                    status = _child(conn, documents, report)
                finally:  # a child never returns into this loop, whatever happened
                    os._exit(status)
            if read_end >= 0:
                os.close(report)
                os.set_blocking(read_end, False)
                reports[read_end] = bytearray()


def _child(conn: socket.socket, documents: DocumentCache, report: int) -> int:
    """A forked child: become the command and run it (steps 1-5 of the protocol), with the
    server's loaded notebooks as its warm cache, then report the modules it imported to the
    server (pipe ``report``, -1 for none); returns the exit status for ``os._exit``."""
    gc.freeze()  # what the server holds stays out of this process's collections
    before = frozenset(sys.modules)
    conn.settimeout(REQUEST_TIMEOUT)
    try:
        request = _receive(conn)
    except (OSError, ValueError):
        return 1
    if (
        request.executable != sys.executable
        or request.path != sys.path
        or request.argv[2:3] not in (["exec"], ["run"])
    ):
        with contextlib.suppress(OSError):
            conn.sendall(b"F")
        return 0
    try:
        conn.sendall(b"P%d\n" % os.getpid())
        fds = _go(conn)
    except OSError:
        return 1
    if fds is None:
        return 0  # the command gave up waiting (or is gone): it runs, or ran, the lane itself
    try:
        _become(request, fds)
    except OSError:
        with contextlib.suppress(OSError):
            conn.sendall(b"F")  # nothing ran: the command runs the lane itself
        return 0
    conn.settimeout(None)
    threading.Thread(target=_relay_signals, args=(conn,), daemon=True).start()
    from jupyter_jcli.notebook._warm import warm

    with warm(documents):
        if request.argv[2] == "exec":
            from jupyter_jcli.cli._fast import write_answer
            from jupyter_jcli.cli._fast_exec import fast_exec

            served = fast_exec(request.argv[1:])
            if served is None:
                with contextlib.suppress(OSError):
                    conn.sendall(b"F")
                return 0
            status = write_answer(*served)
        else:
            status = _click(request.argv[1:])
    with contextlib.suppress(Exception):  # what a normal exit runs
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()
    with contextlib.suppress(OSError):
        conn.sendall(b"S" + status.to_bytes(4, "big"))
    if report >= 0:
        _report_modules(report, before)
    return status


def _click(argv: Sequence[str]) -> int:
    """Run the click application on ``argv`` as the console script does (``j-cli ARGV``:
    :func:`jupyter_jcli.cli._app.run`, the one error boundary); returns its exit status (a
    ``sys.exit`` from within follows Python's rules: None is 0, a non-integer is written to
    stderr and is 1)."""
    from jupyter_jcli.cli._app import run

    try:
        return run(list(argv), prog_name="j-cli")
    except SystemExit as end:
        code = end.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code & 0xFF
        with contextlib.suppress(Exception):
            print(code, file=sys.stderr)
        return 1


def _receive(conn: socket.socket) -> _Request:
    """Step 1: the request."""
    head = bytearray()
    while len(head) < 4:
        chunk = conn.recv(4 - len(head))
        if not chunk:
            raise ValueError("truncated request")
        head += chunk
    length = int.from_bytes(head, "big")
    if length > _MAX_REQUEST:
        raise ValueError("request too large")
    body = bytearray()
    while len(body) < length:
        chunk = conn.recv(min(65536, length - len(body)))
        if not chunk:
            raise ValueError("truncated request")
        body += chunk
    return _Request(bytes(body))


def _go(conn: socket.socket) -> list[int] | None:
    """Step 3: the go-ahead with the command's four descriptors (stdin, stdout, stderr,
    folder), or None (anything else: the command's end closed, or a malformed message)."""
    data, ancillary, _, _ = conn.recvmsg(1, socket.CMSG_SPACE(4 * 4))
    fds: list[int] = []
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            usable = len(payload) - len(payload) % 4
            fds.extend(
                int.from_bytes(payload[i : i + 4], sys.byteorder) for i in range(0, usable, 4)
            )
    if data == b"G" and len(fds) == 4:
        return fds
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    return None


def _become(request: _Request, fds: list[int]) -> None:
    """Take the command's stdio, folder, umask, environment, arguments and signal handling."""
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)
        os.close(fd)
    os.fchdir(fds[3])
    os.close(fds[3])
    os.umask(request.umask)
    os.environ.clear()
    for key, _, value in request.environ:
        if key:
            os.environb[key] = value
    sys.argv[:] = request.argv
    serve_for(request.pid)
    main = sys.modules["__main__"]  # what the command's records name its program by
    main.__spec__ = ModuleSpec(request.main_module, None) if request.main_module else None
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _relay_signals(conn: socket.socket) -> None:
    """Step 4: the command's SIGINT, SIGTERM and SIGHUP, raised in this process's main
    thread; the command's end closing kills this process, as it would have killed the
    command."""
    main = threading.main_thread().ident
    assert main is not None
    while True:
        try:
            tag = conn.recv(1)
        except OSError:
            tag = b""
        if tag == b"I":
            signal.pthread_kill(main, signal.SIGINT)
        elif tag == b"T":
            signal.pthread_kill(main, signal.SIGTERM)
        elif tag == b"H":
            signal.pthread_kill(main, signal.SIGHUP)
        else:
            os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    sys.exit(main())
