"""Which cells must re-run: staleness after an edit, freshness against an execution log, the plan.

Rules (analysis issue, section 2):

- after an edit, the edited code cells and their transitive dependents are stale; then, while
  some stale cell reads a name before it writes it (its ``reads & writes``: ``x += 1``,
  ``items.append(v)``, ``df['z'] = ...``, ``avg = total / n`` then ``total = 0``, ``tick()``
  whose function does ``global steps; steps += 1``; the package docstring states the rule),
  the nearest writer of that name above it and that writer's dependents are stale too:
  re-running the cell alone would start from the value its own last run left;
- the re-run plan applies the same replay to every planned cell that already ran on the live
  kernel, including a fresh writer it replays (so a chain of ``x += 1`` cells replays back
  to ``x = ...``);
- a cell is fresh only if its current rev ran on the live kernel epoch, after the last run of
  each cell it depends on, each of those is fresh, its set of parents is the one it ran
  with, and no code run outside the cells since overwrote its state (inline code, rule in
  :mod:`._overwrites`). No live epoch means nothing is fresh.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from jupyter_jcli.analysis._graph import NotebookGraph
from jupyter_jcli.errors import AnalysisError, ErrorCode

__all__ = [
    "CellStatus",
    "ExecutionRecord",
    "Freshness",
    "StateChange",
    "cell_freshness",
    "fresh_cells",
    "overwriting_changes",
    "rerun_plan",
    "stale_after_edit",
]

CellStatus = Literal["fresh", "stale", "never_run", "error", "interrupted"]
"""``fresh``: up to date on the live kernel; ``stale``: ran on the live kernel but its source,
its parents or a parent's run changed since; ``never_run``: no run on the live kernel (or no
live kernel); ``error``: its current rev's last run on the live kernel failed;
``interrupted``: its current rev's last run on the live kernel was stopped by an interrupt
(``j-cli kernel interrupt``, Ctrl-C, ``interrupt_kernel``) before it ended: not a failure of
its code, but its state may be partial, so it is not fresh either."""


@dataclass(frozen=True, slots=True)
class ExecutionRecord:
    """One execution of a cell, as the kernel layer records it.

    Attributes:
        key: the cell's name.
        rev: the cell rev that ran.
        epoch: the kernel epoch it ran on (a fresh id per kernel start or restart).
        seq: a number that grows with every execution in the process (orders runs).
        parents: keys of the cell's parents in the graph when it ran.
        ok: ``False`` when the execution raised (or was interrupted).
        interrupted: the execution was stopped by an interrupt, not by its code (with
            ``ok`` ``False``): the cell's status is ``interrupted``, not ``error``.
    """

    key: str
    rev: str
    epoch: str
    seq: int
    parents: Collection[str]
    ok: bool = True
    interrupted: bool = False


@dataclass(frozen=True, slots=True)
class StateChange:
    """One run of code outside the cells on a kernel epoch, as the execution log records it.

    Attributes:
        seq: its place among the cells' runs (the execution log's sequence, shared with
            :class:`ExecutionRecord`).
        epoch: the kernel epoch it ran on.
        names: the names it may have written (:class:`~._overwrites.CodeWrites`);
            ``None``: any name.
        cause: for a person and a model: what ran, who ran it and what it wrote.
    """

    seq: int
    epoch: str
    names: tuple[str, ...] | None
    cause: str


def stale_after_edit(
    graph: NotebookGraph, edited: Iterable[str], *, before: NotebookGraph | None = None
) -> list[str]:
    """Cells that must re-run after ``edited`` changed, when everything was fresh before.

    Args:
        graph: the graph of the notebook after the edit.
        edited: keys of the edited cells. Markdown and raw cells stale nothing.
        before: the graph before the edit, if known: dependents the edited cells had then
            (names they no longer write) are stale too.

    Returns:
        Keys in document order.

    Raises:
        AnalysisError: ``CELL_NOT_FOUND`` for a key that is not in ``graph``.
    """
    start = {i for i in (graph.index(k) for k in edited) if graph.cells[i].cell_type == "code"}
    if before is not None:
        for i in list(start):
            key = graph.cells[i].key
            if key in before._index:
                old = before.cells[before.index(key)]
                lost = (before.cells[c].key for c in old.children)
                start.update(graph.index(k) for k in lost if k in graph._index)
    statuses: dict[str, CellStatus] = {
        n.key: "stale" if n.index in start else "fresh"
        for n in graph.cells
        if n.cell_type == "code"
    }
    return [graph.cells[i].key for i in sorted(_plan(graph, statuses, None))]


def _latest_records(
    execution_log: Sequence[ExecutionRecord], live_epoch: str | None
) -> dict[str, ExecutionRecord]:
    latest: dict[str, ExecutionRecord] = {}
    if live_epoch is not None:
        for rec in execution_log:
            if rec.epoch == live_epoch:
                cur = latest.get(rec.key)
                if cur is None or rec.seq > cur.seq:
                    latest[rec.key] = rec
    return latest


def overwriting_changes(
    graph: NotebookGraph,
    execution_log: Sequence[ExecutionRecord],
    live_epoch: str | None,
    changes: Sequence[StateChange],
) -> dict[str, StateChange]:
    """The cells whose kernel state code run outside them overwrote since their last run on
    the live kernel, each with the latest such :class:`StateChange` (rule in
    :mod:`jupyter_jcli.analysis._overwrites`); changes of other epochs are ignored."""
    if live_epoch is None or not changes:
        return {}
    from jupyter_jcli.analysis._overwrites import overwritten_cells

    latest = _latest_records(execution_log, live_epoch)
    found: dict[str, StateChange] = {}
    for change in sorted((c for c in changes if c.epoch == live_epoch), key=lambda c: c.seq):
        for key in overwritten_cells(graph, change.names):
            rec = latest.get(key)
            if rec is not None and rec.seq < change.seq:
                found[key] = change
    return found


@dataclass(frozen=True, slots=True)
class Freshness:
    """Every code cell's status against the live kernel, and why the stale ones are stale.

    Attributes:
        statuses: ``{key: status}`` for every code cell, in document order.
        causes: ``{key: why}`` for the ``stale`` cells whose own rev and parents did not
            change (for a person and a model): code run outside the cells overwrote their
            state, they read a name after another cell rebound it, or the re-run plan runs
            them (a replayed writer, a rebinding cell restored after it, a dependent).
    """

    statuses: dict[str, CellStatus]
    causes: dict[str, str]


def fresh_cells(
    graph: NotebookGraph,
    execution_log: Sequence[ExecutionRecord],
    live_epoch: str | None,
    revs: Mapping[str, str],
    changes: Sequence[StateChange] = (),
) -> dict[str, CellStatus]:
    """The status of every code cell against the runs recorded on the live kernel: the
    statuses of :func:`cell_freshness` (same arguments, same errors)."""
    return cell_freshness(graph, execution_log, live_epoch, revs, changes).statuses


def cell_freshness(
    graph: NotebookGraph,
    execution_log: Sequence[ExecutionRecord],
    live_epoch: str | None,
    revs: Mapping[str, str],
    changes: Sequence[StateChange] = (),
) -> Freshness:
    """The status of every code cell against the runs recorded on the live kernel, with the
    cause of each ``stale`` one whose own rev and parents did not change.

    A cell is ``fresh`` when its current rev ran (and succeeded) on the live epoch with the
    parents it has now, after each parent's last run, every parent is fresh, no code run
    outside the cells overwrote its state since (:func:`overwriting_changes`), each name it
    reads still held its writer's value when it ran (no other writer of the name ran between
    the two), and :func:`rerun_plan` would not run it. So a cell the plan runs always reads
    ``stale``: the statuses, an edit's :func:`stale_after_edit` and the plan are one set.

    Args:
        graph: the notebook's graph now.
        execution_log: executions, in any order (``seq`` orders them); other epochs are ignored.
        live_epoch: the live kernel's epoch, or ``None`` when no kernel is running.
        revs: the current rev of every code cell, by key.
        changes: code run on the kernel outside the cells (:class:`StateChange`).

    Returns:
        The :class:`Freshness` (statuses in document order; see :data:`CellStatus`).

    Raises:
        AnalysisError: ``CELL_NOT_FOUND`` when ``revs`` has no rev for a code cell.
    """
    latest = _latest_records(execution_log, live_epoch)
    overwritten = overwriting_changes(graph, execution_log, live_epoch, changes) if changes else {}
    writers: dict[str, list[int]] = {}
    for node in graph.cells:
        if node.cell_type == "code":
            for name in node.writes:
                writers.setdefault(name, []).append(node.index)
    status: dict[str, CellStatus] = {}
    causes: dict[str, str] = {}
    for node in graph.cells:
        if node.cell_type != "code":
            continue
        rev = revs.get(node.key)
        if rev is None:
            raise AnalysisError(
                ErrorCode.CELL_NOT_FOUND,
                f"no rev given for code cell {node.key!r}",
                {"cell": node.key},
            )
        rec = latest.get(node.key)
        if rec is None:
            status[node.key] = "never_run"
        elif rec.rev != rev:
            status[node.key] = "stale"
        elif not rec.ok:
            status[node.key] = "interrupted" if rec.interrupted else "error"
        else:
            parents = [graph.cells[p].key for p in node.parents]
            ok = set(parents) == set(rec.parents) and all(
                status[p] == "fresh" and latest[p].seq < rec.seq for p in parents
            )
            status[node.key] = "fresh" if ok and node.key not in overwritten else "stale"
            if ok and node.key not in overwritten:
                cause = _read_rebound(graph, node.index, rec.seq, latest, writers)
                if cause is not None:
                    status[node.key] = "stale"
                    causes[node.key] = cause
    for key, change in overwritten.items():
        causes.setdefault(key, change.cause)
    for i, why in _plan(graph, status, None).items():
        key = graph.cells[i].key
        if why is not None and status[key] == "fresh":
            status[key] = "stale"
            causes[key] = why
    return Freshness(status, causes)


def _read_rebound(
    graph: NotebookGraph,
    index: int,
    seq: int,
    latest: Mapping[str, ExecutionRecord],
    writers: Mapping[str, list[int]],
) -> str | None:
    """Why the cell at ``index`` (last run at ``seq``) read a name its writer no longer held
    (another writer of the name ran between the writer's run and the cell's), else ``None``."""
    node = graph.cells[index]
    for name in sorted(node.reads):
        writer = node.inputs.get(name)
        if writer is None:
            continue
        wrote = latest[graph.cells[writer].key].seq
        for other in writers.get(name, ()):
            if other in (writer, index):
                continue
            run = latest.get(graph.cells[other].key)
            if run is not None and wrote < run.seq < seq:
                return f"read {name} after {graph.cells[other].key} rebound it"
    return None


def rerun_plan(
    graph: NotebookGraph,
    statuses: Mapping[str, CellStatus],
    targets: Iterable[str] | None = None,
) -> list[str]:
    """The cells to run, in document order, to bring ``targets`` up to date.

    Every non-fresh cell among the targets and their ancestors runs; a planned cell that
    already ran on the live kernel (``stale``, ``error``, or ``fresh`` and planned as a
    replayed writer or a dependent) and reads a name before it writes it replays that name's
    nearest writer above, transitively (``x = 1`` / ``x += 1`` / ``x += 1``: re-running the
    last replays both cells above); every planned cell's dependents among the targets and
    their ancestors run after it.

    Args:
        graph: the notebook's graph now.
        statuses: from :func:`fresh_cells`; a code cell missing here counts as ``never_run``.
        targets: keys of the cells wanted up to date; ``None`` means every code cell.

    Returns:
        Keys in document order (parents are always above their children).

    Raises:
        AnalysisError: ``CELL_NOT_FOUND`` for a target key that is not in ``graph``.
    """
    return [graph.cells[i].key for i in sorted(_plan(graph, statuses, targets))]


def _plan(
    graph: NotebookGraph,
    statuses: Mapping[str, CellStatus],
    targets: Iterable[str] | None,
) -> dict[int, str | None]:
    """:func:`rerun_plan` as ``{index: why}``: ``None`` for a cell that is not fresh, else
    why a fresh cell re-runs (for a person and a model: the ``stale_cause``)."""
    code = [n.index for n in graph.cells if n.cell_type == "code"]
    if targets is None:
        scope = set(code)
    else:
        scope = set()
        stack = [graph.index(k) for k in targets]
        while stack:
            i = stack.pop()
            if i not in scope and graph.cells[i].cell_type == "code":
                scope.add(i)
                stack.extend(graph.cells[i].parents)

    def ran(i: int) -> bool:
        return statuses.get(graph.cells[i].key, "never_run") != "never_run"

    writers: dict[str, list[int]] = {}
    for i in code:
        for name in graph.cells[i].writes:
            writers.setdefault(name, []).append(i)
    plan: dict[int, str | None] = {
        i: None for i in scope if statuses.get(graph.cells[i].key, "never_run") != "fresh"
    }
    work = sorted(plan)
    while work:
        # The closure: dependents, and the writers replayed for cells that read a name before
        # they rebind it.
        while work:
            node = graph.cells[work.pop()]
            if ran(node.index):
                for name in sorted(node.reads & node.writes):
                    writer = node.inputs.get(name)
                    if writer is not None and writer not in plan:
                        plan[writer] = f"{node.key} reads {name} before writing it and re-runs"
                        work.append(writer)
            for c in node.children:
                if c in scope and c not in plan:
                    plan[c] = f"depends on {node.key}, which re-runs"
                    work.append(c)
        # Then the writers whose value a cell below has rebound since it ran, judged against
        # the closed plan (a writer that re-runs anyway restores nothing): replayed, and the
        # cells that rebound it re-run after, so the kernel ends as a run from the top would.
        found: dict[int, str] = {}
        for i in sorted(plan):
            node = graph.cells[i]
            for name in sorted(node.reads):
                writer = node.inputs.get(name)
                if writer is None or writer in plan or writer in found:
                    continue
                later = [w for w in writers.get(name, ()) if w > i and ran(w)]
                if later:
                    by = graph.cells[later[-1]].key
                    found[writer] = f"{node.key} re-runs and reads {name}, which {by} rebound"
                    for w in later:
                        found.setdefault(w, f"restores {name} after {node.key} re-runs")
        for i, why in found.items():
            if i not in plan:
                plan[i] = why
                work.append(i)
    return plan
