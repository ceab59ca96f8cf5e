"""The ``j-cli -j exec`` and ``j-cli -j run`` client of the warm exec server
(:mod:`jupyter_jcli.cli._exec_server`).

A fresh ``j-cli`` process spends most of an exec on a live kernel importing the lane (about
100 ms of CPU against the kernel's few ms), though the same lane run in a process that has
already imported it takes about 20 ms. So the first exec on a live kernel, served in its own
process as always, leaves behind a warm server: a process that has imported exactly the
modules that exec used and forks one child per later exec. The child becomes that command:
it takes the command's stdin, stdout and stderr (passed as file descriptors, ``SCM_RIGHTS``),
its current folder (a descriptor too), its umask, environment and arguments, and runs the
same lane (:func:`jupyter_jcli.cli._fast_exec.fast_exec`), so the answer, the files written,
the registry records and the exit status are the in-process lane's. A ``-j run`` is served
the same way, its child running the click application (a first run without a server costs
about 0.2-0.45 s, mostly importing click, asyncio and the run machinery; a served one about
60 ms). This module is what the command itself runs: it imports nothing but ``os``, ``sys``
and three built-in modules, and hands over to the in-process lane whenever the server is not
there or not for it.

Protocol (one Unix stream connection per command, Linux abstract namespace, see
``unix(7)``; both ends check the other's uid and gid with ``SO_PEERCRED``):

1. client → child: a 4-byte big-endian length and the request (NUL-separated fields:
   ``JX1``, ``sys.executable``, umask, the ``__main__`` module's name (empty for a
   script), the command's pid (the child records itself under it), then counted
   ``sys.argv``, ``sys.path`` and ``KEY=VALUE`` environment items);
2. child → client: ``P`` and its pid when it is ready, or ``F`` (not for this command: the
   client runs the lane itself; nothing has run);
3. client → child: ``G`` (go), carrying descriptors 0, 1, 2 and the current folder. Only now
   may the code run: a client that gave up waiting (:data:`READY_TIMEOUT`) closes instead,
   and the child ends without running anything, so a command's code never runs twice; and
   a server that never answered holds none of the command's descriptors (its stdout pipe
   closes when the command ends);
4. client → child, while it runs: ``I`` (SIGINT), ``T`` (SIGTERM) and ``H`` (SIGHUP, unless
   the command ignores it) as the client receives them; the client's end closing kills the
   child, as a killed command dies;
5. child → client: ``S`` and the exit status after the answer is written, or ``F``
   (nothing ran: it could not take the descriptors, or an exec's command line is not the
   lane's).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["DISABLE_ENV", "READY_TIMEOUT", "available", "serve", "server_name", "spawn_server"]

DISABLE_ENV = "JUPYTER_JCLI_EXEC_SERVER"
"""Environment variable: ``0`` turns the warm exec server off (each exec imports the lane in
its own process, and none leaves a server behind)."""
READY_TIMEOUT = 3.0
"""Seconds to wait for the server's child to say it is ready before running the lane in this
process instead."""
_REGISTRY_ENV = (
    "JUPYTER_JCLI_RUNTIME_DIR",
    "JUPYTER_RUNTIME_DIR",
    "JUPYTER_DATA_DIR",
    "JUPYTER_PLATFORM_DIRS",
    "XDG_DATA_HOME",
    "HOME",
)
_MAGIC = b"JX1"


def available() -> bool:
    """Whether this platform and environment allow the warm exec server: Linux (abstract
    sockets, ``SO_PEERCRED``, ``fork``), not turned off (:data:`DISABLE_ENV`), and a module
    path of absolute folders only (``python -c`` puts the current folder first, as ``''``:
    what it imports would depend on the folder, which the server's name does not cover)."""
    if not sys.platform.startswith("linux") or os.environ.get(DISABLE_ENV, "").strip() == "0":
        return False
    return all(entry.startswith("/") for entry in sys.path)


def server_name() -> str:
    """The abstract socket name of the server for this user, interpreter (its executable,
    flags, ``PYTHON*`` variables, encodings), resource limits, control groups and
    namespaces, module path and registry settings
    (``jupyter-jcli-exec-<uid>-<crc32>``). A child takes the command's environment, folder
    and descriptors, but not what the interpreter fixed at its start: those are in the
    name, so a command only meets a server started as it was. Beyond that the name keeps
    one server per registry, whose lifetime follows that registry's kernels."""
    import binascii

    settings = [os.environ.get(name, "") for name in _REGISTRY_ENV]
    python = sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith("PYTHON"))
    streams = [f"{getattr(s, 'encoding', '')}:{getattr(s, 'errors', '')}" for s in _stdio()]
    parts = [
        str(os.getuid()),
        str(os.getgid()),
        ",".join(map(str, sorted(os.getgroups()))),
        sys.executable,
        repr(sys.flags),
        repr(sys.warnoptions),
        repr(sys._xoptions),
        sys.getfilesystemencoding(),
        *streams,
        *python,
        *sys.path,
        *settings,
        *_limits(),
    ]
    if any(value and not value.startswith("/") for value in settings):
        parts.append(os.getcwd())
    crc = binascii.crc32("\0".join(parts).encode("utf-8", "surrogateescape"))
    return f"jupyter-jcli-exec-{os.getuid()}-{crc:08x}"


def _plain_process() -> bool:
    """Whether this command can hand itself to a server's child unchanged: descriptors 0, 1
    and 2 open (a closed one would be taken by the folder's descriptor), and neither SIGINT
    nor SIGTERM ignored (a child would not inherit that: the command runs the lane itself)."""
    import _signal  # type: ignore[import-not-found]  # ``signal`` without its enum wrappers

    try:
        for fd in (0, 1, 2):
            os.fstat(fd)
    except OSError:
        return False
    return all(_signal.getsignal(n) != _signal.SIG_IGN for n in (_signal.SIGINT, _signal.SIGTERM))


def _limits() -> list[str]:
    """What the kernel fixes for this process and a child would not take from the command:
    its resource limits, control groups and namespaces (``/proc/self``)."""
    import resource

    found = [
        f"{name}={resource.getrlimit(getattr(resource, name))}"
        for name in sorted(dir(resource))
        if name.startswith("RLIMIT_")
    ]
    try:
        with open("/proc/self/cgroup", encoding="utf-8", errors="replace") as groups:
            found.append(groups.read())
    except OSError:
        found.append("no cgroup")
    for space in ("cgroup", "ipc", "mnt", "net", "pid", "user", "uts"):
        try:
            found.append(os.readlink(f"/proc/self/ns/{space}"))
        except OSError:
            found.append(f"no {space}")
    return found


def _stdio() -> tuple[object, object, object]:
    return sys.stdin, sys.stdout, sys.stderr


def encode_request(argv: Sequence[str], umask: int) -> bytes:
    """The request of step 1 (see the module docstring), length prefix included; ``argv``
    is the whole command line (``sys.argv``: the program, then its arguments)."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    main = getattr(spec, "name", None)
    main_module = main.encode() if isinstance(main, str) else b""
    fields = [_MAGIC, os.fsencode(sys.executable), b"%o" % umask, main_module]
    fields.append(b"%d" % os.getpid())
    for items in (list(argv), list(sys.path)):
        fields.append(b"%d" % len(items))
        fields.extend(os.fsencode(item) for item in items)
    environ = [key + b"=" + value for key, value in os.environb.items()]
    fields.append(b"%d" % len(environ))
    fields.extend(environ)
    body = b"\0".join(fields)
    return len(body).to_bytes(4, "big") + body


def peer_is_us(sock: object) -> bool:
    """Whether the other end of a connected Unix socket runs as this process's uid and gid."""
    import _socket

    assert isinstance(sock, _socket.socket)
    raw = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    uid = int.from_bytes(raw[4:8], sys.byteorder)
    gid = int.from_bytes(raw[8:12], sys.byteorder)
    return uid == os.getuid() and gid == os.getgid()


def _read_byte(sock: object) -> bytes:
    import _socket

    assert isinstance(sock, _socket.socket)
    return sock.recv(1)


def _read_pid(sock: object) -> int | None:
    """Step 2: the child's pid, or None (``F``, an end, a malformed answer)."""
    import _socket

    assert isinstance(sock, _socket.socket)
    data = b""
    while not data.endswith(b"\n") and len(data) < 32:
        chunk = sock.recv(32 - len(data))
        if not chunk:
            return None
        data += chunk
    if not data.startswith(b"P") or not data[1:-1].isdigit():
        return None
    return int(data[1:-1])


def serve(argv: Sequence[str]) -> int | None:
    """Run ``j-cli`` ``argv`` (``-j exec ...`` or ``-j run ...``) through the warm server.

    Returns:
        The command's exit status once its child has written the answer to this process's
        stdout; None when there is no server for this setting or it is not for this command
        (nothing has run: the caller runs the lane itself).
    """
    if not available() or not _plain_process():
        return None
    import _socket

    try:
        cwd = os.open(".", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(READY_TIMEOUT)
        try:
            sock.connect("\0" + server_name())
            if not peer_is_us(sock):
                return None
            umask = os.umask(0o077)
            os.umask(umask)
            sock.sendall(encode_request([sys.argv[0], *argv], umask))
            pid = _read_pid(sock)
        except OSError:
            return None
        except KeyboardInterrupt:  # Ctrl-C before the code may run: nothing ran
            return _cancelled()
        if pid is None:
            return None
        rights = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2, cwd))
        return _follow(sock, pid, rights)
    finally:
        sock.close()
        os.close(cwd)


def _follow(sock: object, pid: int, rights: bytes) -> int | None:
    """Steps 3-5: let the child run (``G`` with ``rights``: the descriptors, as
    ``SCM_RIGHTS`` data), pass it this process's SIGINT, SIGTERM and SIGHUP, and return its
    exit status (None for ``F``)."""
    import _signal
    import _socket

    assert isinstance(sock, _socket.socket)

    tags = {_signal.SIGINT: b"I", _signal.SIGTERM: b"T", _signal.SIGHUP: b"H"}

    def forward(signum: int, frame: object) -> None:
        try:  # (no ``contextlib`` here: this module imports only what it must)
            sock.sendall(tags[signum])
        except OSError:
            return

    previous = {  # SIGHUP only when not ignored (nohup): the child then never sees one
        num: _signal.signal(num, forward)
        for num in tags
        if num != _signal.SIGHUP or _signal.getsignal(num) != _signal.SIG_IGN
    }
    try:
        try:
            sock.sendmsg([b"G"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
        except OSError:
            return None  # the child ends at our end's close, without running anything
        sock.settimeout(None)
        while True:
            try:
                tag = _read_byte(sock)
            except InterruptedError:  # pragma: no cover - PEP 475 retries recv itself
                continue
            except OSError:
                tag = b""
            if tag == b"F":
                return None
            if tag == b"S":
                status = sock.recv(4)
                return int.from_bytes(status, "big") if len(status) == 4 else 1
            if not tag:
                return _lost(pid)
    finally:
        for num, handler in previous.items():
            _signal.signal(num, handler)


def _cancelled() -> int:
    """Ctrl-C before the child was let run: the lane's answer to a Ctrl-C (exit 130)."""
    from jupyter_jcli.errors import cancelled
    from jupyter_jcli.outputs import serialize_json

    sys.stderr.write("\nAborted.\n")
    sys.stdout.buffer.write(serialize_json(cancelled(terminated=False).to_dict()) + b"\n")
    sys.stdout.buffer.flush()
    return 130


def _lost(pid: int) -> int:
    """The child ended without an exit status (killed from outside): one error document."""
    from jupyter_jcli.errors import ErrorCode, JcliError
    from jupyter_jcli.outputs import serialize_json

    error = JcliError(
        ErrorCode.INTERNAL_ERROR,
        f"the process running this command (pid {pid}) ended without an answer; "
        "it was killed from outside",
        details={"pid": pid},
    )
    sys.stdout.buffer.write(serialize_json(error.to_dict()) + b"\n")
    sys.stdout.buffer.flush()
    return 1


def spawn_server(registry_root: str) -> None:
    """Start the warm server for this setting (:func:`server_name`), in its own session with
    its stdio on ``/dev/null``, warmed with the modules this process has imported; return at
    once. A server already there keeps its name and the new one ends by itself. None is
    started for a command that could not be served (:func:`_plain_process`): a server named
    after its closed descriptor or ignored signal would serve no command at all."""
    if not _plain_process():
        return
    import json
    import subprocess

    # in the order they were imported: a module imported before its package can break it
    # (``_asyncio`` before ``asyncio`` leaves ``asyncio.current_task`` blind to its tasks)
    modules = [name for name in sys.modules if not name.startswith("__")]
    warm = json.dumps({"path": sys.path, "modules": modules, "registry": registry_root})
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "jupyter_jcli.cli._exec_server", server_name()],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            close_fds=True,
            start_new_session=True,
        )
    except OSError:
        return
    assert proc.stdin is not None
    try:
        proc.stdin.write(warm.encode("utf-8", "surrogateescape"))
        proc.stdin.close()
    except OSError:
        return
    proc.returncode = 0  # never waited for: it outlives this process on purpose
