"""``execute_code`` on a notebook's live kernel without an event loop: the ``j-cli exec``
lane, for a fresh process whose start-up is most of its cost.

:func:`execute_code_live` answers exactly what :func:`~jupyter_jcli.workbench._inline.execute_code`
answers on a notebook whose live registered kernel it joins (the same
:class:`~jupyter_jcli.workbench.CodeOutcome`, built by the same functions: the notebook
loaded as there, the code run through :func:`~jupyter_jcli.kernels._blocking.run_on_live`,
its effect recorded in the registry's run log while the kernel is held, its outputs answered
inline or saved). It returns ``None``, having run and changed nothing, when the notebook has
no live kernel to join: the caller then takes the full path, which starts or replaces one.
"""

from __future__ import annotations

import os
from pathlib import Path

from jupyter_jcli.kernels._blocking import run_on_live
from jupyter_jcli.kernels._config import execute_timeout, kernelspec_name_from_metadata
from jupyter_jcli.kernels._registry import KernelRegistry, process_name
from jupyter_jcli.kernels._types import ExecutionResult, KernelInfo
from jupyter_jcli.notebook._warm import DocumentCache, active_cache, warm
from jupyter_jcli.workbench._inline import (
    CodeOutcome,
    code_origin,
    code_outcome,
    with_kernel_notes,
)
from jupyter_jcli.workbench._inline_state import InlineEffect, record_inline_run
from jupyter_jcli.workbench._load import load
from jupyter_jcli.workbench._shared_log import SharedRunLog

__all__ = ["execute_code_live"]

_SEQ = 1
"""The run's place in this process's copy of the log (the registry assigns the shared one)."""


def execute_code_live(
    path: str | os.PathLike[str], code: str, *, timeout: float | None = None
) -> CodeOutcome | None:
    """Run ``code`` on the live kernel of the notebook at ``path`` (``.ipynb`` or paired
    ``.py``), as ``execute_code(path, code, timeout=timeout)`` on a shared workbench would.

    Returns:
        The outcome, or ``None`` when the notebook has no live kernel to join (module
        docstring).

    Raises:
        UsageError: ``USAGE_ERROR`` (bad timeout).
        NotebookError: the read codes of ``Document.load``.
        KernelError: ``KERNEL_BUSY``.
    """
    execute_timeout(timeout)
    here = Path(os.path.realpath(os.getcwd()))
    documents = active_cache()  # the warm exec server's, when it runs this exec
    with warm(DocumentCache() if documents is None else documents):
        loaded = load(path)
        document = loaded.document
        notebook_path = document.notebook_path.resolve()
        registry = KernelRegistry()
        log = SharedRunLog(registry, notebook_path)

        def record(result: ExecutionResult, info: KernelInfo) -> InlineEffect:
            current = load(document.path)  # as the file is now (unchanged: not parsed again)
            return record_inline_run(
                current, log, _SEQ, code, result=result, info=info, who=process_name()
            )

        ran = run_on_live(
            registry,
            notebook_path,
            code,
            timeout=timeout,
            kernelspec_name=kernelspec_name_from_metadata(document.metadata),
            after=record,
        )
    if ran is None:
        return None
    result, info, effect = ran
    origin = code_origin("exec", code, cwd=here, notebook_path=document.notebook_path)
    outcome = code_outcome(
        "exec",
        result,
        info,
        cwd=here,
        path=document.path,
        notebook_path=document.notebook_path,
        origin=origin,
    )
    return with_kernel_notes(outcome, effect)
