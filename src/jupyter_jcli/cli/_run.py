"""``j-cli run FILE``: run cells on the notebook's live kernel, save their outputs.

The command joins the notebook's registered kernel (``j-cli kernel start``, or another
process's) or starts one for the command (its folder as working directory, its kernelspec),
stopped at the end unless ``--keep``; it runs the chosen cells through
:func:`jupyter_jcli.workbench.shared_workbench`, writes their outputs into the notebook and
prints the condensed outputs and the overview with each cell's status (live progress on a
terminal: ``_run_live``). ``--cell`` runs the cells' ancestors that are not fresh first
(``run.requested``, ``run.parents_run``, ``run.not_fresh_parents``; and
``run.interrupted``). With
``--server-url`` (or ``JUPYTER_JCLI_SERVER_URL``) the kernel is on that Jupyter Server instead
(:mod:`jupyter_jcli.cli._server_options`; its sessions replace the local registry), and a
kernel a person already runs there for the notebook is joined (shared, ``attached``: every
cell counts as not fresh on it, so ``--stale`` runs them all). ``-j`` prints one JSON
document::

    {"schema_version": 1, "status": "ok", "operation": "run", "mode": "stale"|"all"|"cells",
     "ok": bool, "run": <execute_cells / run_stale document>, "overview": <overview document>}

The ``run`` document's lists of cells are bounded (:mod:`jupyter_jcli.cli._lists`): ``plan``,
``still_stale``, ``written`` and the ``--cell`` lists hold at most 100 names with
``<key>_count`` beside; ``cells`` keeps every cell that ran and the first 100 ``skipped``
(``skipped_count``); a ``notice`` says what was left out.

The overview (text and ``-j``) is read after the run's kernel is released, as ``j-cli notebook
overview`` and its next page (``next_call``) read it: once a kernel started for the command
has stopped, no kernel is live and every code cell is ``never_run`` (the text says so); the
run's own results are in ``run``. The text summary lists the cells not fresh by that status.

Exit status: 0 when every cell ran ``ok``; 130 when an interrupt stopped the run (Ctrl-C, or
``j-cli kernel interrupt`` from another command: the cell ends ``interrupted``, with
``interrupt_requested_by``, and its status in the overview is ``interrupted``, not
``error``; the kernel and its variables are kept); 1 when a cell failed, timed out, killed
the kernel or a restart or stop of the kernel ended the run (the document still comes,
``run.stopped_at`` names the cell, ``run.error`` is ``KERNEL_DIED`` for a death,
``KERNEL_KILLED`` for a timeout that had to kill the kernel, ``KERNEL_RESTARTED`` for a
restart);
errors of the command itself as everywhere in ``j-cli``. ``--kernel NAME`` starts that
kernelspec instead of the notebook's (a ``KERNELSPEC_NOT_FOUND`` error lists the installed
ones and says so).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import click

from jupyter_jcli.cli._cell_ref import CELL_REF_HELP
from jupyter_jcli.cli._clip import clip
from jupyter_jcli.cli._emit import echo, emit_json, json_mode, ok_document
from jupyter_jcli.cli._server_options import current_server, store_options
from jupyter_jcli.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from jupyter_jcli.analysis import CellStatus
    from jupyter_jcli.kernels import ServerConfig
    from jupyter_jcli.workbench import ExecutedCell, ExecuteOutcome, ScriptPlan, SessionOverview

__all__ = ["run_command", "run_lines"]

_EXIT_CELL_FAILED = 1
_EXIT_INTERRUPTED = 130
_INDENT = "    "
_NOT_WRITTEN = {
    "cell_changed": "outputs not saved: the cell was edited while it ran",
    "cell_removed": "outputs not saved: the cell was removed while it ran",
}


@click.command("run")
@store_options
@click.argument("file", metavar="FILE", type=click.Path(path_type=str))
@click.option("--stale", "stale", is_flag=True, help="Run the cells that are not fresh (default).")
@click.option("--all", "run_all", is_flag=True, help="Run every code cell, top to bottom.")
@click.option(
    "--cell",
    "cells",
    multiple=True,
    metavar="CELL",
    help=f"Run this cell ({CELL_REF_HELP}; repeat for several; they run in the order given).",
)
@click.option(
    "--timeout",
    type=float,
    metavar="S",
    help="Seconds each cell may run (default: $JUPYTER_JCLI_EXECUTE_TIMEOUT or 600).",
)
@click.option(
    "--kernel",
    "kernel_name",
    metavar="NAME",
    help="Start this kernelspec instead of the notebook's metadata.kernelspec.name "
    "(e.g. when that one is not installed here).",
)
@click.option(
    "--only",
    is_flag=True,
    help="With --cell: run just those cells, not their ancestors that are not fresh "
    "(the result names them: run.not_fresh_parents).",
)
@click.option(
    "--keep",
    is_flag=True,
    help="Keep the kernel this command starts running afterwards (as `j-cli kernel start`).",
)
@click.option(
    "--idle-timeout",
    type=float,
    metavar="S",
    help="With --keep: seconds without an execution after which the kernel stops by itself "
    "(default: $JUPYTER_JCLI_KERNEL_IDLE_TIMEOUT or 3600).",
)
@click.option(
    "--wait",
    "busy_wait",
    type=click.FloatRange(min=0, max=86400),
    default=0.0,
    metavar="S",
    help="Seconds to wait while another command runs cells on the notebook's kernel "
    "(default 0: refused at once with KERNEL_BUSY).",
)
def run_command(
    file: str,
    *,
    stale: bool,
    run_all: bool,
    cells: tuple[str, ...],
    timeout: float | None,
    kernel_name: str | None,
    only: bool,
    keep: bool,
    idle_timeout: float | None,
    busy_wait: float,
) -> int:
    """Run cells of FILE on the notebook's live kernel and save their outputs into it.

    The notebook's live kernel (`j-cli kernel start`, another command's --keep, or
    jupyter-mcp's) is used when there is one; else a kernel is started for the command and
    stopped at its end (unless --keep). --stale (the default) runs exactly the cells that are
    not fresh on that kernel, in order (on a new kernel: all of them), and stops at the first
    failing cell. --cell runs the named cells after their ancestors that are not fresh
    (--only: without them). Ctrl-C interrupts the running cell and saves what it printed.
    Exit 1 when a cell fails, 130 when interrupted. With --server-url the kernel runs on
    that Jupyter Server; a kernel someone already runs there for the notebook (JupyterLab)
    is joined and shared, not restarted.
    """
    modes = [
        name for name, given in (("stale", stale), ("all", run_all), ("cells", cells)) if given
    ]
    if len(modes) > 1:
        raise UsageError("Give one of --stale, --all or --cell.", {"modes": modes})
    if only and not cells:
        raise UsageError("--only goes with --cell.", {"only": True})
    mode = modes[0] if modes else "stale"
    created: ScriptPlan | None = None  # the notebook run script.py created for the script
    server = current_server()  # resolved by store_options: a bad URL is refused already
    if file.lower().endswith(".py") and _local(file):  # a notebook script: below, once paired
        from jupyter_jcli.cli._run_script import run_plain_script

        script = run_plain_script(file, timeout=timeout, kernel_name=kernel_name, modes=modes)
        if isinstance(script, int):
            return script
        created = script if script.created else None
    from jupyter_jcli.cli._cell_ref import resolve_to_names

    names = resolve_to_names(file, cells)  # before any kernel starts
    if server is None and not json_mode():  # -j: one document on stdout, nothing else
        from jupyter_jcli.cli._run_live import waiting_line
        from jupyter_jcli.workbench import kernel_notebook_path

        waiting = waiting_line(kernel_notebook_path(file), file, busy_wait)
        if waiting is not None:
            echo(waiting, err=True)
    import anyio

    from jupyter_jcli.cli._exec import kernelspec_hints

    with kernelspec_hints():
        bench = {"keep": keep, "idle_timeout": idle_timeout, "busy_wait": busy_wait}
        options = {"timeout": timeout, "kernel_name": kernel_name}
        outcome, overview, extra, statuses = anyio.run(
            partial(_run, file, mode, names, only=only, server=server, bench=bench, **options)
        )
    if json_mode():
        from jupyter_jcli.cli._document_render import overview_document
        from jupyter_jcli.cli._lists import bounded
        from jupyter_jcli.workbench import compact

        emit_json(  # fields that carry nothing left out, as `exec` and the MCP text do
            compact(
                ok_document(
                    operation="run",
                    mode=mode,
                    ok=outcome.ok,
                    run=bounded({**outcome.to_dict(), **extra}, file),
                    overview=overview_document(overview, file, None),
                    created_notebook=created.created_dict() if created else None,
                )
            )
        )
    else:
        for line in run_lines(outcome, overview, file, statuses):
            echo(line)
        for line in _parents_lines(extra, file):
            echo(line)
    if extra.get("interrupted") or _interrupted_cell(outcome) is not None:
        return _EXIT_INTERRUPTED
    return 0 if outcome.ok else _EXIT_CELL_FAILED


def _interrupted_cell(outcome: ExecuteOutcome) -> ExecutedCell | None:
    """The cell an interrupt (not a restart or a stop) ended, if the run ended so."""
    return next(
        (
            cell
            for cell in outcome.cells
            if cell.status == "interrupted" and cell.interrupted_by == "kernel_interrupted"
        ),
        None,
    )


def _parents_lines(cells: dict[str, Any], file_arg: str) -> list[str]:
    from jupyter_jcli.cli._document_render import cell_names

    lines = []
    if cells.get("parents_run"):
        ran = cell_names(cells["parents_run"], file_arg)
        lines.append(f"ran first, as they were not fresh: {ran}")
    if cells.get("not_fresh_parents"):
        lines.append(
            "warning: ran without running their ancestors that are not fresh (--only): "
            + cell_names(cells["not_fresh_parents"], file_arg)
        )
    return lines


async def _run(
    file: str,
    mode: str,
    cells: Sequence[str],
    *,
    only: bool,
    server: ServerConfig | None,
    bench: Mapping[str, Any],
    **options: Any,
) -> tuple[ExecuteOutcome, SessionOverview, dict[str, Any], dict[str, CellStatus]]:
    """Run the cells of ``mode`` on a :func:`~jupyter_jcli.workbench.shared_workbench`
    (``bench``: its keyword arguments besides ``server``) with the run ``options``
    (``timeout``, ``kernel_name``), live progress on stderr outside ``-j``; then read the
    overview as every later command will."""
    from jupyter_jcli.cli._run_live import LiveView, interrupt_on_sigint
    from jupyter_jcli.workbench import (
        kernel_notebook_path,
        run_cells_with_parents,
        shared_workbench,
    )

    view = None if json_mode() else LiveView()
    options.update(on_progress=view.progress if view is not None else None, include_images=False)
    extra: dict[str, Any] = {}
    outcome: ExecuteOutcome
    async with shared_workbench(server=server, **bench) as workbench:
        if view is not None and server is None:  # a registry kernel's outputs, live
            workbench.pool.kernel(str(kernel_notebook_path(file))).listeners.append(view.output)
        async with interrupt_on_sigint(workbench.pool) as interrupted:
            if mode == "stale":
                outcome = await workbench.run_stale(file, **options)
            elif mode == "cells":
                ran = await run_cells_with_parents(
                    workbench, file, list(cells), only=only, **options
                )
                outcome = ran.outcome
                extra.update(ran.to_dict())
            else:
                outcome = await workbench.execute_cells(file, await _code_cells(file), **options)
        if view is not None:
            view.finish()
        extra["interrupted"] = interrupted[0]
    # The overview is read after the run's kernel is released (stopped, unless kept or used
    # by another process), as `j-cli notebook overview` and its next page read it: its
    # statuses are the ones every later command sees, never those of a kernel now gone.
    async with shared_workbench(server=server) as after:
        overview = await after.notebook_overview(file)  # one page: a run can be huge
        whole = await after.notebook_overview(file, limit=None)
    return outcome, overview, extra, whole.statuses


async def _code_cells(file: str) -> list[str]:
    import anyio

    from jupyter_jcli.notebook.store import open_notebook

    document = await anyio.to_thread.run_sync(open_notebook, file)
    names = [view.name for view in document.cells if view.cell_type == "code"]
    if not names:
        raise UsageError("The notebook has no code cell to run.", {"path": file})
    return names


def run_lines(
    outcome: ExecuteOutcome,
    overview: SessionOverview,
    file_arg: str,
    statuses: Mapping[str, CellStatus] | None = None,
) -> list[str]:
    """The run as text: one block per cell (header line, indented condensed outputs, cut
    hints as ``j-cli notebook output FILE_ARG ...`` commands), a summary line, the cells not
    fresh grouped by their status in ``statuses`` (every code cell's, read with ``overview``
    after the run, so both agree; default: ``overview.statuses``), then one line per cell of
    the notebook with its status and tldr."""
    from jupyter_jcli.cli._document_render import cell_name, cell_names, outputs_text
    from jupyter_jcli.cli._exec import stop_words
    from jupyter_jcli.cli._render import counted

    lines: list[str] = []
    for cell in outcome.cells:
        if cell.status == "skipped":
            continue
        count = f"[{cell.execution_count}]" if cell.execution_count is not None else "[ ]"
        extra = f"  {cell.ename}: {cell.evalue}" if cell.ename else ""
        lines.append(
            f"{count} {cell_name(cell.name)} (cell {cell.index}): {_status(cell)}"
            f" {cell.duration_s:.2f}s{clip(extra, 120)}"
        )
        if cell.not_written_reason is not None:
            lines.append(_INDENT + _NOT_WRITTEN[cell.not_written_reason])
        if cell.outputs is not None and cell.outputs.text:
            shown = outputs_text(cell.outputs, file_arg)
            lines.extend(_INDENT + line for line in shown.splitlines())
    skipped = [cell.name for cell in outcome.cells if cell.status == "skipped"]
    if skipped:
        lines.append(
            f"skipped ({len(skipped):,}), not run after the stop: {cell_names(skipped, file_arg)}"
        )
    counts = Counter(cell.status for cell in outcome.cells)
    total = sum(cell.duration_s for cell in outcome.cells)
    summary = ", ".join(f"{n:,} {status}" for status, n in counts.items()) or "nothing to run"
    kernel = "a new kernel" if outcome.kernel_started else "the kernel"
    if outcome.kernel.origin.attached:
        kernel = f"the shared kernel of {outcome.kernel.origin.started_by or 'someone else'}"
    lines.append("")
    done = len(outcome.cells) - len(skipped)
    ran = (
        counted(done, "cell")
        if not skipped
        else f"{done:,} of {counted(len(outcome.cells), 'cell')}"
    )
    lines.append(f"ran {ran} on {kernel} in {total:.1f} s: {summary}")
    if outcome.error is not None:
        lines.append(f"error {outcome.error['code']}: {outcome.error['message']}")
    stopped = _interrupted_cell(outcome)
    if stopped is not None:
        kernel_now = (  # the overview is read once the run let its kernel go
            "the kernel keeps its variables"
            if overview.kernel.epoch is not None
            else "the kernel started for this run has stopped: its variables are gone"
        )
        lines.append(
            f"interrupted: {cell_name(stopped.name)} was {stop_words(stopped)}; its outputs "
            f"so far are saved, the later cells did not run, {kernel_now}"
        )
    if outcome.written:
        lines.append(f"outputs saved into {outcome.notebook_path}")
    statuses = overview.statuses if statuses is None else statuses
    lines.extend(_after_lines(outcome, overview, statuses, file_arg))
    lines.append("")
    lines.extend(_overview_lines(overview, file_arg))
    return lines


def _after_lines(
    outcome: ExecuteOutcome,
    overview: SessionOverview,
    statuses: Mapping[str, CellStatus],
    file_arg: str,
) -> list[str]:
    """What is not fresh now, by status (the overview's vocabulary), or, when the run's
    kernel is gone, that nothing is fresh on a live kernel any more."""
    from jupyter_jcli.cli._document_render import cell_names

    if overview.kernel.epoch is None and outcome.epoch is not None:
        return [
            "no kernel is live now (one started for a command stops at its end; --keep or "
            "j-cli kernel start keeps it), so the overview below, like every later read, "
            "shows each code cell never_run"
        ]
    groups: dict[str, list[str]] = {}
    for name, status in statuses.items():
        if status != "fresh":
            groups.setdefault(status, []).append(name)
    if not groups:
        return []
    shown = "; ".join(f"{status} {cell_names(names, file_arg)}" for status, names in groups.items())
    return [f"not fresh ({sum(map(len, groups.values())):,}): {shown}"]


def _status(cell: ExecutedCell) -> str:
    """The cell's status, with what stopped it: ``interrupted by a kernel restart``,
    ``timeout, kernel killed``."""
    from jupyter_jcli.cli._exec import stop_words

    text = stop_words(cell) if cell.interrupted_by is not None else cell.status
    return text + (", kernel killed" if cell.kernel_killed else "")


def _overview_lines(overview: SessionOverview, file_arg: str) -> list[str]:
    """The overview's first page as ``j-cli notebook overview`` shows it (the same table, so
    its next page, named last, continues the same columns), under a line counting the
    statuses."""
    from jupyter_jcli.cli._document_render import more_cells_line, overview_table

    summary = ", ".join(f"{n:,} {status}" for status, n in overview.status_summary.items())
    head = f"{overview.path}: {overview.cell_count:,} cells ({summary or 'no code'})"
    more = more_cells_line(overview, file_arg, None)
    return [head, *overview_table(overview), *([more] if more else [])]


def _local(file: str) -> bool:
    """Whether ``file`` opens as a file here (no active server store takes it: a server's
    ``.py`` is read as a notebook by the server's jupytext, or refused by its store)."""
    from jupyter_jcli.notebook.stores import active_choice

    choice = active_choice()
    return choice is None or choice.local_only or choice.kind_for(file) == "local"
