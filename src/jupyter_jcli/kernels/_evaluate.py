"""Building the result of an execution from its reply and outputs (a silent evaluation's:
:mod:`jupyter_jcli.kernels._evaluation`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jupyter_jcli.kernels._run import RunOutcome
from jupyter_jcli.kernels._types import ExecutionResult

if TYPE_CHECKING:
    from jupyter_jcli.kernels._translate import OutputCollector

__all__ = ["execution_result", "str_or_none"]


def execution_result(
    outcome: RunOutcome,
    collector: OutputCollector,
    epoch: str,
    *,
    restarted: bool,
    killed: bool,
    replaced_epoch: str | None,
) -> ExecutionResult:
    """The :class:`ExecutionResult` of one request on the kernel of ``epoch``: its outputs
    and count from ``collector`` (the reply's count first), the error's name and value for an
    ``error`` or ``interrupted`` run; ``restarted`` when the run started a kernel replacing
    one that died (``replaced_epoch``), ``killed`` when the kernel had to be killed after it."""
    reply = outcome.reply
    count = reply.get("execution_count")
    named = outcome.status in ("error", "interrupted")
    return ExecutionResult(
        status=outcome.status,
        outputs=collector.outputs,
        execution_count=count if isinstance(count, int) else collector.execution_count,
        epoch=epoch,
        kernel_restarted=restarted,
        duration_s=outcome.duration_s,
        ename=str_or_none(reply.get("ename")) if named else None,
        evalue=str_or_none(reply.get("evalue")) if named else None,
        display_updates=collector.display_updates,
        interrupted_by=outcome.interrupted_by,
        kernel_killed=killed,
        interrupt_requested_by=outcome.interrupt_requested_by,
        interrupt_requested_command=outcome.interrupt_requested_command,
        replaced_epoch=replaced_epoch if restarted else None,
        kernel_state=outcome.kernel_state,
    )


def str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)
