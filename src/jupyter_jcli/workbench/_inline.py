"""Running code that is not a notebook cell: inline code and plain scripts.

``j-cli exec NB --code ...`` runs code on the notebook's kernel without touching the
notebook; ``j-cli exec --code ...`` and ``j-cli run plain.py`` run on a scratch kernel started
in the command's working directory. Their outputs have no notebook to live in: short text is
answered inline, anything else is saved as a saved run (:mod:`jupyter_jcli.runs`) and the
result names the manifest and carries a bounded summary. Every saved run is followed by a
retention pass (never failing the run: its error is reported in ``retention``).
"""

from __future__ import annotations

import hashlib
import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from jupyter_jcli.errors import ErrorCode, JcliError, KernelError, UsageError, ok_document
from jupyter_jcli.kernels import (
    DEFAULT_KERNELSPEC,
    ExecutionResult,
    KernelInfo,
    Output,
    execute_timeout,
    process_name,
)
from jupyter_jcli.runs import INLINE_TEXT_LIMIT, stays_inline
from jupyter_jcli.workbench._display_mode import (
    DisplayMode,
    check_display_mode,
    execute_with_display_mode,
)
from jupyter_jcli.workbench._envelope import compact, condensed_dict
from jupyter_jcli.workbench._inline_state import InlineEffect, record_inline_change
from jupyter_jcli.workbench._stored import file_outputs

if TYPE_CHECKING:
    from jupyter_jcli.condense import CondensedOutputs
    from jupyter_jcli.kernels import NotebookKernel
    from jupyter_jcli.runs import SavedRun
    from jupyter_jcli.workbench._session import Workbench

__all__ = [
    "INLINE_SUMMARY_BUDGET",
    "SCRATCH_KEY",
    "SUMMARY_BUDGET",
    "SUMMARY_MAX_OUTPUTS",
    "CodeOutcome",
    "code_origin",
    "code_outcome",
    "condensed_summary",
    "execute_code",
    "run_code_on",
    "scratch_kernel_path",
    "scratch_spec",
]

SUMMARY_MAX_OUTPUTS = 20
"""The most outputs the summary of a saved run shows; the others are named in its notice."""
SUMMARY_BUDGET = 4_000
"""Characters (``summary.budget``) of condensed text shared by the outputs a saved run's
summary shows: a cut stream's head and tail lines are sized by it alone (no line cap), each
cut naming the ``j-cli output show`` read of what it left out."""
INLINE_SUMMARY_BUDGET = 2 * INLINE_TEXT_LIMIT
"""Characters (``summary.budget``) of condensed text an inline answer's summary may hold:
its outputs' text, at most :data:`~jupyter_jcli.runs.INLINE_TEXT_LIMIT` characters (what
decides inline or saved), and the header line of each output, so it is never cut."""
SCRATCH_KEY = ".j-cli-scratch"
"""The name under the working directory that keys a scratch kernel in the pool (no such file
is created: the kernel only runs in that folder)."""

CodeOperation = Literal["exec", "run_script", "execute_code"]
"""What ran the code: ``exec`` (``j-cli exec``), ``run_script`` (``j-cli run plain.py``),
``execute_code`` (the MCP tool: outputs condensed as ``execute_cells`` gives them, nothing
saved; see :func:`execute_code`'s ``condensed``)."""
NOT_KEPT = "not kept (scratch code: print less, or run it in a cell)"
"""What a cut of condensed scratch-code outputs says instead of a read hint: they are saved
nowhere, so nothing can read the rest."""


def scratch_kernel_path(cwd: Path) -> Path:
    """The pool key of the scratch kernel of ``cwd`` (it runs with ``cwd`` as its folder)."""
    return cwd / SCRATCH_KEY


@dataclass(frozen=True)
class CodeOutcome:
    """What ``Workbench.execute_code`` and ``Workbench.run_script`` return.

    Attributes:
        operation: ``"exec"`` (inline code) or ``"run_script"`` (a plain script).
        path: the notebook whose kernel ran the code, or the script; None for inline code on
            a scratch kernel.
        notebook_path: the notebook (``.ipynb``) whose kernel ran it; None on a scratch
            kernel.
        result: the kernel's result (status, execution count, outputs, error name/value).
        kernel: the kernel's state after the run.
        outputs: the outputs as stored (nbformat ``split_lines``).
        inline: the outputs are answered in full (short text); else they are saved.
        summary: the condensed outputs: all of them when inline, else the first
            :data:`SUMMARY_MAX_OUTPUTS` within :data:`SUMMARY_BUDGET` characters, each cut
            naming the ``j-cli output show`` command that reads the rest.
        saved: the saved run (manifest and raster files), when not inline.
        notice: for a saved run, what the summary leaves out and where it is.
        retention: the retention pass after saving (``deleted``, ``kept`` counts, or
            ``error``), None when nothing was saved.
        save_error: the error JSON when the outputs had to be saved but could not be
            (``RUN_FOLDER_UNSAFE``, ``FILE_WRITE_FAILED``...): the code ran, the summary is
            what is left; else None.
        effect: on a notebook's kernel, what the code did to the cells' kernel state (the
            names it may have written, the cells it made stale, the cause they show; see
            :mod:`jupyter_jcli.workbench._inline_state`); None on a scratch kernel.
        replaced_epoch: the epoch of the kernel that had died (killed from outside, between
            two commands or two calls) and that a new kernel replaced to run the code: its
            variables are lost and every cell is stale; else None.
    """

    operation: CodeOperation
    path: Path | None
    notebook_path: Path | None
    result: ExecutionResult
    kernel: KernelInfo
    outputs: list[Output]
    inline: bool
    summary: CondensedOutputs | None
    saved: SavedRun | None
    notice: str | None
    retention: dict[str, Any] | None
    save_error: dict[str, Any] | None = None
    effect: InlineEffect | None = None
    replaced_epoch: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the code ran to the end without raising."""
        return self.result.status == "ok"

    def to_dict(self) -> dict[str, Any]:
        """The JSON document: the run (status, execution count, error), its condensed
        outputs, and where the full outputs are (inline, or ``output_manifest``).

        Fields that carry nothing (``null``, ``false``, ``0``, empty) are left out
        (:func:`~jupyter_jcli.workbench._envelope.compact`), and so is what the document
        states already: the kernel's epoch (the run's ``epoch``), a scratch kernel's pool key
        (``kernel.notebook_path``: no notebook), the summary's per-part bookkeeping; inline,
        ``output_count`` (the ``outputs`` list) and, for streams only, the summary (its
        text is theirs)."""
        result = self.result
        kernel = self.kernel.to_dict()
        if kernel.get("epoch") == result.epoch:
            kernel.pop("epoch")
        if self.notebook_path is None:
            kernel.pop("notebook_path", None)
        summary = condensed_dict(self.summary)
        if summary is not None:
            summary.pop("parts")
        streams = all(output.get("output_type") == "stream" for output in self.outputs)
        if self.inline and streams:
            summary = None
        document = {
            **ok_document(operation=self.operation),
            "ok": self.ok,
            "path": None if self.path is None else str(self.path),
            "notebook_path": None if self.notebook_path is None else str(self.notebook_path),
            "run": {
                "status": result.status,
                "execution_count": result.execution_count,
                "duration_s": round(result.duration_s, 4),
                "ename": result.ename,
                "evalue": result.evalue,
                "interrupted_by": result.interrupted_by,
                "interrupt_requested_by": result.interrupt_requested_by,
                "interrupt_requested_command": result.interrupt_requested_command,
                "kernel_killed": result.kernel_killed,
                "epoch": result.epoch,
                "kernel_restarted": result.kernel_restarted,
                "replaced_epoch": self.replaced_epoch,
                "replacement_kept": result.replacement_kept,
            },
            "kernel": kernel,
            "output_count": None if self.inline else len(self.outputs),
            "inline": self.inline,
            "outputs": self.outputs if self.inline else None,
            "summary": summary,
            "output_manifest": None if self.saved is None else str(self.saved.manifest_path),
            "run_id": None if self.saved is None else self.saved.run_id,
            "files": [] if self.saved is None else list(self.saved.files),
            "notice": self.notice,
            "retention": self.retention,
            "save_error": self.save_error,
            "effect": None if self.effect is None else self.effect.to_dict(),
        }
        compacted: dict[str, Any] = compact(document)
        return compacted


def with_kernel_notes(outcome: CodeOutcome, effect: InlineEffect | None) -> CodeOutcome:
    """``outcome`` with the code's ``effect`` on the cells and, when the run had to replace
    a kernel that died, its ``replaced_epoch`` and a notice saying so (before the saved-run
    notice, if any)."""
    lost = outcome.result.replaced_epoch
    notice = outcome.notice
    if outcome.result.kernel_restarted:
        lead = (
            f"The kernel (epoch {lost or 'unknown'}) had died"
            " and was replaced by a new one (epoch "
            f"{outcome.result.epoch}) to run the code: its variables are lost and every cell "
            "is stale."
        )
        if outcome.result.replacement_kept:
            lead += " The new kernel is kept running: later commands share it."
        notice = lead if notice is None else f"{lead} {notice}"
    return replace(outcome, effect=effect, replaced_epoch=lost, notice=notice)


def _show_command(manifest: Path, *extra: str) -> str:
    return shlex.join(["j-cli", "output", "show", str(manifest), *extra])


def _with_show_hints(condensed: CondensedOutputs, manifest: Path) -> CondensedOutputs:
    """The summary with every read hint written as the ``j-cli output show`` command."""
    from jupyter_jcli.condense import CondensedOutputs

    return CondensedOutputs(
        condensed.text_with_hints(lambda hint: _show_command(manifest, *hint.options())),
        condensed.images,
        condensed.parts,
        condensed.truncated,
        condensed.budget,
        condensed.omitted_outputs,
    )


_FIT_ROUNDS = 4


def _summary(outputs: Sequence[Output], manifest: Path) -> CondensedOutputs:
    """The outputs condensed within :data:`SUMMARY_BUDGET` characters *after* their read
    hints became ``j-cli output show`` commands (longer than the hints they replace): the
    budget shrinks by the overflow until the text fits (a few rounds, bounded)."""
    from jupyter_jcli.condense import condense_outputs

    budget = SUMMARY_BUDGET
    for _round in range(_FIT_ROUNDS):
        summary = _with_show_hints(
            condense_outputs(outputs, budget=budget, include_images=False, stream_lines=None),
            manifest,
        )
        overflow = len(summary.text) - SUMMARY_BUDGET
        if overflow <= 0:
            return replace(summary, budget=SUMMARY_BUDGET)  # the summary's, not a round's
        budget = max(1, budget - overflow)
    plain = condense_outputs(outputs, budget=budget, include_images=False, stream_lines=None)
    return replace(plain, budget=SUMMARY_BUDGET)  # hints as condensed: within the budget


def _notice(outputs: Sequence[Output], summary: CondensedOutputs, manifest: Path) -> str:
    shown = min(len(outputs), SUMMARY_MAX_OUTPUTS)
    left: list[str] = []
    if len(outputs) > shown:
        left.append(f"outputs {shown} to {len(outputs) - 1} are not shown")
    if summary.omitted_outputs:
        left.append(f"outputs {', '.join(map(str, summary.omitted_outputs))} did not fit")
    if summary.truncated and not summary.omitted_outputs:
        left.append("long outputs are cut")
    lead = f"{len(outputs)} output{'' if len(outputs) == 1 else 's'} saved in {manifest}"
    lead += f" ({'; '.join(left)})" if left else ""
    return (
        f"{lead}. List them: {_show_command(manifest)}; read one: "
        f"{_show_command(manifest, '--output', 'K')}."
    )


def _retention(cwd: Path, saved: SavedRun) -> dict[str, Any]:
    from jupyter_jcli.runs import clean_runs  # retention: only after a saved run

    try:
        report = clean_runs(cwd, keep=saved.folder)
    except JcliError as err:
        return {"error": err.to_dict()}
    return {
        "deleted": len(report.deleted),
        "kept": len(report.kept),
        "runs": report.runs,
        "days": report.days,
        "max_runs": report.max_runs,
    }


def code_outcome(
    operation: CodeOperation,
    result: ExecutionResult,
    kernel: KernelInfo,
    *,
    cwd: Path,
    path: Path | None,
    notebook_path: Path | None,
    origin: dict[str, Any],
) -> CodeOutcome:
    """Answer a code run: inline when short text, else saved under ``cwd`` and summarized.

    A failure to save (``RUN_FOLDER_UNSAFE``, ``FILE_WRITE_FAILED``...) is reported in the
    outcome's ``save_error``, not raised: the code has run, its summary is still answered.
    """
    outputs = file_outputs(result.outputs)
    if stays_inline(outputs):
        summary = None
        if outputs:
            from jupyter_jcli.condense import condense_outputs  # only outputs are condensed

            summary = condense_outputs(
                outputs, budget=INLINE_SUMMARY_BUDGET, include_images=False, stream_lines=None
            )
        return CodeOutcome(
            operation, path, notebook_path, result, kernel, outputs, True, summary, None, None,
            None,
        )  # fmt: skip
    execution = {
        "status": result.status,
        "execution_count": result.execution_count,
        "ename": result.ename,
        "evalue": result.evalue,
        "duration_s": round(result.duration_s, 4),
        "epoch": result.epoch,
    }
    from jupyter_jcli.runs import save_run

    try:
        saved = save_run(cwd, outputs, origin=origin, execution=execution)
    except JcliError as err:  # the code ran: answer what it gave, and why nothing was saved
        from jupyter_jcli.condense import condense_outputs

        shown = outputs[:SUMMARY_MAX_OUTPUTS]
        condensed = condense_outputs(
            shown, budget=SUMMARY_BUDGET, include_images=False, stream_lines=None
        )
        return CodeOutcome(
            operation, path, notebook_path, result, kernel, outputs, False, condensed, None,
            f"The {len(outputs)} outputs could not be saved under {cwd} ({err.code}: "
            f"{err.message}); the summary is all that is left of them.",
            None, save_error=err.to_dict(),
        )  # fmt: skip
    summary = _summary(outputs[:SUMMARY_MAX_OUTPUTS], saved.manifest_path)
    return CodeOutcome(
        operation,
        path,
        notebook_path,
        result,
        kernel,
        outputs,
        False,
        summary,
        saved,
        _notice(outputs, summary, saved.manifest_path),
        _retention(cwd, saved),
    )


def condensed_summary(
    outputs: Sequence[Output], *, include_images: bool
) -> CondensedOutputs | None:
    """Scratch code's outputs condensed as ``execute_cells`` condenses a cell's: text within
    ``DEFAULT_EXECUTE_BUDGET`` characters, at most 8 rasters as images; each read hint says
    :data:`NOT_KEPT` (the outputs are saved nowhere). None for no outputs."""
    if not outputs:
        return None
    from jupyter_jcli.condense import CondensedOutputs, condense_outputs
    from jupyter_jcli.workbench._execute import DEFAULT_EXECUTE_BUDGET, MAX_EXECUTE_IMAGES

    condensed = condense_outputs(
        file_outputs(outputs),
        budget=DEFAULT_EXECUTE_BUDGET,
        include_images=include_images,
        max_images=MAX_EXECUTE_IMAGES,
    )
    return CondensedOutputs(
        condensed.text_with_hints(lambda _hint: NOT_KEPT),
        condensed.images,
        condensed.parts,
        condensed.truncated,
        condensed.budget,
        condensed.omitted_outputs,
    )


def code_origin(
    operation: CodeOperation,
    code: str,
    *,
    cwd: Path,
    notebook_path: Path | None,
    script_path: Path | None = None,
) -> dict[str, Any]:
    """The manifest's ``origin``: what ran, where (the code by digest and first line)."""
    first = next((line for line in code.splitlines() if line.strip()), "")
    return {
        "operation": operation,
        "cwd": str(cwd),
        "notebook_path": None if notebook_path is None else str(notebook_path),
        "script_path": None if script_path is None else str(script_path),
        "code_sha256": hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest(),
        "code_characters": len(code),
        "first_line": first[:200],
    }


async def run_code_on(
    kernel: NotebookKernel,
    code: str,
    *,
    timeout: float | None,
    display_mode: DisplayMode | None = None,
) -> tuple[ExecutionResult, KernelInfo]:
    """Run ``code`` on ``kernel`` (not a cell: no display-update routing; with IPython's
    ``display_mode`` for this execution only, :mod:`~jupyter_jcli.workbench._display_mode`)
    and return the result with the kernel's state after it: while this caller holds the
    kernel, what the kernel said last (``ExecutionResult.kernel_state``), not the hold's
    ``busy``."""
    result = await execute_with_display_mode(kernel, code, timeout=timeout, mode=display_mode)
    info = await kernel.info()
    if info.state == "busy" and result.kernel_state is not None:
        info = replace(info, state=result.kernel_state, running_cell=None)
    return result, info


def scratch_spec(kernel_name: str | None) -> str:
    """The kernelspec of a scratch kernel: the one named, else the default.

    Raises:
        UsageError: ``USAGE_ERROR`` for a blank name.
    """
    if kernel_name is None:
        return DEFAULT_KERNELSPEC
    if not kernel_name.strip():
        raise UsageError(
            "The kernelspec name is blank; name an installed kernelspec.",
            {"kernel_name": kernel_name},
        )
    return kernel_name.strip()


async def execute_code(
    workbench: Workbench,
    path: str | os.PathLike[str] | None,
    code: str,
    *,
    timeout: float | None = None,
    kernel_name: str | None = None,
    display_mode: str | None = None,
    cwd: str | os.PathLike[str] | None = None,
    operation: CodeOperation = "exec",
    script_path: Path | None = None,
    condensed: bool = False,
    include_images: bool = True,
) -> CodeOutcome:
    """``Workbench.execute_code``: run ``code`` on the notebook's kernel (``path``), or with
    ``path=None`` on a scratch kernel started in ``cwd``, without touching any notebook.

    Short text results are answered inline; others are saved as a saved run under ``cwd``
    (see :mod:`jupyter_jcli.runs`) and summarized (:class:`CodeOutcome`).

    Args:
        workbench: the workbench whose pool (and kernelspec choices) run the code.
        path: the notebook (``.ipynb`` or paired ``.py``) whose kernel runs the code.
        code: the code to run, as a cell would run it (it is not a cell: no display-update
            routing, no execution log entry).
        timeout: seconds it may run (as for ``Workbench.execute_cells``).
        kernel_name: the kernelspec (of the notebook's kernel, as for ``execute_cells``; of
            the scratch kernel, default ``python3``).
        display_mode: IPython's ``ast_node_interactivity`` for this execution only
            (:data:`~jupyter_jcli.workbench._display_mode.DISPLAY_MODES`: ``all`` displays
            every top-level expression, ``last_expr_or_assign`` also the value of a last
            assignment); None keeps the kernel's setting.
        cwd: the command's working directory (default the process's), resolved.
        operation: ``"exec"``, or ``"run_script"`` for a plain script's text.
        script_path: the script whose text ``code`` is (the run's origin and ``path``).
        condensed: answer the outputs condensed as ``execute_cells`` gives a cell's (text
            within ``DEFAULT_EXECUTE_BUDGET`` characters, rasters as images, a cut saying the
            rest is not kept) in ``summary``, saving nothing under ``cwd`` (``inline`` false,
            no ``outputs``); for ``operation="execute_code"``.
        include_images: with ``condensed``, rasters as base64 images (else described).

    Raises:
        UsageError: ``USAGE_ERROR`` (bad timeout, blank kernel name, unknown display mode,
            a display mode on a kernel without IPython).
        NotebookError: the read codes of ``Document.load``.
        KernelError: ``KERNEL_BUSY``, ``KERNELSPEC_NOT_FOUND``, ``KERNELSPEC_MISMATCH`` (a
            notebook whose live kernel runs another kernelspec than ``kernel_name``),
            ``KERNEL_START_FAILED``.
    """
    import anyio

    execute_timeout(timeout)
    mode = check_display_mode(display_mode)
    effect: InlineEffect | None = None
    here = Path(os.path.realpath(os.fspath(cwd) if cwd is not None else os.getcwd()))
    named: Path | None = script_path
    notebook_path: Path | None = None
    if path is None:
        scratch = workbench.pool.kernel(
            scratch_kernel_path(here), kernelspec_name=scratch_spec(kernel_name)
        )
        if not await scratch.is_alive():
            try:
                await scratch.require_kernelspec()
            except KernelError as err:  # say where the name came from, as for a notebook
                if err.code != ErrorCode.KERNELSPEC_NOT_FOUND:
                    raise
                source = "default" if kernel_name is None else "kernel_name"
                details = {**err.details, "source": source}
                raise KernelError(err.code, err.message, details) from err

        result, info = await run_code_on(scratch, code, timeout=timeout, display_mode=mode)
    else:
        loaded = await workbench._load(path)
        document = loaded.document
        kernel = await workbench._kernel(document, kernel_name)
        async with workbench._choice.explained(document), kernel.hold():
            await workbench._startable(kernel)
            result, info = await run_code_on(kernel, code, timeout=timeout, display_mode=mode)
            # recorded before the kernel is let go: no one's cell falls between code and record
            loaded = await workbench._current(loaded)
            effect = await workbench._thread(
                partial(
                    record_inline_change, loaded, workbench._log(document), next(workbench._seq),
                    code, result=result, info=info, who=process_name(),
                )
            )  # fmt: skip
        named, notebook_path = document.path, document.notebook_path
    origin = code_origin(
        operation, code, cwd=here, notebook_path=notebook_path, script_path=script_path
    )
    if condensed:
        summary = await anyio.to_thread.run_sync(
            partial(condensed_summary, result.outputs, include_images=include_images)
        )
        outcome = CodeOutcome(
            operation, named, notebook_path, result, info, file_outputs(result.outputs),
            False, summary, None, None, None,
        )  # fmt: skip
        return with_kernel_notes(outcome, effect)
    outcome = await anyio.to_thread.run_sync(
        partial(
            code_outcome,
            operation,
            result,
            info,
            cwd=here,
            path=named,
            notebook_path=notebook_path,
            origin=origin,
        )
    )
    return with_kernel_notes(outcome, effect)
