"""``j-cli exec [NB] --code ...``: run code on a notebook's kernel, or on a scratch kernel.

The notebook is never written. Short text results come back inline; anything rich or long is
saved under ``./.j-cli/outputs/<run-id>/`` and the answer names its manifest (read it with
``j-cli output show``). ``-j`` prints the :class:`~jupyter_jcli.workbench.CodeOutcome`
document. Exit status: 0 when the code ran to the end, 130 when an interrupt stopped it (Ctrl-C
on this command, which interrupts the kernel and answers what the code printed, or
``j-cli kernel interrupt`` from another command; as for ``j-cli run``), 1 when it raised,
timed out or the kernel died, or
when its outputs had to be saved and could not be (``save_error``, e.g.
``RUN_FOLDER_UNSAFE``); errors of the command itself as everywhere in ``j-cli``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING

import click

from jupyter_jcli.cli._emit import echo, emit_json, json_mode
from jupyter_jcli.cli._params import FILE_PATH, single, text_or_file
from jupyter_jcli.cli._server_options import current_server, store_options
from jupyter_jcli.errors import KernelError

if TYPE_CHECKING:
    from jupyter_jcli.kernels import ExecutionResult, ServerConfig
    from jupyter_jcli.workbench import CodeOutcome, ExecutedCell

__all__ = ["answer", "code_lines", "exec_command", "exit_status", "kernelspec_hints", "run_code"]

_KERNEL_HINT = "pass --kernel NAME (one of details.installed) to start another kernelspec"
_NAMED_HINT = "give --kernel one of details.installed"
_MISMATCH_HINT = (
    "switch with `j-cli kernel restart NB --kernel NAME` (the variables are lost), or leave "
    "out --kernel to use the live kernel"
)
_EXIT_FAILED = 1
_EXIT_INTERRUPTED = 130


@click.command("exec")
@store_options
@click.argument("notebook", metavar="[NB]", required=False, type=FILE_PATH)
@single("--code", allow_empty=True, metavar="TEXT", help="The code to run.")
@single(
    "--code-file",
    "code_file",
    metavar="FILE",
    help="Run the code in FILE ('-' reads it from stdin).",
)
@click.option(
    "--timeout",
    type=float,
    metavar="S",
    help="Seconds the code may run (default: $JUPYTER_JCLI_EXECUTE_TIMEOUT or 600).",
)
@single(
    "--kernel",
    "kernel_name",
    metavar="NAME",
    help="The kernelspec to start (default: the notebook's, or python3 without NB).",
)
@click.option(
    "--display-mode",
    "display_mode",
    type=click.Choice(["last_expr", "all", "last_expr_or_assign", "last", "none"]),
    help="Which top-level expressions display their value, for this run only (IPython's "
    "ast_node_interactivity; default: the kernel's, last_expr): all, last_expr_or_assign "
    "(also a last assignment's value), last, none.",
)
def exec_command(
    notebook: str | None,
    *,
    code: str | None,
    code_file: str | None,
    timeout: float | None,
    kernel_name: str | None,
    display_mode: str | None,
) -> int:
    """Run code on NB's kernel without touching NB, or without NB on a fresh kernel here.

    Short text-only results are printed; rich output (images, HTML, Markdown, JSON) and
    more than 4,000 characters are saved under ./.j-cli/outputs/RUN-ID/ (read them with
    `j-cli output show MANIFEST`), with a bounded summary. Exit 1 when the code raises or its
    outputs cannot be saved. NB's live kernel (`j-cli kernel start`, jupyter-mcp's) is used
    when there is one, so the code sees the notebook's variables; with --server-url the
    kernel is that Jupyter Server's (the notebook's session joined when it has one).
    """
    usage = "Give exactly one of --code TEXT or --code-file FILE ('-': stdin)."
    source = text_or_file(code, code_file, usage, required=True)
    assert source is not None
    return answer(
        run_code(
            notebook,
            source,
            timeout=timeout,
            kernel_name=kernel_name,
            display_mode=display_mode,
            server=current_server(),
        )
    )


def answer(outcome: CodeOutcome) -> int:
    """Print the outcome (its document with ``-j``, else :func:`code_lines`) and return the
    exit status (:func:`exit_status`)."""
    if json_mode():
        emit_json(outcome.to_dict())
    else:
        for line in code_lines(outcome):
            echo(line)
    return exit_status(outcome)


def exit_status(outcome: CodeOutcome) -> int:
    """The exit status of an exec: 0 when the code ran to the end and its outputs are where
    the answer says; 130 when an interrupt stopped it (from another command:
    ``j-cli kernel interrupt``), as for ``j-cli run``; else 1."""
    if outcome.ok and outcome.save_error is None:
        return 0
    return _EXIT_INTERRUPTED if outcome.result.status == "interrupted" else _EXIT_FAILED


def run_code(
    notebook: str | None,
    code: str,
    *,
    timeout: float | None,
    kernel_name: str | None,
    display_mode: str | None = None,
    script_path: str | None = None,
    server: ServerConfig | None = None,
) -> CodeOutcome:
    """Run ``code`` through :meth:`Workbench.execute_code`: on the notebook's kernel found
    through :func:`~jupyter_jcli.workbench.shared_workbench` (the live kernel when one runs,
    else one started for the command), or without a notebook on a scratch kernel of a
    workbench of its own; on ``server``'s kernels when given. Ctrl-C (SIGINT) interrupts the
    kernel, as for ``j-cli run``: the code ends ``interrupted`` with what it printed, answered
    as any outcome (exit 130); a second Ctrl-C cancels the command."""
    import anyio

    from jupyter_jcli.cli._run_live import interrupt_on_sigint
    from jupyter_jcli.workbench import Workbench, shared_workbench

    async def go() -> CodeOutcome:
        from pathlib import Path

        bench = Workbench(server=server) if notebook is None else shared_workbench(server=server)
        async with bench as workbench, interrupt_on_sigint(workbench.pool):
            return await workbench.execute_code(
                notebook,
                code,
                timeout=timeout,
                kernel_name=kernel_name,
                display_mode=display_mode,
                operation="exec" if script_path is None else "run_script",
                script_path=None if script_path is None else Path(script_path).resolve(),
            )

    with kernelspec_hints():
        return anyio.run(partial(go))


@contextmanager
def kernelspec_hints(*, restart_switches: bool = True) -> Iterator[None]:
    """Re-raise a :class:`KernelError` of the block with the command line's way of choosing a
    kernelspec (``--kernel``) added to a ``KERNELSPEC_NOT_FOUND`` or, when a restart can
    switch kernelspecs (local kernels), a ``KERNELSPEC_MISMATCH`` (``details.hint``)."""
    from jupyter_jcli.workbench import kernelspec_hint

    try:
        yield
    except KernelError as err:
        mismatch = _MISMATCH_HINT if restart_switches else None
        hinted = kernelspec_hint(err, _KERNEL_HINT, mismatch, named=_NAMED_HINT)
        if hinted is err:
            raise
        raise hinted from err


def _kernel_kept(outcome: CodeOutcome) -> bool:
    """Whether the kernel that ran the code still runs now that the command let it go: a
    scratch kernel never does; a notebook's local kernel when the registry still has its
    epoch (kept, or someone else's); a server's kernel does (the server keeps it)."""
    if outcome.notebook_path is None:
        return False
    if outcome.kernel.origin.server_url is not None:
        return True
    from jupyter_jcli.kernels import KernelRegistry

    entry = KernelRegistry().live(outcome.notebook_path)
    return entry is not None and entry.epoch == outcome.kernel.epoch


def stop_words(stopped: ExecutionResult | ExecutedCell) -> str:
    """What stopped a cell or code: ``interrupted by a kernel restart``, ``interrupted by
    j-cli pid 12 (j-cli kernel interrupt nb.ipynb)`` (:func:`jupyter_jcli.kernels.stop_words`)."""
    from jupyter_jcli.kernels import stop_words as words

    by, command = stopped.interrupt_requested_by, stopped.interrupt_requested_command
    return words(stopped.interrupted_by or "kernel_interrupted", by, command)


def code_lines(outcome: CodeOutcome) -> list[str]:
    """The run for a person: a status line, the condensed outputs, where the rest is."""
    result = outcome.result
    count = f"[{result.execution_count}]" if result.execution_count is not None else "[ ]"
    path = outcome.notebook_path
    where = f"the kernel of {path}" if path is not None else "a scratch kernel"
    status = stop_words(result) if result.interrupted_by is not None else result.status
    head = f"{count} {status} on {where} in {result.duration_s:.2f}s"
    if result.ename:
        first = next(iter((result.evalue or "").splitlines()), "")
        head += f"  {result.ename}" + (f": {first[:120]}" if first else "")
    lines = [head]
    if result.interrupted_by == "kernel_interrupted" and not result.kernel_killed:
        if _kernel_kept(outcome):
            lines.append("its outputs so far follow; the kernel keeps its variables")
        else:
            lines.append(
                "its outputs so far follow; the kernel started for this command has stopped: "
                "its variables are gone"
            )
    if outcome.summary is not None and outcome.summary.text:
        lines.extend(outcome.summary.text.splitlines())
    if outcome.notice is not None:
        lines.append(outcome.notice)
    if outcome.effect is not None and outcome.effect.stale:
        from jupyter_jcli.cli._document_render import cell_names

        notebook = None if outcome.notebook_path is None else str(outcome.notebook_path)
        stale = cell_names(outcome.effect.stale, notebook)
        lines.append(f"made stale: {stale} ({outcome.effect.cause})")
    if outcome.saved is not None:
        lines.extend(
            f"output {entry['output_index']} {entry['mime_type']} saved as {entry['path']}"
            for entry in outcome.saved.files
        )
    return lines
