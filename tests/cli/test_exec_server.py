"""The warm exec server (``cli._exec_server``, ``cli._exec_client``): the first ``j-cli -j exec``
on a live kernel leaves a server behind, and a child of it runs each later exec as the
command itself would: the same answer, files, settings, signals and exit status, and never
the code twice. Every command is the real console script in its own process."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jcli_helpers import never_run_notebook as notebook
from test_exec_lane import ANSWER_CASES, masked

from jupyter_jcli.cli._exec_client import DISABLE_ENV, available, encode_request
from jupyter_jcli.cli._exec_server import _Request
from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.kernels import KernelRegistry

pytestmark = pytest.mark.kernel

TIMEOUT = 120.0
"""Seconds any one command may take (a kernel start included, on a loaded machine)."""
SCRIPT = str(Path(sys.executable).parent / "j-cli")
"""The installed console script, as a user runs it (its module path is absolute)."""
SERVER_MODULE = "jupyter_jcli.cli._exec_server"


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, **extra}
    env.pop(DISABLE_ENV, None)
    env.update(extra)
    return env


def jcli(cwd: Path, *args: str | Path, **env: str) -> tuple[int, str]:
    done = subprocess.run(
        [SCRIPT, *map(str, args)], capture_output=True, text=True, encoding="utf-8",
        cwd=cwd, env=_env(**env), timeout=TIMEOUT, check=False,
    )  # fmt: skip
    return done.returncode, done.stdout


def spawn(cwd: Path, *args: str | Path, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [SCRIPT, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, encoding="utf-8", cwd=cwd, env=_env(**env),
    )  # fmt: skip


def _proc_text(pid: str, name: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/{name}").read_bytes()
    except OSError:
        return b""


def servers(root: Path) -> list[int]:
    """The pids of the warm exec servers whose environment names registry ``root`` (not
    their children, which start as copies of them)."""
    marker = f"JUPYTER_JCLI_RUNTIME_DIR={root}".encode()
    found: dict[int, int] = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if SERVER_MODULE.encode() not in _proc_text(pid, "cmdline"):
            continue
        if marker in _proc_text(pid, "environ").split(b"\0"):
            found[int(pid)] = _parent(pid)
    return sorted(pid for pid, parent in found.items() if parent not in found)


def _parent(pid: str) -> int:
    fields = _proc_text(pid, "stat").decode(errors="replace").rpartition(")")[2].split()
    return int(fields[1]) if len(fields) > 1 else 0


def listening(server: int) -> bool:
    """Whether ``server``'s abstract socket listens."""
    return name_listens(_abstract_name(server)[1:])


def name_listens(name: str) -> bool:
    """Whether abstract socket ``name`` listens (``/proc/net/unix``: ``__SO_ACCEPTCON``)."""
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 8 and fields[7] == "@" + name and int(fields[3], 16) & 0x10000:
            return True
    return False


def children_of(parent: int) -> list[int]:
    return [int(pid) for pid in filter(str.isdigit, os.listdir("/proc")) if _parent(pid) == parent]


def wait_until(check: Any, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return bool(check())


@pytest.fixture
def live(tmp_path: Path, kernel_registry: Path) -> Iterator[tuple[Path, int]]:
    """A notebook with a live kernel and a warm server for it: ``(notebook, server pid)``;
    the kernel is stopped and the server killed at the end."""
    path = notebook(tmp_path, ["x = 1"])
    code, out = jcli(tmp_path, "-j", "kernel", "start", path)
    assert code == 0, out
    try:
        code, out = jcli(tmp_path, "-j", "exec", path, "--code", "pass")
        assert code == 0, out
        assert wait_until(lambda: len(servers(kernel_registry)) == 1), servers(kernel_registry)
        (server,) = servers(kernel_registry)
        assert wait_until(lambda: listening(server)), "the server never listened"
        yield path, server
    finally:
        jcli(tmp_path, "-j", "kernel", "stop", path)
        for pid in servers(kernel_registry):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def running_code(path: Path, seconds: int) -> tuple[subprocess.Popen[str], Path]:
    """An exec whose code creates a marker file as its first act, then sleeps ``seconds``:
    the process, and the marker (once it exists, the code runs on the kernel)."""
    mark = path.parent / f"running-{time.monotonic_ns()}"
    code = f"open({str(mark)!r}, 'w').close(); import time; time.sleep({seconds})"
    return spawn(path.parent, "-j", "exec", path, "--code", code), mark


def served_while_running(path: Path, server: int, code: str) -> tuple[int, str, list[int]]:
    """Run ``code`` (which sleeps first) and, while it runs, the server's children."""
    return served(path, server, "-j", "exec", str(path), "--code", code)


def served(path: Path, server: int, *args: str) -> tuple[int, str, list[int]]:
    """``j-cli ARGS`` in ``path``'s folder (what it runs sleeps first): its exit status,
    stdout and the server's children while it runs."""
    proc = spawn(path.parent, *args)
    try:
        assert wait_until(lambda: children_of(server) != [], 20), "no child of the server"
        running = children_of(server)
        out, _ = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, out, running


@pytest.mark.parametrize("code", ANSWER_CASES)
def test_a_later_exec_is_run_by_a_child_of_the_warm_server_and_answers_as_in_its_own_process(
    live: tuple[Path, int], code: str
) -> None:
    path, server = live
    status, out, running = served_while_running(path, server, "import time; time.sleep(1)\n" + code)
    alone = jcli(
        path.parent, "-j", "exec", path, "--code", "import time; time.sleep(1)\n" + code,
        **{DISABLE_ENV: "0"},
    )  # fmt: skip
    assert running and all(pid != server for pid in running)
    assert status == alone[0]
    assert masked(out) == masked(alone[1])


def test_a_served_exec_records_the_commands_own_pid_and_program(live: tuple[Path, int]) -> None:
    path, server = live
    proc, mark = running_code(path, 30)
    try:
        assert wait_until(mark.exists, 20) and children_of(server) != []
        status, refused = jcli(path.parent, "-j", "exec", path, "--code", "1")
        document = json.loads(refused)
        assert status == 1 and document["code"] == ErrorCode.KERNEL_BUSY
        assert document["details"]["busy_pid"] == proc.pid
        assert document["details"]["busy_command"].startswith("j-cli -j exec ")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=TIMEOUT)


def test_a_served_exec_saves_rich_results_under_the_commands_folder_with_its_umask(
    live: tuple[Path, int], tmp_path: Path
) -> None:
    path, _ = live
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    proc = subprocess.run(
        [SCRIPT, "-j", "exec", str(path), "--code", "print('y' * 5000)"],
        capture_output=True, text=True, encoding="utf-8", cwd=folder, env=_env(),
        timeout=TIMEOUT, check=False, preexec_fn=lambda: os.umask(0o077),
    )  # fmt: skip
    answer = json.loads(proc.stdout)
    manifest = Path(answer["output_manifest"])
    assert proc.returncode == 0 and "inline" not in answer
    assert manifest.is_relative_to(folder / ".j-cli" / "outputs")
    assert manifest.stat().st_mode & 0o077 == 0


def test_a_served_exec_takes_its_settings_from_the_commands_environment(
    live: tuple[Path, int],
) -> None:
    path, _ = live
    for _ in range(3):
        status, _out = jcli(
            path.parent, "-j", "exec", path, "--code", "print('z' * 5000)",
            JCLI_OUTPUT_MAX_RUNS="1",
        )  # fmt: skip
        assert status == 0
    assert len(list((path.parent / ".j-cli" / "outputs").iterdir())) == 1
    code = "import time; time.sleep(5)"
    served = jcli(path.parent, "-j", "exec", path, "--code", code,
                  JUPYTER_JCLI_EXECUTE_TIMEOUT="0.5")  # fmt: skip
    alone = jcli(path.parent, "-j", "exec", path, "--code", code,
                 JUPYTER_JCLI_EXECUTE_TIMEOUT="0.5", **{DISABLE_ENV: "0"})  # fmt: skip
    assert served[0] == alone[0] != 0
    assert masked(served[1]) == masked(alone[1])


@pytest.mark.parametrize(
    ("signum", "exit_status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["int", "term"]
)
def test_the_commands_signals_reach_the_code_it_runs_through_the_server(
    live: tuple[Path, int], signum: int, exit_status: int
) -> None:
    path, server = live
    proc, mark = running_code(path, 60)
    try:
        assert wait_until(mark.exists, 20) and children_of(server) != []
        proc.send_signal(signum)
        out, _ = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    document = json.loads(out)
    assert proc.returncode == exit_status
    if signum == signal.SIGINT:
        assert document["run"]["status"] == "interrupted"
    else:
        assert document["code"] == ErrorCode.CANCELLED
    assert KernelRegistry().read(path.resolve()).busy is None  # type: ignore[union-attr]


def test_a_killed_command_takes_its_servers_child_with_it(live: tuple[Path, int]) -> None:
    path, server = live
    proc, mark = running_code(path, 60)
    try:
        assert wait_until(mark.exists, 20) and children_of(server) != []
        proc.kill()
        proc.communicate(timeout=TIMEOUT)
        assert wait_until(lambda: children_of(server) == [], 20)
        status, refused = jcli(path.parent, "-j", "exec", path, "--code", "1")
    finally:
        jcli(path.parent, "-j", "kernel", "interrupt", path)
    document = json.loads(refused)
    assert status == 1 and document["code"] == ErrorCode.KERNEL_BUSY
    assert document["details"]["busy_pid"] == proc.pid
    assert document["details"]["busy_gone"] is True


def test_code_runs_once_when_the_server_does_not_answer_in_time(
    live: tuple[Path, int], tmp_path: Path
) -> None:
    path, server = live
    mark = tmp_path / "ran.txt"
    code = f"open({str(mark)!r}, 'a').write('ran\\n')"
    os.kill(server, signal.SIGSTOP)
    try:
        status, out = jcli(path.parent, "-j", "exec", path, "--code", code)
    finally:
        os.kill(server, signal.SIGCONT)
    assert status == 0, out
    time.sleep(1.0)  # the server now takes the connection it held: its child must not run
    assert wait_until(lambda: children_of(server) == [], 20)
    assert mark.read_text("utf-8") == "ran\n"


def test_a_connection_that_is_silent_or_malformed_does_not_stop_the_server(
    live: tuple[Path, int], kernel_registry: Path
) -> None:
    path, server = live
    name = _abstract_name(server)
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    junk = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        silent.connect(name)
        junk.connect(name)
        junk.sendall(b"\0\0\0\x05hello")
        status, out, running = served_while_running(
            path, server, "import time; time.sleep(1); print(5)"
        )
    finally:
        silent.close()
        junk.close()
    assert status == 0 and running, out
    assert servers(kernel_registry) == [server]


def _abstract_name(server: int) -> str:
    cmdline = _proc_text(str(server), "cmdline").split(b"\0")
    return "\0" + cmdline[cmdline.index(SERVER_MODULE.encode()) + 1].decode()


def test_the_server_ends_when_its_registry_has_no_kernel_left(
    live: tuple[Path, int], kernel_registry: Path
) -> None:
    path, _server = live
    assert jcli(path.parent, "-j", "kernel", "stop", path)[0] == 0
    assert wait_until(lambda: servers(kernel_registry) == [], 30)


def test_a_changed_module_file_makes_the_next_exec_run_alone_and_start_a_current_server(
    tmp_path: Path, kernel_registry: Path
) -> None:
    import jupyter_jcli

    source = tmp_path / "src"
    shutil.copytree(Path(jupyter_jcli.__file__).parent, source / "jupyter_jcli")
    path = notebook(tmp_path, ["x = 1"])
    env = {"PYTHONPATH": str(source)}
    assert jcli(tmp_path, "-j", "kernel", "start", path, **env)[0] == 0
    try:
        assert jcli(tmp_path, "-j", "exec", path, "--code", "pass", **env)[0] == 0
        assert wait_until(lambda: len(servers(kernel_registry)) == 1)
        (old,) = servers(kernel_registry)
        assert wait_until(lambda: listening(old))
        edited = source / "jupyter_jcli" / "cli" / "_fast_exec.py"
        edited.write_text(edited.read_text("utf-8") + "\n# edited\n", "utf-8")
        status, out = jcli(tmp_path, "-j", "exec", path, "--code", "print(2)", **env)
        assert status == 0, out
        assert wait_until(lambda: old not in servers(kernel_registry), 30)
        assert wait_until(lambda: len(servers(kernel_registry)) == 1, 30)
    finally:
        jcli(tmp_path, "-j", "kernel", "stop", path, **env)
        for pid in servers(kernel_registry):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_no_server_is_left_when_it_is_turned_off(tmp_path: Path, kernel_registry: Path) -> None:
    path = notebook(tmp_path, ["x = 1"])
    off = {DISABLE_ENV: "0"}
    assert jcli(tmp_path, "-j", "kernel", "start", path, **off)[0] == 0
    try:
        for _ in range(2):
            assert jcli(tmp_path, "-j", "exec", path, "--code", "pass", **off)[0] == 0
        time.sleep(1.0)
        assert servers(kernel_registry) == []
    finally:
        jcli(tmp_path, "-j", "kernel", "stop", path, **off)


def test_a_request_decodes_to_the_commands_arguments_module_path_and_exact_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JCLI_TEST_EQUALS", "a=b=c")
    monkeypatch.setenv("JCLI_TEST_EMPTY", "")
    os.environb[b"JCLI_TEST_BYTES"] = b"\xff\xfe"
    try:
        argv = ["j-cli", "-j", "exec", "nb.ipynb", "--code", "x = 'caf\u00e9'"]
        raw = encode_request(argv, 0o027)
        request = _Request(raw[4:])
    finally:
        del os.environb[b"JCLI_TEST_BYTES"]
    assert int.from_bytes(raw[:4], "big") == len(raw) - 4
    assert request.argv == argv and request.path == sys.path and request.umask == 0o027
    assert request.pid == os.getpid() and request.executable == sys.executable
    environ = {key: value for key, _, value in request.environ}
    assert environ[b"JCLI_TEST_EQUALS"] == b"a=b=c" and environ[b"JCLI_TEST_EMPTY"] == b""
    assert environ[b"JCLI_TEST_BYTES"] == b"\xff\xfe"
    with pytest.raises(ValueError):
        _Request(b"JX1\0" + raw[8:40])


def test_the_server_is_not_used_with_a_relative_module_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(DISABLE_ENV, raising=False)
    monkeypatch.setattr(sys, "path", ["/usr/lib/python3", ""])
    assert available() is False
    monkeypatch.setattr(sys, "path", ["/usr/lib/python3"])
    assert available() is sys.platform.startswith("linux")
    monkeypatch.setenv(DISABLE_ENV, "0")
    assert available() is False


IGNORING_SIGINT = (
    "import os, signal, sys\n"
    "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    "os.execv(sys.argv[1], sys.argv[1:])\n"
)
"""Run the command with SIGINT ignored, as bash starts a script's background job (an
ignored signal stays ignored across ``exec``)."""


def test_a_command_that_ignores_sigint_runs_itself_and_its_code_is_not_interrupted(
    live: tuple[Path, int], tmp_path: Path
) -> None:
    path, server = live
    mark = tmp_path / "running"
    code = f"open({str(mark)!r}, 'w').close(); import time; time.sleep(2)"
    proc = subprocess.Popen(
        [sys.executable, "-c", IGNORING_SIGINT, SCRIPT, "-j", "exec", str(path), "--code", code],
        stdout=subprocess.PIPE, text=True, encoding="utf-8", cwd=tmp_path, env=_env(),
    )  # fmt: skip
    try:
        assert wait_until(mark.exists, 20)
        assert children_of(server) == []
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    assert json.loads(out)["run"]["status"] == "ok"


def test_an_exec_with_stdout_closed_ends_without_a_traceback(live: tuple[Path, int]) -> None:
    path, _ = live
    done = subprocess.run(
        [SCRIPT, "-j", "exec", str(path), "--code", "1"], stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, cwd=path.parent, env=_env(), timeout=TIMEOUT,
        check=False, pass_fds=(), preexec_fn=lambda: os.close(1),
    )  # fmt: skip
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
