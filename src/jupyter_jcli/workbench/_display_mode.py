"""How IPython displays the code's top-level expressions, for one execution only.

IPython decides which top-level statements of a cell display their value from its
``InteractiveShell.ast_node_interactivity`` setting (``last_expr`` by default; ``all``,
``last_expr_or_assign``, ``last``, ``none``; IPython's docs, "ast_node_interactivity"). jupyter-jcli
0.9.7's ``exec --display-mode`` sets it before the code and puts it back after; so do we,
leaving no trace:

- right before the code (:meth:`~jupyter_jcli.kernels.NotebookKernel.execute`'s ``prepare``,
  under the same hold), one ``user_expressions`` entry of a silent request (no execution
  count, no history, nothing in the user's namespace) saves the current setting, sets the
  mode, and registers a one-shot ``post_run_cell`` callback that puts the setting back and
  unregisters itself. The kernel fires ``post_run_cell`` right after the code (ipykernel does
  so in a ``finally``, an error or an interrupt included), so the setting is restored in the
  kernel even if this process is killed meanwhile;
- after the code, one more silent expression runs that callback if it is still registered
  (the code never ran: the request was refused or the kernel was stopped) and answers the
  setting now in force.

A kernel without IPython (no ``get_ipython``) is refused (``USAGE_ERROR``) before the code
runs.
"""

from __future__ import annotations

from contextlib import suppress
from functools import partial
from typing import TYPE_CHECKING, Literal, get_args

from jupyter_jcli.errors import ErrorCode, JcliError, UsageError

if TYPE_CHECKING:
    from jupyter_jcli.kernels import ExecutionResult, NotebookKernel

__all__ = ["DISPLAY_MODES", "DisplayMode", "check_display_mode", "execute_with_display_mode"]

DisplayMode = Literal["last_expr", "all", "last_expr_or_assign", "last", "none"]
"""IPython's ``ast_node_interactivity`` values (the reference's ``--display-mode`` choices)."""
DISPLAY_MODES: tuple[str, ...] = get_args(DisplayMode)
"""Every display mode, IPython's default first."""
_SETUP_TIMEOUT = 30.0
"""Seconds the silent setup or cleanup may take in the kernel."""
_CALLBACK = "_jcli_restore_display_mode"

_SETUP = r"""
def _setup(shell, mode, callback_name):
    events = shell.events
    for func in list(events.callbacks["post_run_cell"]):
        if getattr(func, "__name__", "") == callback_name:
            func()
    previous = shell.ast_node_interactivity
    def restore(result=None):
        shell.ast_node_interactivity = previous
        try:
            events.unregister("post_run_cell", restore)
        except ValueError:
            pass
    restore.__name__ = callback_name
    shell.ast_node_interactivity = mode
    events.register("post_run_cell", restore)
    return previous
result = _setup(SHELL, MODE, CALLBACK)
"""

_CLEANUP = r"""
def _cleanup(shell, callback_name):
    for func in list(shell.events.callbacks["post_run_cell"]):
        if getattr(func, "__name__", "") == callback_name:
            func()
    return shell.ast_node_interactivity
result = _cleanup(SHELL, CALLBACK)
"""


def check_display_mode(mode: object) -> DisplayMode | None:
    """``mode`` when it is one of :data:`DISPLAY_MODES` (None: the kernel's own setting).

    Raises:
        UsageError: ``USAGE_ERROR`` for any other value (details ``display_mode``,
            ``choices``).
    """
    if mode is None:
        return None
    if not isinstance(mode, str) or mode not in DISPLAY_MODES:
        raise UsageError(
            f"Unknown display mode {mode!r}; choose one of {', '.join(DISPLAY_MODES)}.",
            {"display_mode": str(mode), "choices": list(DISPLAY_MODES)},
        )
    return mode  # type: ignore[return-value]


def _expression(probe: str, **names: str) -> str:
    """The user expression running ``probe`` in a namespace of its own holding ``names``
    and ``SHELL`` (the user's ``get_ipython()``)."""
    namespace = "".join(f", {key!r}: {value!r}" for key, value in names.items())
    scope = f"{{'SHELL': get_ipython(){namespace}}}"
    return f"(lambda _d: (exec({probe!r}, _d), _d['result'])[1])({scope})"


async def _evaluate(kernel: NotebookKernel, probe: str, doing: str, **names: str) -> str:
    """Evaluate one probe silently; its ``text/plain`` answer.

    Raises:
        UsageError: ``USAGE_ERROR`` when the kernel has no IPython shell (``NameError`` on
            ``get_ipython``).
        JcliError: ``INTERNAL_ERROR`` when the probe fails otherwise or the kernel died.
    """
    result = await kernel.evaluate(
        "", user_expressions={"display_mode": _expression(probe, **names)}, timeout=_SETUP_TIMEOUT
    )
    value = result.expressions.get("display_mode")
    if result.status == "ok" and value is not None and value.status == "ok":
        return value.text
    ename = value.ename if value is not None else result.ename
    evalue = value.evalue if value is not None else result.evalue
    if ename == "NameError" and "get_ipython" in (evalue or ""):
        raise UsageError(
            "--display-mode needs an IPython kernel (ipykernel): this kernel has no get_ipython().",
            {"notebook_path": str(kernel.notebook_path)},
        )
    raise JcliError(
        ErrorCode.INTERNAL_ERROR,
        f"{doing} failed ({result.status})",
        {"ename": ename, "evalue": evalue, "notebook_path": str(kernel.notebook_path)},
    )


async def _set_up(kernel: NotebookKernel, mode: DisplayMode) -> None:
    await _evaluate(
        kernel, _SETUP, f"setting the display mode {mode!r}", MODE=mode, CALLBACK=_CALLBACK
    )


async def _clean_up(kernel: NotebookKernel) -> str:
    """Put the setting back if the one-shot callback is still registered; the setting now
    in force (``text/plain``, e.g. ``'last_expr'``)."""
    return await _evaluate(kernel, _CLEANUP, "restoring the display mode", CALLBACK=_CALLBACK)


async def execute_with_display_mode(
    kernel: NotebookKernel, code: str, *, timeout: float | None, mode: DisplayMode | None
) -> ExecutionResult:
    """Run ``code`` on ``kernel`` (not a cell) with IPython's ``ast_node_interactivity`` set
    to ``mode`` for this execution only (see the module docstring); ``mode`` None runs it
    as the kernel is set.

    Raises:
        UsageError: ``USAGE_ERROR`` for a kernel without IPython.
        JcliError: ``INTERNAL_ERROR`` when the setup or cleanup probe fails; the codes of
            :meth:`~jupyter_jcli.kernels.NotebookKernel.execute`.
    """
    if mode is None:
        return await kernel.execute(code, cell_key=None, timeout=timeout)
    async with kernel.hold():
        try:
            result = await kernel.execute(
                code, cell_key=None, timeout=timeout, prepare=partial(_set_up, kernel, mode)
            )
        except BaseException:
            with suppress(JcliError):
                if await kernel.is_alive():
                    await _clean_up(kernel)
            raise
        if await kernel.is_alive():
            await _clean_up(kernel)
        return result
