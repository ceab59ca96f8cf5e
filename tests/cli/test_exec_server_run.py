"""``j-cli -j run`` through the warm exec server: a child of the server runs the click
application as the command's own process would (the same answer, notebook, exit status and
signals), and the server learns the modules a run imports from the children that ran one.
Every command is the real console script in its own process, on a real kernel."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import nbformat
import pytest
from jcli_helpers import never_run_notebook as notebook
from test_exec_lane import masked
from test_exec_server import (
    SCRIPT,
    TIMEOUT,
    _env,
    children_of,
    jcli,
    listening,
    name_listens,
    served,
    servers,
    spawn,
    wait_until,
)

from jupyter_jcli.cli._exec_client import DISABLE_ENV
from jupyter_jcli.cli._exec_server import _learn, _report_modules
from jupyter_jcli.notebook.document import Document

pytestmark = pytest.mark.kernel

SLOW = (
    "open({mark!r}, 'w').close()\nimport time\nprint('started', flush=True)\n"
    "time.sleep({seconds})\ndone = 1"
)
"""A first cell that marks its start with a file (path ``mark``), prints, then sleeps."""


def names(path: Path) -> list[str]:
    return [view.name for view in Document.load(path).cells]


def ran(answer: str) -> list[str]:
    document = json.loads(answer)
    cells = document["run"].get("cells", [])  # none ran: left out of the -j run answer
    return [c["name"] for c in cells if c["status"] != "skipped"]


def warm_server(path: Path, registry: Path, *command: str) -> int:
    """Start the notebook's kernel, then run ``command`` (in its own process: it starts the
    server); returns the server's pid once it listens."""
    status, out = jcli(path.parent, "-j", "kernel", "start", path)
    assert status == 0, out
    status, out = jcli(path.parent, *command)
    assert status == 0, out
    assert wait_until(lambda: len(servers(registry)) == 1), servers(registry)
    (server,) = servers(registry)
    assert wait_until(lambda: listening(server)), "the server never listened"
    return server


@pytest.fixture
def stop_all(tmp_path: Path, kernel_registry: Path):  # type: ignore[no-untyped-def]
    yield
    jcli(tmp_path, "-j", "kernel", "stop", "--all")
    for pid in servers(kernel_registry):
        os.kill(pid, signal.SIGKILL)


@pytest.mark.usefixtures("stop_all")
def test_a_run_on_a_live_kernel_is_served_and_answers_as_in_its_own_process(
    tmp_path: Path, kernel_registry: Path
) -> None:
    mark = str(tmp_path / "running")
    path = notebook(tmp_path, [SLOW.format(mark=mark, seconds=1), "b = done + 1", "print(b)"])
    server = warm_server(path, kernel_registry, "-j", "exec", str(path), "--code", "pass")
    status, out, running = served(path, server, "-j", "run", str(path), "--stale")
    assert running and all(pid != server for pid in running)
    assert status == 0 and ran(out) == names(path)
    saved = nbformat.read(path, as_version=4)
    assert saved.cells[2].outputs[0]["text"] == "2\n"

    restarted = jcli(tmp_path, "-j", "kernel", "restart", str(path))
    assert restarted[0] == 0, restarted[1]
    alone = jcli(tmp_path, "-j", "run", str(path), "--stale", **{DISABLE_ENV: "0"})
    assert alone[0] == status
    mask = masked(out), masked(alone[1])
    for document in mask:  # who ran it, the epoch and the kernel differ by design
        document["run"].pop("kernel"), document.pop("overview")
        document["run"].pop("epoch", None)
    assert mask[0] == mask[1]


@pytest.mark.usefixtures("stop_all")
def test_a_served_run_sees_an_edit_made_between_commands_and_runs_only_the_stale_cells(
    tmp_path: Path, kernel_registry: Path
) -> None:
    path = notebook(tmp_path, ["a = 1", "b = a + 1", "c = 10", "print(b, c)"])
    *_, third, fourth = names(path)
    server = warm_server(path, kernel_registry, "-j", "run", str(path), "--stale")
    source = tmp_path / "new.py"
    source.write_text("c = 20\n", encoding="utf-8")
    rev = Document.load(path).cell(third).rev
    edit = jcli(tmp_path, "cell", "update", str(path), third, "--expected-rev", rev,
                "--source-file", str(source))  # fmt: skip
    assert edit[0] == 0, edit[1]
    status, out = jcli(tmp_path, "-j", "run", str(path), "--stale")
    assert status == 0 and ran(out) == [third, fourth]
    assert json.loads(out)["run"]["cells"][1]["outputs"]["text"].endswith("2 20\n")
    assert servers(kernel_registry) == [server]  # the same server served it


@pytest.mark.usefixtures("stop_all")
def test_a_server_started_by_a_run_serves_runs_and_execs(
    tmp_path: Path, kernel_registry: Path
) -> None:
    """The server imports the spawning run's modules in their import order (``_asyncio``
    before ``asyncio`` broke every served run's event loop)."""
    path = notebook(tmp_path, ["a = 1", "print(a)"])
    server = warm_server(path, kernel_registry, "-j", "run", str(path), "--stale")
    for _ in range(2):
        status, out = jcli(tmp_path, "-j", "run", str(path), "--stale")
        assert status == 0, out
        assert json.loads(out)["status"] == "ok" and ran(out) == []
    status, out = jcli(tmp_path, "-j", "exec", str(path), "--code", "print(a * 7)")
    assert status == 0 and json.loads(out)["outputs"][0]["text"] == ["7\n"]
    assert servers(kernel_registry) == [server]


@pytest.mark.usefixtures("stop_all")
def test_ctrl_c_on_a_served_run_interrupts_the_cell_and_saves_what_it_printed(
    tmp_path: Path, kernel_registry: Path
) -> None:
    mark = tmp_path / "running"
    path = notebook(tmp_path, [SLOW.format(mark=str(mark), seconds=60), "print(done)"])
    server = warm_server(path, kernel_registry, "-j", "exec", str(path), "--code", "pass")
    proc = spawn(tmp_path, "-j", "run", str(path), "--stale")
    try:
        assert wait_until(mark.exists, 30) and children_of(server) != []
        time.sleep(0.5)  # the cell's print reaches the command
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out
    cells = json.loads(out)["run"]["cells"]
    assert cells[0]["status"] == "interrupted"
    saved = nbformat.read(path, as_version=4)
    assert saved.cells[0].outputs[0]["text"] == "started\n"
    assert saved.cells[1].outputs == []


def test_the_server_imports_the_modules_a_finished_child_reported(tmp_path: Path) -> None:
    module = tmp_path / "jcli_learned_probe.py"
    module.write_text("VALUE = 42\n", encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        finished_read, finished_write = os.pipe()
        running_read, running_write = os.pipe()
        for fd in (finished_read, running_read):
            os.set_blocking(fd, False)
        import jcli_learned_probe  # noqa: F401  (the child's import)

        before = frozenset(name for name in sys.modules if name != "jcli_learned_probe")
        _report_modules(finished_write, before)  # closes its end
        del sys.modules["jcli_learned_probe"]
        reports = {finished_read: bytearray(), running_read: bytearray()}
        assert _learn(reports) is True
        assert sys.modules["jcli_learned_probe"].VALUE == 42
        assert list(reports) == [running_read]  # a child still running keeps its pipe
        os.close(running_write)
        assert _learn(reports) is True and reports == {}
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("jcli_learned_probe", None)


def test_a_learned_module_that_starts_a_thread_ends_the_server(tmp_path: Path) -> None:
    module = tmp_path / "jcli_thread_probe.py"
    module.write_text(
        textwrap.dedent(
            """
            import threading
            STOP = threading.Event()
            THREAD = threading.Thread(target=STOP.wait, daemon=True)
            THREAD.start()
            """
        ),
        encoding="utf-8",
    )
    sys.path.insert(0, str(tmp_path))
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    try:
        os.write(write_end, b"jcli_thread_probe\n_private\nnot a module\n")
        os.close(write_end)
        assert threading.active_count() == 1
        assert _learn({read_end: bytearray()}) is False
        assert "_private" not in sys.modules
    finally:
        probe = sys.modules.pop("jcli_thread_probe", None)
        if probe is not None:
            probe.STOP.set()
            probe.THREAD.join(5)
        sys.path.remove(str(tmp_path))


@pytest.mark.usefixtures("stop_all")
def test_a_run_without_json_runs_in_its_own_process(tmp_path: Path, kernel_registry: Path) -> None:
    """Only ``-j run`` goes to the server: a run that shows live progress runs itself."""
    mark = tmp_path / "running"
    path = notebook(tmp_path, [f"open({str(mark)!r}, 'w').close()\nimport time\ntime.sleep(2)"])
    server = warm_server(path, kernel_registry, "-j", "exec", str(path), "--code", "pass")
    proc = spawn(tmp_path, "run", str(path), "--stale")
    try:
        assert wait_until(mark.exists, 30)
        assert children_of(server) == []
        proc.communicate(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0


def _server(tmp_path: Path, modules: list[str], name: str) -> subprocess.Popen[bytes]:
    """A server process started as ``spawn_server`` starts one, warmed with ``modules`` (from
    ``tmp_path`` too), for a registry that holds an entry."""
    registry = tmp_path / "registry"
    registry.mkdir(exist_ok=True)
    (registry / "entry.json").write_text("{}", encoding="utf-8")
    warm = {"path": [str(tmp_path), *sys.path], "modules": modules, "registry": str(registry)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter_jcli.cli._exec_server", name],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(warm).encode())
    proc.stdin.close()
    return proc


def test_a_server_whose_warm_imports_start_a_thread_never_serves(tmp_path: Path) -> None:
    (tmp_path / "jcli_start_thread.py").write_text(
        "import threading\nthreading.Thread(target=threading.Event().wait, daemon=True).start()\n",
        encoding="utf-8",
    )
    tag = f"{os.getpid()}-{time.monotonic_ns()}"
    threaded = _server(tmp_path, ["json", "jcli_start_thread"], f"jcli-test-threaded-{tag}")
    plain = _server(tmp_path, ["json"], f"jcli-test-plain-{tag}")
    try:
        seen_listening = False
        deadline = time.monotonic() + TIMEOUT
        while threaded.poll() is None and time.monotonic() < deadline:
            seen_listening = seen_listening or name_listens(f"jcli-test-threaded-{tag}")
            time.sleep(0.01)
        assert threaded.wait(timeout=TIMEOUT) == 0
        assert not seen_listening  # it ended before it ever accepted a command
        assert wait_until(lambda: name_listens(f"jcli-test-plain-{tag}"))
        time.sleep(3.0)  # two of the plain server's checks: its registry has an entry
        assert plain.poll() is None
    finally:
        for proc in (threaded, plain):
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=TIMEOUT)


@pytest.mark.usefixtures("stop_all")
@pytest.mark.parametrize("closed", [0, 1, 2], ids=["stdin", "stdout", "stderr"])
def test_a_command_with_a_closed_descriptor_starts_no_server(
    tmp_path: Path, kernel_registry: Path, closed: int
) -> None:
    """Such a command runs itself (its child would take the folder's descriptor as the closed
    one); a server named after that setting would serve nobody, so none is started."""
    path = notebook(tmp_path, ["a = 1"])
    status, out = jcli(tmp_path, "-j", "kernel", "start", path)
    assert status == 0, out
    for command in (["-j", "run", str(path), "--stale"], ["-j", "exec", str(path), "--code", "1"]):
        done = subprocess.run(
            [SCRIPT, *command], cwd=tmp_path, env=_env(), timeout=TIMEOUT, check=False,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=lambda: os.close(closed),
        )  # fmt: skip
        assert done.returncode in (0, 1)  # 1: stdout closed, the answer had nowhere to go
    time.sleep(1.0)  # a server that was started would be running by now
    assert servers(kernel_registry) == []
    status, out = jcli(tmp_path, "-j", "run", str(path), "--stale")
    assert status == 0, out
    assert wait_until(lambda: len(servers(kernel_registry)) == 1)  # the control
