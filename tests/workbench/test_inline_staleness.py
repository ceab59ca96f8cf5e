"""Inline code on a notebook's kernel (``Workbench.execute_code``) and the cells' statuses:
the cells whose kernel state it overwrote are stale (with their ``stale_cause``) until they
run again, in this process (the fake kernel) and in every process sharing the registry's
run log (``SharedExecutionLog`` over a registry entry, no kernel needed)."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest
from wb_helpers import make_notebook

from jupyter_jcli.kernels import KernelEntry, KernelRegistry
from jupyter_jcli.workbench import SharedExecutionLog, Workbench
from jupyter_jcli.workbench._execution_log import stale_causes, statuses
from jupyter_jcli.workbench._load import load

pytestmark = pytest.mark.anyio

WAIT = 30.0
SOURCES = ["a = 1", "b = a + 1", "print(b)", "c = 10"]


async def overview_statuses(wb: Workbench, path: Path) -> dict[str, tuple[str, str | None]]:
    cells = (await wb.notebook_overview(path)).to_dict()["cells"]
    return {c["name"]: (c["status"], c.get("stale_cause")) for c in cells}


async def test_inline_code_that_rebinds_a_name_stales_its_writer_and_dependents_until_rerun(
    wb: Workbench, work: Path
) -> None:
    path = make_notebook(work, SOURCES)
    with anyio.fail_after(WAIT):
        await wb.run_stale(path)
        before = await overview_statuses(wb, path)  # kept by the log's stamp (warm path)
        assert {status for status, _ in before.values()} == {"fresh"}
        outcome = await wb.execute_code(path, "b = -1", cwd=work)
        after = await overview_statuses(wb, path)
        read = (await wb.read_cells(path)).to_dict()["cells"]
        rerun = await wb.run_stale(path)
        final = await overview_statuses(wb, path)
    first, second, third, fourth = before
    assert outcome.effect is not None and outcome.effect.stale == (second, third)
    assert [after[n][0] for n in (first, second, third, fourth)] == [
        "fresh", "stale", "stale", "fresh",
    ]  # fmt: skip
    assert after[second][1] == after[third][1] == outcome.effect.cause is not None
    assert after[first][1] is None
    assert [c.get("stale_cause") for c in read] == [None, outcome.effect.cause,
                                                     outcome.effect.cause, None]  # fmt: skip
    assert [c.name for c in rerun.cells] == [second, third]
    assert {status for status, cause in final.values()} == {"fresh"}
    assert all(cause is None for _, cause in final.values())


async def test_inline_code_that_only_reads_stales_nothing(wb: Workbench, work: Path) -> None:
    path = make_notebook(work, SOURCES)
    with anyio.fail_after(WAIT):
        await wb.run_stale(path)
        outcome = await wb.execute_code(path, "print(b, a)\nb.real", cwd=work)
        seen = await overview_statuses(wb, path)
        plan = await wb.run_stale(path)
    assert outcome.ok and outcome.effect is not None and outcome.effect.stale == ()
    assert outcome.effect.cause is None
    assert {status for status, _ in seen.values()} == {"fresh"} and plan.cells == ()


@pytest.mark.parametrize(
    "code", ["exec('b = 2')", "globals()['b'] = 2", "from os.path import *", "%reset -f"]
)
async def test_inline_code_the_analyzer_cannot_see_through_stales_every_cell(
    wb: Workbench, work: Path, code: str
) -> None:
    path = make_notebook(work, SOURCES)
    with anyio.fail_after(WAIT):
        await wb.run_stale(path)
        outcome = await wb.execute_code(path, code, cwd=work)
        seen = await overview_statuses(wb, path)
    assert outcome.effect is not None and outcome.effect.names is None
    assert {status for status, _ in seen.values()} == {"stale"}


@pytest.mark.parametrize("code", ["%time b = 2", "%%time\nb = 2\n", "%prun -q b = 2"])
async def test_a_magic_running_code_stales_only_what_that_code_overwrote(
    wb: Workbench, work: Path, code: str
) -> None:
    path = make_notebook(work, SOURCES)
    with anyio.fail_after(WAIT):
        await wb.run_stale(path)
        outcome = await wb.execute_code(path, code, cwd=work)
        seen = await overview_statuses(wb, path)
    first, second, third, fourth = seen
    assert outcome.effect is not None and outcome.effect.names == ("b",)
    assert outcome.effect.stale == (second, third)
    assert [seen[n][0] for n in (first, second, third, fourth)] == [
        "fresh", "stale", "stale", "fresh",
    ]  # fmt: skip


async def test_calling_a_notebook_function_that_writes_a_global_stales_its_cells(
    wb: Workbench, work: Path
) -> None:
    path = make_notebook(
        work, ["steps = 0\ndef tick():\n    global steps\n    steps += 1", "print(steps)", "x = 1"]
    )
    with anyio.fail_after(WAIT):
        await wb.run_stale(path)
        outcome = await wb.execute_code(path, "tick()", cwd=work)
        seen = await overview_statuses(wb, path)
    assert outcome.effect is not None and outcome.effect.names == ("steps",)
    assert [status for status, _ in seen.values()] == ["stale", "stale", "fresh"]


def registered(registry: KernelRegistry, path: Path, epoch: str) -> None:
    now = time.time()
    entry = KernelEntry(
        notebook_path=str(path.resolve()), kernelspec="python3", cwd=str(path.parent),
        epoch=epoch, state="idle", started=now, started_by="test", idle_since=now,
        idle_timeout=60.0, keep=True,
    )  # fmt: skip
    with registry.locked(path.resolve()):
        registry.write(entry)


def test_a_change_recorded_by_one_process_stales_cells_for_another_despite_its_warm_statuses(
    tmp_path: Path, work: Path
) -> None:
    path = make_notebook(work, SOURCES)
    registry = KernelRegistry(tmp_path / "registry")
    registered(registry, path, "e1")
    mine, theirs = (
        SharedExecutionLog(registry, path.resolve()),
        SharedExecutionLog(registry, path.resolve()),
    )
    loaded = load(path)
    for view in loaded.cells:
        parents = loaded.graph.parents(view.name)
        mine.record(view.name, view.rev, "e1", 0, parents, ok=True)
    assert set(statuses(loaded, theirs, "e1").values()) == {"fresh"}  # now kept (memo)
    mine.record_change("e1", 0, ("b",), "exec b = -1")
    seen = statuses(load(path), theirs, "e1")
    first, second, third, fourth = seen
    assert [seen[n] for n in (first, second, third, fourth)] == ["fresh", "stale", "stale", "fresh"]
    assert stale_causes(load(path), theirs, "e1") == {second: "exec b = -1", third: "exec b = -1"}


async def test_inline_code_mutating_a_list_through_an_alias_stales_its_writer_and_readers(
    wb: Workbench, work: Path
) -> None:
    path = make_notebook(work, ["xs = []", "n = len(xs)", "c = 10"])
    with anyio.fail_after(WAIT):
        await wb.run_stale(path)
        outcome = await wb.execute_code(path, "ys = xs\n[ys.append(i) for i in range(2)]", cwd=work)
        seen = await overview_statuses(wb, path)
    first, second, third = seen
    assert outcome.effect is not None and outcome.effect.stale == (first, second)
    assert [seen[n][0] for n in (first, second, third)] == ["stale", "stale", "fresh"]


async def test_inline_code_overwriting_a_failed_cell_lists_it_as_error_not_made_stale(
    wb: Workbench, work: Path
) -> None:
    path = make_notebook(work, ["a = 1", "b = a / 0", "c = 2"])
    with anyio.fail_after(WAIT):
        await wb.run_stale(path)
        outcome = await wb.execute_code(path, "a = 5\nb = 3", cwd=work)
        seen = await overview_statuses(wb, path)
    first, failing, _last = seen
    assert seen[first][0] == "stale" and seen[failing] == ("error", None)
    assert outcome.effect is not None and outcome.effect.stale == (first,)


async def test_inline_code_that_raised_is_said_to_have_maybe_written_its_names(
    wb: Workbench, work: Path
) -> None:
    path = make_notebook(work, SOURCES)
    with anyio.fail_after(WAIT):
        await wb.run_stale(path)
        failed = await wb.execute_code(path, "b = 1 / 0", cwd=work)
        ended = await wb.execute_code(path, "b = -1", cwd=work)
    assert not failed.ok and failed.effect is not None and failed.effect.cause is not None
    assert "may have written b" in failed.effect.cause  # it raised before the assignment
    assert ended.effect is not None and ended.effect.cause is not None
    assert " wrote b" in ended.effect.cause and "may have" not in ended.effect.cause
