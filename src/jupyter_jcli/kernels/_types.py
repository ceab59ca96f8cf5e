"""Value types of the kernel layer: outputs, display updates, results, kernel info."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple

__all__ = [
    "AskedStop",
    "DisplayUpdate",
    "ExecutionResult",
    "ExecutionStatus",
    "InterruptReason",
    "KernelInfo",
    "KernelMessage",
    "KernelOrigin",
    "KernelState",
    "MessageCallback",
    "Output",
    "OutputCallback",
]

Output = dict[str, Any]
"""One nbformat v4 output dict (``output_type`` ``stream``, ``display_data``,
``execute_result`` or ``error``), as https://nbformat.readthedocs.io/en/latest/format_description.html
defines it. Multiline strings are kept as one ``str``."""

KernelMessage = Mapping[str, Any]
"""One Jupyter message as a dict: ``header``, ``parent_header``, ``metadata``, ``content``
(https://jupyter-client.readthedocs.io/en/latest/messaging.html)."""

OutputCallback = Callable[[Output], "Awaitable[None] | None"]
"""Called with each output as one iopub message produced it (a stream chunk, a display, an
error, or a display update rendered as ``display_data``). May be sync or async."""

MessageCallback = Callable[[str, dict[str, Any]], None]
"""Called with each iopub message of a request as it arrives, before it is translated: its
``msg_type`` and ``content`` (Jupyter messaging spec, "IOPub"; ``status`` messages are not
given). For a sink that applies the messaging rules to a live document itself
(``notebook.live``: ``clear_output``, ``update_display_data``, ``execute_input``). Sync.
"""

ExecutionStatus = Literal["ok", "error", "timeout", "died", "interrupted"]
"""``ok``: ran to the end; ``error``: raised (``ename``/``evalue`` set); ``timeout``: ran past
its timeout and was interrupted; ``died``: the kernel process ended while it ran;
``interrupted``: stopped by a request from outside the execution (see :data:`InterruptReason`)
before it could end ``ok``."""

InterruptReason = Literal["kernel_interrupted", "kernel_restarted", "kernel_shutdown"]
"""Why an execution ended ``interrupted``: ``kernel_interrupted``: an interrupt request
(:meth:`NotebookKernel.interrupt`) reached it (the kernel and its variables are kept);
``kernel_restarted`` / ``kernel_shutdown``: a restart or shutdown of the kernel stopped it
first (its outputs so far are kept; the kernel's state is gone)."""


class AskedStop(NamedTuple):
    """A stop another command asked of a kernel, as the registry (or a server's ledger)
    recorded it: ``reason``, ``who`` (its :func:`~jupyter_jcli.kernels.process_name`,
    ``"j-cli pid 123"``) and ``command`` (its command line, ``"j-cli kernel interrupt
    nb.ipynb"``), either ``None`` when not recorded."""

    reason: InterruptReason
    who: str | None
    command: str | None = None


KernelState = Literal["not_started", "idle", "busy", "dead"]
"""``not_started``: no kernel (never started, or shut down); ``idle``: alive, nothing running;
``busy``: an execution holds the kernel; ``dead``: the kernel process ended unexpectedly (the
next execution starts a new one)."""


@dataclass(frozen=True, slots=True)
class DisplayUpdate:
    """A new MIME bundle for one output of an earlier cell (``update_display_data``).

    Apply it with ``outputs[output_index]["data"] = data`` and ``["metadata"] = metadata``;
    the output keeps its ``output_type`` (and ``execution_count``).

    Attributes:
        cell_key: the key (cell name) the earlier execution was given.
        output_index: index of the output in that cell's outputs.
        data: the new MIME bundle ``{mime: value}``.
        metadata: the new output metadata.
    """

    cell_key: str
    output_index: int
    data: dict[str, Any]
    metadata: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ExecutionResult:
    """What one :meth:`NotebookKernel.execute` returns.

    Attributes:
        status: see :data:`ExecutionStatus`.
        outputs: the cell's nbformat v4 outputs, in order.
        execution_count: the kernel's execution counter for this run, ``None`` when the kernel
            gave none (it died first).
        epoch: the kernel epoch the code ran on.
        kernel_restarted: ``True`` when a new kernel had to be started for this execution
            because the previous one had died (every cell is stale: new epoch).
        duration_s: wall time from sending the request to the end, in seconds.
        ename: exception class name when ``status == "error"``.
        evalue: exception message when ``status == "error"``.
        display_updates: new bundles for outputs of earlier cells (see :class:`DisplayUpdate`),
            one per (cell key, output index), latest content.
        interrupted_by: why the execution was ``interrupted`` (else ``None``).
        kernel_killed: the kernel did not go idle after being interrupted (a ``timeout``, or
            an ``interrupted`` run that would not stop) and was killed: its variables are gone
            and the next execution starts a new kernel (new epoch: every cell is stale).
        interrupt_requested_by: for ``interrupted``, who asked for the stop when another
            process did (``j-cli pid 123``, from the registry), else ``None``.
        interrupt_requested_command: that process's command line (``j-cli kernel interrupt
            nb.ipynb``) when recorded, else ``None``.
        replaced_epoch: with ``kernel_restarted``, the epoch of the kernel that had died
            (when known): its variables are lost.
        replacement_kept: with ``kernel_restarted``, the new kernel outlives the command
            (the one it replaced was kept, or the command keeps what it starts).
        kernel_state: the kernel's state as it said last (its iopub ``status``) when the
            execution ended: ``idle`` once the code finished, ``busy`` when it already ran
            someone else's request; ``None`` when the kernel is gone or said nothing.
    """

    status: ExecutionStatus
    outputs: list[Output]
    execution_count: int | None
    epoch: str
    kernel_restarted: bool
    duration_s: float
    ename: str | None = None
    evalue: str | None = None
    display_updates: list[DisplayUpdate] = field(default_factory=list)
    interrupted_by: InterruptReason | None = None
    kernel_killed: bool = False
    interrupt_requested_by: str | None = None
    interrupt_requested_command: str | None = None
    replaced_epoch: str | None = None
    replacement_kept: bool = False
    kernel_state: Literal["idle", "busy"] | None = None


@dataclass(frozen=True, slots=True)
class KernelOrigin:
    """Where a started kernel comes from, as its backend reports it.

    Attributes:
        attached: ``True`` when the kernel was already running before this backend joined it
            and its history is unknown to us (a Jupyter Server session a person has open):
            every cell counts as stale until it runs on this kernel, and restarting it needs
            an explicit ``force`` (``KERNEL_SHARED``). A kernel another process of ours
            started and recorded (with its epoch and execution log) is not ``attached``.
        started_by: who started the kernel, as far as known (e.g. ``"jupyter-mcp pid 4242"``,
            ``"JupyterLab session 1f0e..."``); ``None`` when we started it in this process.
        kernel_id: the kernel's id where the transport has one (a Jupyter Server's kernel id).
        server_url: the Jupyter Server's base URL for a server kernel; ``None`` when local.
        epoch: the kernel's epoch when the backend joins a kernel whose epoch was recorded by
            the process that started it (so both judge freshness alike); ``None``: the
            :class:`~jupyter_jcli.kernels.NotebookKernel` mints a new epoch at start.
    """

    attached: bool = False
    started_by: str | None = None
    kernel_id: str | None = None
    server_url: str | None = None
    epoch: str | None = None


LOCAL_ORIGIN = KernelOrigin()
"""The origin of a kernel this process started on this machine."""


@dataclass(frozen=True, slots=True)
class KernelInfo:
    """The state of one notebook's kernel.

    Attributes:
        notebook_path: the resolved notebook path the kernel belongs to.
        state: see :data:`KernelState`.
        epoch: the live kernel's epoch, ``None`` unless ``state`` is ``idle`` or ``busy``.
        kernelspec_name: the kernelspec the kernel runs (or will start with).
        pid: the kernel process id for a local kernel that is alive, else ``None``.
        cwd: the kernel's working directory (the notebook's folder).
        running_cell: the cell key of the execution that holds the kernel, when busy.
        origin: where the running kernel comes from (:class:`KernelOrigin`; the local
            default when not started).
    """

    notebook_path: Path
    state: KernelState
    epoch: str | None
    kernelspec_name: str
    pid: int | None
    cwd: Path
    running_cell: str | None = None
    origin: KernelOrigin = field(default_factory=KernelOrigin)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (paths as strings)."""
        return {
            "notebook_path": str(self.notebook_path),
            "state": self.state,
            "epoch": self.epoch,
            "kernelspec_name": self.kernelspec_name,
            "pid": self.pid,
            "cwd": str(self.cwd),
            "running_cell": self.running_cell,
            "attached": self.origin.attached,
            "started_by": self.origin.started_by,
            "kernel_id": self.origin.kernel_id,
            "server_url": self.origin.server_url,
        }
