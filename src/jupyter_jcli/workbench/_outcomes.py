"""Results of the kernel-attached operations: executions, the stale re-run, kernel control."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypedDict

from jupyter_jcli._json import json_fields
from jupyter_jcli.kernels import InterruptReason, KernelInfo
from jupyter_jcli.workbench._envelope import condensed_dict, result_document

if TYPE_CHECKING:
    from jupyter_jcli.condense import CondensedOutputs

__all__ = [
    "ErrorEntry",
    "ExecuteOutcome",
    "ExecutedCell",
    "ExecutedCellStatus",
    "KernelOutcome",
    "NotWrittenReason",
    "RunStaleOutcome",
    "condensed_dict",
]

ExecutedCellStatus = Literal["ok", "error", "timeout", "died", "interrupted", "skipped"]
"""How one cell of an execution call ended: ``ok``; ``error`` (it raised: ``ename``,
``evalue``); ``timeout`` (interrupted after the call's timeout; ``kernel_killed`` when it
would not stop and the kernel was killed: the call's ``error`` is ``KERNEL_KILLED``);
``died`` (the kernel process ended while it ran: the call's ``error`` is ``KERNEL_DIED``);
``interrupted`` (stopped from outside the call, ``interrupted_by`` says how: an interrupt
request, or a restart, then the call's ``error`` is ``KERNEL_RESTARTED``, or a shutdown);
``skipped`` (not run, because an earlier cell of the call did not end ``ok``)."""

NotWrittenReason = Literal["cell_changed", "cell_removed"]
"""Why a cell that ran got no outputs in the file: ``cell_changed``: its source or type was
edited (in JupyterLab, an editor, another call) while it ran, so the outputs would describe
a source that is gone; ``cell_removed``: it was deleted meanwhile."""


class ErrorEntry(TypedDict):
    """An error the call reports without raising (the error JSON's fields)."""

    code: str
    message: str
    details: dict[str, Any]


@dataclass(frozen=True)
class ExecutedCell:
    """One cell of an execution call.

    Attributes:
        name: the cell's name.
        index: its physical position when the call started.
        rev: the rev that ran (or would have run, when skipped).
        status: see :data:`ExecutedCellStatus`.
        execution_count: the kernel's execution counter for this run (``None`` if skipped or
            the kernel died first).
        duration_s: wall time of the execution, in seconds (0 when skipped).
        output_count: outputs the run produced (now saved in the notebook).
        outputs: the outputs condensed like ``read_cells`` (text within the call's budget,
            rasters as downscaled images), ``None`` when there are none or no budget was left.
        ename: exception class name for ``error`` (``KeyboardInterrupt`` after a timeout).
        evalue: exception message for ``error``.
        written: whether the outputs were written into the notebook (``False`` when skipped,
            or when the cell was edited or removed by someone else meanwhile).
        not_written_reason: for a cell that ran but was not written, why (see
            :data:`NotWrittenReason`); else ``None``.
        interrupted_by: for ``interrupted``, what stopped it (``kernel_interrupted``,
            ``kernel_restarted``, ``kernel_shutdown``); else ``None``.
        interrupt_requested_by: for ``interrupted``, who asked for it when another process
            did (``j-cli kernel interrupt`` or a restart, from the registry: ``j-cli pid
            123``); else ``None``.
        interrupt_requested_command: that process's command line (``j-cli kernel interrupt
            nb.ipynb``) when recorded; else ``None``.
        kernel_killed: the cell would not stop on interrupt and the kernel was killed: every
            variable is gone and every cell is stale (the next execution starts a new
            kernel).
    """

    name: str
    index: int
    rev: str
    status: ExecutedCellStatus
    execution_count: int | None
    duration_s: float
    output_count: int
    outputs: CondensedOutputs | None
    ename: str | None = None
    evalue: str | None = None
    written: bool = False
    not_written_reason: NotWrittenReason | None = None
    interrupted_by: InterruptReason | None = None
    interrupt_requested_by: str | None = None
    interrupt_requested_command: str | None = None
    kernel_killed: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (condensed outputs as in ``read_cells``)."""
        return json_fields(
            self, duration_s=round(self.duration_s, 4), outputs=condensed_dict(self.outputs)
        )


@dataclass(frozen=True)
class ExecuteOutcome:
    """What ``Workbench.execute_cells`` returns.

    Attributes:
        path: the file the call named (absolute).
        notebook_path: the ``.ipynb`` whose kernel ran the cells and that holds the outputs.
        cells: every cell of the call in run order, the ones not run ``skipped``.
        stopped_at: name of the first cell that did not end ``ok``, else ``None``.
        error: what ended the call's kernel state, else ``None`` (details: ``cell``,
            ``index``): ``KERNEL_DIED`` (the kernel died), ``KERNEL_KILLED`` (a cell ignored
            the interrupt after its timeout and the kernel was killed), ``KERNEL_RESTARTED``
            (a restart interrupted the call), ``KERNEL_NOT_RUNNING`` (a shutdown did). The
            operation still reports what ran; in each case every cell is stale afterwards.
        still_stale: code cells not ``fresh`` after the call, in document order.
        epoch: the kernel epoch the cells ran on (``None`` if nothing ran).
        kernel_started: a new kernel was started for this call (first execution, or after a
            restart, a shutdown or a death): every earlier run stopped counting.
        kernel_restarted: the new kernel replaced one that had died.
        kernel: the kernel's state after the call.
        written: names of the cells whose outputs were written into the notebook.
    """

    operation: ClassVar[str] = "execute_cells"

    path: Path
    notebook_path: Path
    cells: tuple[ExecutedCell, ...]
    stopped_at: str | None
    error: ErrorEntry | None
    still_stale: tuple[str, ...]
    epoch: str | None
    kernel_started: bool
    kernel_restarted: bool
    kernel: KernelInfo
    written: tuple[str, ...]

    JSON_KEYS: ClassVar[str] = (
        "notebook_path ok stopped_at error epoch kernel_started kernel_restarted kernel"
        " image_count cells written still_stale"
    )
    """The keys of :meth:`to_dict`, in order."""

    @property
    def ok(self) -> bool:
        """Whether every cell of the call ran and ended ``ok``."""
        return self.stopped_at is None

    @property
    def image_count(self) -> int:
        """Images returned over all cells."""
        return sum(len(c.outputs.images) for c in self.cells if c.outputs is not None)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document: ``schema_version``, ``status``, ``operation``, the fields."""
        return result_document(self.operation, self, self.JSON_KEYS)


@dataclass(frozen=True)
class RunStaleOutcome(ExecuteOutcome):
    """What ``Workbench.run_stale`` returns: an :class:`ExecuteOutcome` plus the plan.

    Attributes:
        plan: the cells the re-run plan named, in document order (what ran, or with
            ``dry_run`` what would run).
        dry_run: nothing was run (and no kernel started); ``cells`` is empty.
    """

    operation: ClassVar[str] = "run_stale"

    plan: tuple[str, ...]
    dry_run: bool

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (the :class:`ExecuteOutcome` fields plus ``plan``, ``dry_run``)."""
        document = super().to_dict()
        document["plan"] = list(self.plan)
        document["dry_run"] = self.dry_run
        return document


@dataclass(frozen=True)
class KernelOutcome:
    """What ``Workbench.restart_kernel`` and ``Workbench.interrupt_kernel`` return.

    Attributes:
        operation: ``"restart_kernel"`` or ``"interrupt_kernel"``.
        path: the file the call named (absolute).
        notebook_path: the ``.ipynb`` the kernel belongs to.
        previous_epoch: the epoch before the call (``None``: no live kernel).
        epoch: the epoch after it (a restart mints a new one).
        interrupted_cell: the cell that was running when the interrupt or restart came
            (``None`` if idle); its call reports it ``interrupted``.
        kernel: the kernel's state after the call.
        still_stale: code cells not ``fresh`` after the call (after a restart: every one).
    """

    operation: Literal["restart_kernel", "interrupt_kernel"]
    path: Path
    notebook_path: Path
    previous_epoch: str | None
    epoch: str | None
    interrupted_cell: str | None
    kernel: KernelInfo
    still_stale: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The JSON document."""
        return result_document(self.operation, self)
