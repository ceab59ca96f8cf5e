"""A Workbench on a Jupyter Server, and a kernel someone else started (``attached``).

The server backend is faked: ``jupyter_jcli.kernels.backend_factory`` is replaced (to check
that the config reaches it) or the Workbench gets a pool on the fake backend, whose kernel
is a person's: it reports ``attached`` and keeps its namespace (their variables) across our
joins, as a JupyterLab session on a server does.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from wb_helpers import make_notebook

from jupyter_jcli import kernels
from jupyter_jcli.errors import ErrorCode, JcliError, KernelError
from jupyter_jcli.kernels import KernelOrigin, KernelPool, ServerConfig
from jupyter_jcli.workbench import Workbench, server_from_options
from kernel_fakes import FakeBackend, InProcessPython, python_backend

pytestmark = pytest.mark.anyio

WAIT = 30
SERVER = ServerConfig(url="http://127.0.0.1:8888/", token="t0k3n")
LAB = KernelOrigin(
    attached=True,
    started_by="JupyterLab session 1f0e",
    kernel_id="k-42",
    server_url=SERVER.url,
)
SOURCES = ["x = 40", "y = x + 2", "print(y)"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class PersonsKernel:
    """A kernel a person runs on the server: one namespace, one fake backend per join."""

    def __init__(self, origin: KernelOrigin = LAB) -> None:
        self.python = InProcessPython()
        self.python.namespace["x"] = 40  # the person ran the first cell in JupyterLab
        self.python.namespace["secret_of_the_hour"] = "an hour of state"
        self.joins: list[FakeBackend] = []
        self.origin = origin

    def __call__(self) -> FakeBackend:
        backend = python_backend(origin=self.origin, python=self.python)
        self.joins.append(backend)
        return backend

    def workbench(self, cache: Path) -> Workbench:
        return Workbench(cache_dir=cache, pool=KernelPool(backend_factory=self), server=SERVER)


def _saved_run(path: Path) -> None:
    """The notebook as the person saved it: every code cell with an execution count and an
    output, as if it all ran."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    for number, cell in enumerate(notebook["cells"], start=1):
        cell["execution_count"] = number
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "ran\n"}]
    path.write_text(json.dumps(notebook, indent=1) + "\n", encoding="utf-8")


async def _statuses(wb: Workbench, path: Path) -> dict[str, str]:
    return dict((await wb.notebook_overview(path)).statuses)


async def test_a_server_config_reaches_backend_factory_and_its_kernels_run_the_cells(
    work: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[ServerConfig | None] = []

    def factory(server: ServerConfig | None) -> kernels.BackendFactory:
        asked.append(server)
        return python_backend

    monkeypatch.setattr(kernels, "backend_factory", factory)
    path = make_notebook(work, SOURCES)
    with anyio.fail_after(WAIT):
        async with Workbench(cache_dir=cache, server=SERVER) as wb:
            assert wb.server is SERVER
            outcome = await wb.run_stale(path)
    assert asked == [SERVER]
    assert outcome.ok and [cell.status for cell in outcome.cells] == ["ok", "ok", "ok"]


async def test_without_a_server_no_server_backend_is_asked_for(
    work: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(server: ServerConfig | None) -> kernels.BackendFactory:
        raise AssertionError("a server backend was asked for")

    monkeypatch.setattr(kernels, "backend_factory", refuse)
    async with Workbench(cache_dir=cache) as wb:
        assert wb.server is None


def test_a_workbench_for_a_server_this_build_cannot_reach_fails_at_construction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def unreachable(server: ServerConfig | None) -> kernels.BackendFactory:
        raise KernelError(ErrorCode.SERVER_UNREACHABLE, "no backend", {})

    monkeypatch.setattr(kernels, "backend_factory", unreachable)
    with pytest.raises(JcliError) as caught:
        Workbench(server=SERVER)
    assert caught.value.code == ErrorCode.SERVER_UNREACHABLE


async def test_the_overview_joins_nothing_and_nothing_is_fresh_from_the_saved_file(
    work: Path, cache: Path
) -> None:
    person = PersonsKernel()
    path = make_notebook(work, SOURCES)
    _saved_run(path)
    async with person.workbench(cache) as wb:
        overview = await wb.notebook_overview(path)
        assert person.joins == []
        assert overview.kernel.state == "not_started"
        assert set(overview.statuses.values()) == {"never_run"}


async def test_inspect_variable_joins_the_persons_kernel_and_sees_their_variable(
    work: Path, cache: Path
) -> None:
    person = PersonsKernel()
    path = make_notebook(work, SOURCES)
    _saved_run(path)
    with anyio.fail_after(WAIT):
        async with person.workbench(cache) as wb:
            variable = await wb.inspect_variable(path, "secret_of_the_hour")
            overview = await wb.notebook_overview(path)
    assert variable.repr == "'an hour of state'"
    assert len(person.joins) == 1
    kernel = overview.to_dict()["kernel"]
    assert kernel["attached"] is True
    assert kernel["started_by"] == LAB.started_by
    assert kernel["kernel_id"] == LAB.kernel_id
    # joined, alive, with the person's state: still nothing counts as fresh
    assert set(overview.statuses.values()) == {"never_run"}


async def test_a_cell_is_fresh_only_once_it_ran_on_the_attached_kernel(
    work: Path, cache: Path
) -> None:
    person = PersonsKernel()
    path = make_notebook(work, SOURCES)
    _saved_run(path)
    with anyio.fail_after(WAIT):
        async with person.workbench(cache) as wb:
            names = list(await _statuses(wb, path))
            executed = await wb.execute_cells(path, [names[0]])
            statuses = await _statuses(wb, path)
            plan = (await wb.run_stale(path, dry_run=True)).plan
    assert executed.kernel.origin.attached
    assert executed.to_dict()["kernel"]["started_by"] == LAB.started_by
    assert statuses == {names[0]: "fresh", names[1]: "never_run", names[2]: "never_run"}
    assert list(plan) == names[1:]


async def test_runs_of_an_earlier_join_never_make_a_cell_fresh_on_a_later_one(
    work: Path, cache: Path
) -> None:
    person = PersonsKernel()
    path = make_notebook(work, SOURCES)
    with anyio.fail_after(WAIT):
        async with person.workbench(cache) as first:
            assert (await first.run_stale(path)).still_stale == ()
        # another jupyter-mcp joins the same kernel later: the person may have run anything
        async with person.workbench(cache) as second:
            await second.inspect_variable(path, "y")
            assert set((await _statuses(second, path)).values()) == {"never_run"}
        # and in one process: the connection is lost, the next call joins again
        async with person.workbench(cache) as third:
            names = list(await _statuses(third, path))
            assert (await third.run_stale(path)).still_stale == ()
            person.joins[-1].die()
            assert set((await _statuses(third, path)).values()) == {"never_run"}
            await third.execute_cells(path, [names[0]])
            statuses = await _statuses(third, path)
    assert statuses == {names[0]: "fresh", names[1]: "never_run", names[2]: "never_run"}
    assert len({id(backend) for backend in person.joins}) == len(person.joins) == 4


async def test_restarting_an_attached_kernel_needs_force_and_a_refusal_changes_nothing(
    work: Path, cache: Path
) -> None:
    person = PersonsKernel()
    path = make_notebook(work, SOURCES)
    with anyio.fail_after(WAIT):
        async with person.workbench(cache) as wb:
            await wb.execute_cells(path, [next(iter(await _statuses(wb, path)))])
            epoch = (await wb.notebook_overview(path)).kernel.epoch
            with pytest.raises(JcliError) as caught:
                await wb.restart_kernel(path)
            assert caught.value.code == ErrorCode.KERNEL_SHARED
            assert caught.value.details["started_by"] == LAB.started_by
            assert (await wb.notebook_overview(path)).kernel.epoch == epoch
            assert person.joins[0].shutdowns == [] and len(person.joins) == 1
            restarted = await wb.restart_kernel(path, force=True)
    assert restarted.previous_epoch == epoch and restarted.epoch != epoch
    assert person.joins[0].shutdowns == [False]


async def test_a_restart_on_a_server_joins_first_and_refuses_the_persons_kernel(
    work: Path, cache: Path
) -> None:
    person = PersonsKernel()
    path = make_notebook(work, SOURCES)
    with anyio.fail_after(WAIT):
        async with person.workbench(cache) as wb:
            with pytest.raises(JcliError) as caught:
                await wb.restart_kernel(path)
            # joined (to learn it is shared), not restarted: the person's state is kept
            variable = await wb.inspect_variable(path, "x")
            assert len(person.joins) == 1 and person.joins[0].shutdowns == []
    assert caught.value.code == ErrorCode.KERNEL_SHARED
    assert variable.repr == "40"


async def test_a_restart_on_a_server_without_a_session_starts_one_kernel_only(
    work: Path, cache: Path
) -> None:
    ours = PersonsKernel(origin=KernelOrigin(kernel_id="k-7", server_url=SERVER.url))
    path = make_notebook(work, SOURCES)
    with anyio.fail_after(WAIT):
        async with ours.workbench(cache) as wb:
            restarted = await wb.restart_kernel(path)
    assert restarted.previous_epoch is None and restarted.epoch is not None
    assert not restarted.kernel.origin.attached
    assert len(ours.joins) == 1


async def test_locally_inspect_variable_still_needs_a_running_kernel(
    work: Path, cache: Path
) -> None:
    path = make_notebook(work, SOURCES)
    async with Workbench(cache_dir=cache, pool=KernelPool(backend_factory=python_backend)) as wb:
        with pytest.raises(JcliError) as caught:
            await wb.inspect_variable(path, "x")
    assert caught.value.code == ErrorCode.KERNEL_NOT_RUNNING


@pytest.mark.parametrize(
    "token", ["${JUPYTER_JCLI_SERVER_TOKEN}", "${JUPYTER_JCLI_SERVER_TOKEN:-}", "{env:TOKEN}"]
)
def test_a_token_the_host_left_unexpanded_is_a_usage_error(token: str) -> None:
    environ = {"JUPYTER_JCLI_SERVER_URL": SERVER.url, "JUPYTER_JCLI_SERVER_TOKEN": token}
    with pytest.raises(JcliError) as caught:
        server_from_options(None, None, None, environ=environ)
    assert caught.value.code == ErrorCode.USAGE_ERROR
    assert token not in str(caught.value.to_dict())


def test_server_options_fall_back_to_the_environment_and_a_token_alone_means_local() -> None:
    environ = {"JUPYTER_JCLI_SERVER_URL": "http://lab:8888", "JUPYTER_JCLI_SERVER_TOKEN": "abc"}
    server = server_from_options(None, None, None, environ=environ)
    assert server is not None and server.url == "http://lab:8888/" and server.token == "abc"
    assert server_from_options(None, None, None, environ={"JUPYTER_JCLI_SERVER_TOKEN": "a"}) is None
    assert "abc" not in repr(server)
