"""Building the result of a silent evaluation from its reply and outputs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jupyter_jcli.kernels._run import RunOutcome
from jupyter_jcli.kernels._types import EvaluationResult, ExpressionValue, Output

__all__ = ["evaluation_result", "str_or_none"]


def evaluation_result(outcome: RunOutcome, outputs: list[Output], epoch: str) -> EvaluationResult:
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


def str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


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
