"""Running named cells on the state they need: their parents that are not fresh run first.

A cell run on a kernel that lacks what its parents define fails (``NameError``) or, worse,
computes from old values, and its saved output is replaced by that. So
:func:`run_cells_with_parents` runs, before the requested cells, every ancestor of theirs
(transitively, through the static DAG) whose status on the live kernel is not ``fresh``, in
document order, before the first requested cell that needs it (a requested cell is not run
twice); with ``only=True`` it runs just the requested cells and says which of their
ancestors were not fresh (``BatchWithParents.not_fresh_parents``), so nothing runs against state it
does not have without saying so.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jupyter_jcli._json import json_fields
from jupyter_jcli.workbench._execute import ProgressCallback
from jupyter_jcli.workbench._outcomes import ExecuteOutcome
from jupyter_jcli.workbench._server import join_to_plan
from jupyter_jcli.workbench._session import Workbench
from jupyter_jcli.workbench._status_views import SessionOverview

__all__ = ["BatchWithParents", "run_cells_with_parents"]


@dataclass(frozen=True)
class BatchWithParents:
    """What :func:`run_cells_with_parents` ran.

    Attributes:
        outcome: the execution (``cells`` lists the ancestors first, then the requested).
        requested: the cells asked for, in the order given.
        parents_run: the ancestors that were not fresh and ran before the requested cells
            that need them.
        not_fresh_parents: with ``only``: the ancestors that were not fresh and did not run
            (the requested cells ran without their state); empty otherwise.
    """

    outcome: ExecuteOutcome
    requested: tuple[str, ...]
    parents_run: tuple[str, ...]
    not_fresh_parents: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"requested", "parents_run", "not_fresh_parents"}`` (the outcome is separate)."""
        return json_fields(self, "requested parents_run not_fresh_parents")


async def run_cells_with_parents(
    workbench: Workbench,
    path: str | os.PathLike[str],
    names: Sequence[str],
    *,
    only: bool = False,
    timeout: float | None = None,
    on_progress: ProgressCallback | None = None,
    include_images: bool = True,
    kernel_name: str | None = None,
) -> BatchWithParents:
    """Run ``names`` after the ancestors of theirs that are not fresh (see the module). The
    plan is made and run under one hold of the kernel, so another caller's run cannot
    change what is fresh in between.

    Raises:
        The codes of :meth:`Workbench.execute_cells`.
    """
    document = await workbench._document(path)
    kernel = workbench.pool.kernel(workbench._kernel_path(document))
    async with kernel.hold():  # the plan and the run see one kernel state
        started = await join_to_plan(kernel, workbench.server)
        overview = await workbench.notebook_overview(path)
        plan, skipped = _plan(overview, names, only=only)
        outcome = await workbench.execute_cells(
            path,
            plan,
            timeout=timeout,
            on_progress=on_progress,
            include_images=include_images,
            kernel_name=kernel_name,
        )
    if started:  # the join started it, before the run could see it start
        outcome = dataclasses.replace(outcome, kernel_started=True)
    return BatchWithParents(
        outcome=outcome,
        requested=tuple(names),
        parents_run=tuple(n for n in plan if n not in names),
        not_fresh_parents=tuple(skipped),
    )


def _plan(
    overview: SessionOverview, names: Sequence[str], *, only: bool
) -> tuple[list[str], list[str]]:
    """The cells to run, in order (each ancestor of ``names`` that is not fresh before the
    first requested cell that needs it, then that cell; with ``only``, ``names`` alone), and
    the ancestors that are not fresh and do not run (with ``only``)."""
    statuses = overview.statuses
    parents = {cell.name: tuple(cell.parents) for cell in overview.cells}
    order = {cell.name: cell.index for cell in overview.cells}
    plan: list[str] = []
    planned: set[str] = set()
    skipped: list[str] = []
    for name in names:
        needed = [n for n in _ancestors(name, parents) if statuses.get(n, "fresh") != "fresh"]
        for ancestor in sorted(needed, key=lambda n: order.get(n, 0)):
            if ancestor in planned or ancestor in skipped:
                continue
            if only:
                skipped.append(ancestor)
            else:
                plan.append(ancestor)
                planned.add(ancestor)
        if name not in planned:
            plan.append(name)
            planned.add(name)
    return plan, skipped


def _ancestors(name: str, parents: dict[str, tuple[str, ...]]) -> set[str]:
    found: set[str] = set()
    stack = list(parents.get(name, ()))
    while stack:
        current = stack.pop()
        if current not in found and current != name:
            found.add(current)
            stack.extend(parents.get(current, ()))
    return found
