"""The results of a request, built from its reply and outputs: an execution's
(:class:`~jupyter_jcli.kernels.ExecutionResult`) and a silent evaluation's, for inspection
(:meth:`~jupyter_jcli.kernels.NotebookKernel.evaluate`, whose types are here)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from jupyter_jcli.kernels._request import RequestOutcome
from jupyter_jcli.kernels._types import ExecutionResult, ExecutionStatus, Output

if TYPE_CHECKING:
    from jupyter_jcli.kernels._translate import OutputCollector

__all__ = ["EvaluationResult", "ExpressionValue", "evaluation_result", "execution_result"]


@dataclass(frozen=True, slots=True)
class ExpressionValue:
    """One user expression evaluated by :meth:`NotebookKernel.evaluate`.

    Attributes:
        status: ``"ok"`` or ``"error"``.
        text: the ``text/plain`` representation (``""`` when the kernel gave none).
        data: the full MIME bundle the kernel returned.
        ename: exception class name when the expression raised.
        evalue: exception message when the expression raised.
    """

    status: Literal["ok", "error"]
    text: str
    data: dict[str, Any]
    ename: str | None = None
    evalue: str | None = None


@dataclass(frozen=True, slots=True)
class EvaluationResult:
    """What one silent :meth:`NotebookKernel.evaluate` returns.

    Attributes:
        status: see :data:`ExecutionStatus`.
        stdout: everything printed to stdout.
        stderr: everything printed to stderr.
        result_text: ``text/plain`` of any ``execute_result`` (kernels rarely send one for
            silent code), else ``""``.
        expressions: the user expressions by name.
        outputs: every output the code produced (display data included).
        epoch: the kernel epoch it ran on.
        duration_s: wall time, seconds.
        ename: exception class name when ``status == "error"``.
        evalue: exception message when ``status == "error"``.
    """

    status: ExecutionStatus
    stdout: str
    stderr: str
    result_text: str
    expressions: dict[str, ExpressionValue]
    outputs: list[Output]
    epoch: str
    duration_s: float
    ename: str | None = None
    evalue: str | None = None


def execution_result(
    outcome: RequestOutcome,
    collector: OutputCollector,
    epoch: str,
    *,
    restarted: bool,
    killed: bool,
    replaced_epoch: str | None,
    kept: bool = False,
) -> ExecutionResult:
    """The :class:`ExecutionResult` of one request on the kernel of ``epoch``: its outputs
    and count from ``collector`` (the reply's count first), the error's name and value for an
    ``error`` or ``interrupted`` run; ``restarted`` when the run started a kernel replacing
    one that died (``replaced_epoch``; ``kept``: the new kernel outlives the command), ``killed``
    when the kernel had to be killed after it."""
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
        replacement_kept=restarted and kept,
        kernel_state=outcome.kernel_state,
    )


def evaluation_result(
    outcome: RequestOutcome, outputs: list[Output], epoch: str
) -> EvaluationResult:
    """The :class:`EvaluationResult` of one silent request (text of streams, results and
    ``user_expressions`` as the ``execute_reply`` returned them)."""
    reply = outcome.reply
    error = outcome.status == "error"
    return EvaluationResult(
        status=outcome.status,
        stdout=_stream_text(outputs, "stdout"),
        stderr=_stream_text(outputs, "stderr"),
        result_text="".join(
            _plain(o.get("data")) for o in outputs if o["output_type"] == "execute_result"
        ),
        expressions=_expressions(reply.get("user_expressions")),
        outputs=outputs,
        epoch=epoch,
        duration_s=outcome.duration_s,
        ename=str_or_none(reply.get("ename")) if error else None,
        evalue=str_or_none(reply.get("evalue")) if error else None,
    )


def _plain(data: Any) -> str:
    if isinstance(data, Mapping):
        text = data.get("text/plain", "")
        return "".join(text) if isinstance(text, list) else str(text)
    return ""


def _stream_text(outputs: list[dict[str, Any]], name: str) -> str:
    return "".join(
        str(o.get("text", ""))
        for o in outputs
        if o["output_type"] == "stream" and o["name"] == name
    )


def _expressions(raw: Any) -> dict[str, ExpressionValue]:
    if not isinstance(raw, Mapping):
        return {}
    values: dict[str, ExpressionValue] = {}
    for name, raw_item in raw.items():
        item: Mapping[str, Any] = raw_item if isinstance(raw_item, Mapping) else {}
        data = item.get("data")
        bundle = dict(data) if isinstance(data, Mapping) else {}
        if item.get("status") == "ok":
            values[str(name)] = ExpressionValue("ok", _plain(bundle), bundle)
        else:
            values[str(name)] = ExpressionValue(
                "error",
                "",
                bundle,
                ename=str_or_none(item.get("ename")),
                evalue=str_or_none(item.get("evalue")),
            )
    return values


def str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)
