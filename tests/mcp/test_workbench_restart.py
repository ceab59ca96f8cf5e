"""``jupyter-mcp`` over stdio, on a real kernel, when a call is cut short from outside:
``restart_kernel`` while ``execute_cells`` or ``run_stale`` runs (it used to kill the server:
``anyio.BrokenResourceError``, then "connection closed" for every later call), two restarts at
once; a timeout the cell ignores and a cell removed while it runs (the server in this process
on real kernels, so the kernel's settle time after an interrupt can be cut from 10 s to 1.5 s).
A missing kernelspec is the workbench's choice of kernelspec, not the kernel's: it runs
in-process on the fake kernel."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from memory_client import workbench_in_process
from workbench_client import call, error_code, module_params, ok, open_session, server_env

from jupyter_jcli.kernels import LocalBackend

pytestmark = pytest.mark.anyio

NB = "work.ipynb"
TICKS = "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.1)"
CELLS = [
    {"source": "kept = 1", "name": "kept"},
    {"source": TICKS, "name": "ticks"},
    {"source": "after = kept + 1", "name": "after"},
]
WAIT = 90


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    return folder.resolve()


def _params(root: Path, tmp_path: Path) -> Any:
    return module_params("--root", str(root), env=server_env(tmp_path / "cache"))


def _stream(root: Path, index: int) -> str:
    cell = json.loads((root / NB).read_text(encoding="utf-8"))["cells"][index]
    return "".join("".join(o["text"]) for o in cell["outputs"] if o["output_type"] == "stream")


class Running:
    """One long tool call in a task; ``ticking`` is set once a heartbeat came for ``cell``
    (it has run for a second: it printed)."""

    def __init__(self, session: ClientSession, tool: str, cell: str, **arguments: Any) -> None:
        self.session, self.tool, self.cell, self.arguments = session, tool, cell, arguments
        self.ticking = anyio.Event()
        self.document: Any = None

    async def progress(self, _progress: float, _total: float | None, message: str | None) -> None:
        if message and self.cell in message and "elapsed" in message:
            self.ticking.set()

    async def __call__(self) -> None:
        result, self.document = await call(self.session, self.tool, self.progress, **self.arguments)
        assert not result.is_error, self.document


@pytest.mark.kernel
async def test_a_restart_while_a_cell_prints_keeps_the_server_up_and_the_output_saved(
    root: Path, tmp_path: Path
) -> None:
    errlog = tmp_path / "err.log"
    async with open_session(_params(root, tmp_path), errlog) as session:
        await ok(session, "create_notebook", path=NB, cells=CELLS)
        await ok(session, "execute_cells", path=NB, names=["kept"])
        running = Running(session, "execute_cells", "ticks", path=NB, names=["ticks", "after"])
        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as group:
                group.start_soon(running)
                await running.ticking.wait()
                restarted = await ok(session, "restart_kernel", path=NB)
        saved_before_restart = _stream(root, 1)
        overview = await ok(session, "notebook_overview", path=NB)
        again = await ok(session, "execute_cells", path=NB, names=["kept", "after"])
        stale_run = Running(session, "run_stale", "ticks", path=NB)
        restarts: list[Any] = []

        async def restart() -> None:
            restarts.append(await ok(session, "restart_kernel", path=NB))

        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as group:
                group.start_soon(stale_run)
                await stale_run.ticking.wait()
                group.start_soon(restart)
                group.start_soon(restart)
        last = await ok(session, "execute_cells", path=NB, names=["kept"])
    document = running.document
    assert [(c["status"], c["interrupted_by"]) for c in document["cells"]] == [
        ("interrupted", "kernel_restarted"),
        ("skipped", None),
    ]
    assert document["error"]["code"] == "KERNEL_RESTARTED"
    assert document["written"] == ["ticks"]
    assert "tick 0" in document["cells"][0]["outputs"]["text"]
    assert saved_before_restart.startswith("tick 0\n")  # what it printed is in the file
    assert restarted["interrupted_cell"] == "ticks"
    assert restarted["epoch"] != document["epoch"]
    assert overview["kernel"]["epoch"] == restarted["epoch"]
    assert [c["status"] for c in again["cells"]] == ["ok", "ok"]
    stale = stale_run.document
    assert stale["plan"] == ["ticks"]  # kept and after are fresh on the new kernel
    assert stale["cells"][0]["status"] == "interrupted"
    assert stale["error"]["code"] == "KERNEL_RESTARTED"
    assert len(restarts) == 2 and restarts[0]["epoch"] == restarts[1]["epoch"]
    assert last["epoch"] == restarts[0]["epoch"] and last["cells"][0]["status"] == "ok"
    log = errlog.read_text(encoding="utf-8")
    assert "BrokenResourceError" not in log and "non-socket" not in _ours(log)


@pytest.mark.kernel
async def test_a_killed_kernel_and_a_removed_cell_are_explained_and_kernel_name_is_kept(
    root: Path, in_process: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("jupyter_jcli.kernels._request.SETTLE_TIMEOUT", 1.5)
    remover = (
        f"import json\nnb = json.load(open({NB!r}))\n"
        "nb['cells'] = [c for c in nb['cells'] if 'REMOVE-ME' not in ''.join(c['source'])]\n"
        f"json.dump(nb, open({NB!r}, 'w'))  # REMOVE-ME"
    )
    ignores = (
        "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "print('ignoring', flush=True)\ntime.sleep(600)"
    )
    cells = [
        {"source": ignores, "name": "ignores"},
        {"source": remover, "name": "remover"},
        {"source": "1 + 1", "name": "two"},
    ]
    async with workbench_in_process(
        root, in_process, seconds=WAIT, backend_factory=LocalBackend
    ) as session:
        await ok(session, "create_notebook", path=NB, cells=cells)
        with anyio.fail_after(WAIT):
            killed = await ok(session, "execute_cells", path=NB, names=["ignores"], timeout=1)
            removed = await ok(session, "execute_cells", path=NB, names=["remover", "two"])
        document = json.loads((root / NB).read_text(encoding="utf-8"))
        document["metadata"]["kernelspec"] = {"name": "python2", "display_name": "Python 2"}
        (root / NB).write_text(json.dumps(document), encoding="utf-8")
        await ok(session, "restart_kernel", path=NB, kernel_name="python3")
        await ok(session, "restart_kernel", path=NB)  # the override is remembered
        result, missing = await call(session, "execute_cells", path=NB, names=["two"])
    assert (killed["cells"][0]["status"], killed["cells"][0]["kernel_killed"]) == ("timeout", True)
    assert killed["error"]["code"] == "KERNEL_KILLED"
    assert killed["kernel"]["state"] == "dead" and "ignores" in killed["still_stale"]
    assert removed["cells"][0]["written"] is False
    assert removed["cells"][0]["not_written_reason"] == "cell_removed"
    assert removed["written"] == ["two"]
    assert not result.is_error and missing["cells"][0]["status"] == "ok"


async def test_a_missing_kernelspec_names_the_installed_ones_and_kernel_name(
    root: Path, in_process: Path
) -> None:
    async with workbench_in_process(root, in_process) as session:
        await ok(session, "create_notebook", path=NB, cells=CELLS[:1])
        document = json.loads((root / NB).read_text(encoding="utf-8"))
        document["metadata"]["kernelspec"] = {"name": "conda-env-gone-py", "display_name": "x"}
        (root / NB).write_text(json.dumps(document), encoding="utf-8")
        _, refused = await call(session, "execute_cells", path=NB, names=["kept"])
        code = await error_code(session, "run_stale", path=NB)
        fixed = await ok(session, "run_stale", path=NB, kernel_name="python3")
    assert refused["code"] == code == "KERNELSPEC_NOT_FOUND"
    assert refused["details"]["kernelspec"] == "conda-env-gone-py"
    assert refused["details"]["source"] == "notebook_metadata"
    assert "python3" in refused["details"]["installed"]
    assert "kernel_name" in refused["details"]["hint"]
    assert fixed["cells"][0]["status"] == "ok" and fixed["kernel"]["kernelspec_name"] == "python3"


async def test_a_kernel_name_that_cannot_be_honoured_is_refused_at_once_and_not_remembered(
    root: Path, in_process: Path
) -> None:
    async with workbench_in_process(root, in_process) as session:
        await ok(session, "create_notebook", path=NB, cells=CELLS[:1])
        first = await ok(session, "run_stale", path=NB)
        typo = await call(session, "run_stale", path=NB, kernel_name="typo-kernel")
        restart_typo = await call(session, "restart_kernel", path=NB, kernel_name="typo-kernel")
        kept = await ok(session, "inspect_variable", path=NB, name="kept")
        restarted = await ok(session, "restart_kernel", path=NB)
        again = await ok(session, "run_stale", path=NB)
        overview = await ok(session, "notebook_overview", path=NB)
    for result, refused in (typo, restart_typo):
        assert result.is_error and refused["code"] == "KERNELSPEC_NOT_FOUND"
        assert refused["details"]["source"] == "kernel_name"
        assert refused["details"]["kernelspec"] == "typo-kernel"
    assert kept["name"] == "kept"  # the live kernel and its variables survived the refusals
    assert restarted["epoch"] != first["epoch"]
    assert again["cells"][0]["status"] == "ok"
    assert overview["kernel"]["kernelspec_name"] == "python3"


async def test_a_kernel_name_other_than_the_live_kernels_is_refused(
    root: Path, in_process: Path
) -> None:
    from functools import partial

    from kernel_fakes import FakeBackend, InProcessPython

    def two_specs() -> FakeBackend:
        return FakeBackend(InProcessPython(), kernelspecs=["python3", "other"])

    async with workbench_in_process(
        root, in_process, backend_factory=partial(two_specs)
    ) as session:
        await ok(session, "create_notebook", path=NB, cells=CELLS[:1])
        first = await ok(session, "run_stale", path=NB)
        _, refused = await call(session, "execute_cells", path=NB, names=["kept"],
                                kernel_name="other")  # fmt: skip
        overview = await ok(session, "notebook_overview", path=NB)
        switched = await ok(session, "restart_kernel", path=NB, kernel_name="other")
        after = await ok(session, "execute_cells", path=NB, names=["kept"], kernel_name="other")
    assert refused["code"] == "KERNELSPEC_MISMATCH"
    assert refused["details"]["running_kernelspec"] == "python3"
    assert "restart_kernel" in refused["details"]["hint"]
    assert overview["kernel"]["epoch"] == first["epoch"]
    assert overview["kernel"]["kernelspec_name"] == "python3"
    assert switched["kernel"]["kernelspec_name"] == "other"
    assert after["cells"][0]["status"] == "ok"


def _ours(log: str) -> str:
    """The server's stderr without the records of the kernels' own tornado logger: a kernel
    started for the server writes its stderr there too, and ipykernel logs tornado's
    records as ``LEVEL:tornado.*:`` (``logging.BASIC_FORMAT``; ours are ``name LEVEL:``).
    Shut down while its iopub still sends, it may log ``Socket operation on non-socket``
    from a ZMQStream on its closed socket: its own shutdown race, not a fault of ours."""
    kept, theirs = [], False
    for line in log.splitlines():
        if re.match(r"[A-Z]+:tornado\.", line):
            theirs = True
            continue
        if theirs:
            if line.startswith((" ", "Traceback", "During handling", "The above")) or not line:
                continue
            theirs = False
            if re.match(r"[\w.]+(Error|Exception)\b", line):
                continue  # the last line of its traceback
        kept.append(line)
    return "\n".join(kept)
