"""What inline code run on a notebook's kernel did to its cells: the execution log's record of it.

``execute_code`` on a notebook (``j-cli exec NB --code``) runs code on the kernel its cells
ran on. :func:`record_inline_change` analyses the code (``analysis.code_writes``: the names it
defines, rebinds, mutates or deletes, against the notebook's graph; any name for code the
analyzer cannot see through or a kernel that is not Python) and records it in the
notebook's execution log (``ExecutionLog.record_change``: the registry's for a shared kernel, so
``jupyter-mcp`` and every other ``j-cli`` see it), while the caller still holds the kernel,
so no cell run by someone else falls between the code and its record. From then on the cells
whose state it overwrote read ``stale`` with its cause (``_execution_log.stale_causes``) until
they run again. Code that only reads records nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyter_jcli._json import json_fields
from jupyter_jcli.analysis import CodeWrites, code_writes, overwritten_cells
from jupyter_jcli.kernels import ExecutionResult, KernelInfo
from jupyter_jcli.workbench._execution_log import ExecutionLog, statuses
from jupyter_jcli.workbench._load import Loaded

__all__ = ["InlineEffect", "kernel_language", "record_inline_change"]

_OPAQUE = {
    "language": "not Python",
    "syntax_error": "does not parse",
    "too_large": "too large to analyse",
    "opaque_magic": "a cell magic",
    "magic": "a magic",
    "wildcard": "exec, eval, globals() or a star import",
}
_MAX_NAMED = 8
_FIRST_LINE = 60


@dataclass(frozen=True)
class InlineEffect:
    """What inline code did to the notebook's cells, as recorded.

    Attributes:
        names: the names it may have written (sorted), ``None`` for any name.
        opaque: why it could not be analysed (``CodeWrites.opaque``), else ``None``.
        stale: the cells it made stale (they ran on the kernel before it), document order.
        cause: the cause those cells show (``stale_cause``), ``None`` when nothing was
            recorded (it wrote nothing).
    """

    names: tuple[str, ...] | None
    opaque: str | None
    stale: tuple[str, ...]
    cause: str | None

    def to_dict(self) -> dict[str, Any]:
        """``{"names", "opaque", "stale", "cause"}``."""
        return json_fields(self)


def kernel_language(metadata: Mapping[str, Any], kernelspec_name: str) -> str | None:
    """The language of the kernel ``kernelspec_name`` runs for a notebook with ``metadata``:
    the notebook's ``language_info.name`` / ``kernelspec.language`` when that kernelspec is
    the notebook's own, ``python`` for a kernelspec named ``python…``, else ``None``."""
    spec = metadata.get("kernelspec")
    if isinstance(spec, dict) and spec.get("name") == kernelspec_name:
        info = metadata.get("language_info")
        for value in (info.get("name") if isinstance(info, dict) else None, spec.get("language")):
            if isinstance(value, str) and value.strip():
                return value
    if kernelspec_name.lower().startswith("python"):
        return "python"
    return None


def _cause(code: str, writes: CodeWrites, who: str, *, ended: bool) -> str:
    """The ``stale_cause`` of cells inline ``code`` overwrote; ``ended``: it ran to its end
    (else it stopped on an error or an interrupt, perhaps before it wrote them)."""
    first = next((line.strip() for line in code.splitlines() if line.strip()), "")
    if len(first) > _FIRST_LINE:
        first = first[: _FIRST_LINE - 1] + "…"
    lead = f"exec by {who} ({first!r})"
    if writes.names is None:
        why = _OPAQUE.get(writes.opaque or "", "not analysable")
        return f"{lead} may have written any name ({why})"
    shown = ", ".join(writes.names[:_MAX_NAMED])
    more = len(writes.names) - _MAX_NAMED
    verb = "wrote" if ended else "may have written"
    return f"{lead} {verb} {shown}{f' and {more} more' if more > 0 else ''}"


def record_inline_change(
    loaded: Loaded,
    log: ExecutionLog,
    seq: int,
    code: str,
    *,
    result: ExecutionResult,
    info: KernelInfo,
    who: str,
) -> InlineEffect:
    """Record ``code``'s run (``result``, on the kernel now ``info``) in the notebook's run
    log when it may have written a name (module docstring); ``seq`` orders it in a log of
    this process (a shared log takes the registry's).

    Returns:
        The :class:`InlineEffect` (``stale``: the cells that ran before it and read
        ``stale`` now because of it).
    """
    language = kernel_language(loaded.document.metadata, info.kernelspec_name)
    writes = code_writes(code, loaded.graph, language=language)
    if writes.names == ():
        return InlineEffect((), None, (), None)
    cause = _cause(code, writes, who, ended=result.status == "ok")
    log.record_change(result.epoch, seq, writes.names, cause)
    # the cells it made stale are those the statuses now call ``stale`` (one source of
    # truth with the overview): a cell whose last run failed stays ``error``, not made stale
    now = statuses(loaded, log, result.epoch)
    overwritten = overwritten_cells(loaded.graph, writes.names)
    stale = tuple(key for key in overwritten if now.get(key) == "stale")
    return InlineEffect(writes.names, writes.opaque, stale, cause)
