"""Text renderings of workbench results for a person (the non ``-j`` mode). Pure strings."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from jupyter_jcli.cli._clip import clip
from jupyter_jcli.cli._render import counted, j_cli

if TYPE_CHECKING:
    from jupyter_jcli.condense import CondensedOutputs, ReadHint
    from jupyter_jcli.workbench import (
        MutationOutcome,
        Overview,
        ReadCellsResult,
        SessionOverview,
        UndoOutcome,
    )

__all__ = [
    "cell_name",
    "cell_names",
    "more_cells_line",
    "mutation_lines",
    "next_page_command",
    "output_hint_command",
    "outputs_text",
    "overview_document",
    "overview_lines",
    "overview_table",
    "read_lines",
    "table",
    "undo_lines",
]

NAME_WIDTH = 28
"""Widest name column in the overview table."""
LIST_WIDTH = 20
"""Widest defines/uses/parents column in the overview table."""
LINE_WIDTH = 40
"""Widest first-line column in the overview table."""

_TYPE_LABELS = {"code": "code", "markdown": "md", "raw": "raw"}
_CELLS_HINT = re.compile(r"read_cells names=([a-z0-9-]+) budget=(\d+)")


def cell_name(name: str) -> str:
    """A cell name as text output names it in a sentence or a list: in backticks, so a name
    such as ``code`` or ``data`` never reads as a word of the sentence."""
    return f"`{name}`"


NAMES_SHOWN = 20
"""The most cell names one text list shows (``-j`` documents: ``_lists.CELLS_LISTED``)."""


def cell_names(names: Sequence[str], file_arg: str | None = None) -> str:
    """Cell names as a comma-separated list of :func:`cell_name`, ``-`` for none; past
    :data:`NAMES_SHOWN` names, the count of the others (an edit that stales 10,000 cells
    says so in a line, not in 100 KB) and, given the notebook as the command named it
    (``file_arg``), the command that pages every cell's status."""
    if not names:
        return "-"
    shown = ", ".join(map(cell_name, names[:NAMES_SHOWN]))
    left = len(names) - NAMES_SHOWN
    if left <= 0:
        return shown
    if file_arg is None:
        return f"{shown} and {left:,} more"
    from jupyter_jcli.cli._lists import statuses_command

    return (
        f"{shown} and {left:,} more (every cell's status: {statuses_command(file_arg, json=False)})"
    )


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows aligned in columns (two spaces apart); the last column is not padded."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=False)]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    return lines


def pair_lines(facts: Mapping[str, Any] | None) -> list[str]:
    """The line every read of an out-of-sync pair prints (``Document.pair_out_of_sync``):
    the sides differ, which one is shown, which is newer, and what a run or edit does."""
    if facts is None:
        return []
    newer = facts["notebook_path"] if facts["newer"] == "notebook" else facts["text_path"]
    if facts["writes"] == "refused":
        then = (
            "runs and edits are refused (PAIR_OUT_OF_SYNC) until they agree: to keep the "
            f"inputs of {facts['notebook_path']}: `{facts['keep_notebook']}`; to keep those of "
            f"{facts['text_path']}: `{facts['keep_text']}`"
        )
    else:
        then = (
            f"{facts['notebook_path']} is unchanged since jupyter-jcli last wrote the pair, so the "
            "next run or edit takes the text file's inputs into it"
        )
    shown = facts["text_path"] if facts.get("shown", "text") == "text" else facts["notebook_path"]
    return [
        f"warning: pair out of sync: {facts['notebook_path']} and {facts['text_path']} hold "
        f"different cell inputs ({newer} changed last); shown: the inputs of {shown}; {then}"
    ]


def overview_lines(overview: Overview, file_arg: str, limit: int | None) -> list[str]:
    """The overview as a header line, an aligned table of cells (with each code cell's run
    status for a :class:`~jupyter_jcli.workbench.SessionOverview`), the kernel the statuses
    are judged against and why cells are stale, the next page's command, and the lint list
    (``file_arg`` and ``limit``: as the command was given them)."""
    from jupyter_jcli.workbench import SessionCellOverview, SessionOverview

    session = overview if isinstance(overview, SessionOverview) else None
    lint = ", ".join(f"{count} {kind}" for kind, count in overview.lint_summary.items())
    shown = len(overview.cells)
    page = (
        f"{overview.cell_count} cells"
        if shown == overview.cell_count
        else f"cells {overview.start}-{overview.start + shown - 1} of {overview.cell_count}"
        if shown
        else f"no cells from {overview.start} (of {overview.cell_count})"
    )
    lines = [
        f"{overview.path}: {page}, structure rev {overview.structure_rev}, lint: {lint or 'clean'}"
    ]
    lines.extend(pair_lines(overview.pair_out_of_sync))
    lines.extend(overview_table(overview))
    if session is not None:
        lines.append(_kernel_line(session))
        causes = [
            (c.name, c.stale_cause)
            for c in session.cells
            if isinstance(c, SessionCellOverview) and c.stale_cause
        ]
        lines.extend(f"  {cell_name(name)} is stale: {cause}" for name, cause in causes)
    more = more_cells_line(overview, file_arg, limit)
    if more:
        lines.append(more)
    findings = overview.findings
    if findings:
        lines.append("")
        lines.append(f"lint ({len(findings)}):")
        for f in findings:
            where = f"cell {f.index} {cell_name(f.cell)}" + (f" line {f.line}" if f.line else "")
            lines.append(f"  {where}: {f.kind}: {f.message}")
    return lines


def overview_table(overview: Overview) -> list[str]:
    """The overview page's cells as an aligned table (header first): index, name, type, rev,
    run status (for a :class:`~jupyter_jcli.workbench.SessionOverview`), defines, uses,
    parents, first line (``!`` before it: lint findings). Every text that shows a page of
    the overview (``notebook overview``, the end of ``run``) shows this table, so the next
    page's command continues the same columns."""
    from jupyter_jcli.workbench import SessionOverview

    session = overview if isinstance(overview, SessionOverview) else None
    rows = [
        [
            str(c.index),
            clip(c.name, NAME_WIDTH),
            _TYPE_LABELS.get(c.cell_type, c.cell_type),
            c.rev,
            *([_cell_status(c)] if session is not None else []),
            *(
                clip(", ".join(names) or "-", LIST_WIDTH) if c.cell_type == "code" else ""
                for names in (c.defines, c.uses, c.parents)
            ),
            ("! " if c.findings else "") + clip(c.first_line, LINE_WIDTH),
        ]
        for c in overview.cells
    ]
    status = ["status"] if session is not None else []
    header = ["#", "name", "type", "rev", *status, "defines", "uses", "parents", "first line"]
    return table(header, rows)


def next_page_command(
    overview: Overview, file_arg: str, limit: int | None, *, json: bool = False
) -> str | None:
    """The ``j-cli notebook overview`` command of the page after ``overview`` (``limit``: the
    page size asked for, ``None``: the default; ``json``: with ``-j``), or ``None`` on the
    last page."""
    from jupyter_jcli.workbench import DEFAULT_OVERVIEW_LIMIT

    after = overview.start + len(overview.cells)
    if after >= overview.cell_count:
        return None
    paged = ["--limit", limit] if limit is not None and limit != DEFAULT_OVERVIEW_LIMIT else []
    words = ["notebook", "overview", file_arg, "--start", after, *paged]
    return j_cli(*(["-j"] if json else []), *words)


def more_cells_line(overview: Overview, file_arg: str, limit: int | None) -> str | None:
    """``… N more cells: <the next page's command>``, or ``None`` on the last page."""
    command = next_page_command(overview, file_arg, limit)
    if command is None:
        return None
    left = overview.cell_count - overview.start - len(overview.cells)
    return f"… {left} more cells: {command}"


def overview_document(overview: Overview, file_arg: str, limit: int | None) -> dict[str, Any]:
    """The overview's document (``to_dict``) with ``next_call`` as the ``j-cli -j`` command
    of the next page (the workbench's names the MCP tool's call)."""
    document = overview.to_dict()
    if document.get("next_call") is not None:
        document["next_call"] = next_page_command(overview, file_arg, limit, json=True)
    return document


def _cell_status(cell: object) -> str:
    status = getattr(cell, "status", None)
    return str(status) if status is not None else ""


def _kernel_line(overview: SessionOverview) -> str:
    """The kernel the statuses are judged against and the statuses over every page."""
    kernel = overview.kernel
    counts = ", ".join(f"{n} {status}" for status, n in overview.status_summary.items())
    if kernel.state not in ("idle", "busy"):
        where = "no live kernel (j-cli kernel start keeps one)"
    else:
        pid = f" pid {kernel.pid}" if kernel.pid is not None else ""
        where = f"kernel {kernel.kernelspec_name}{pid} {kernel.state}{_busy_words(overview)}"
        if kernel.epoch is not None:
            where += f", epoch {kernel.epoch[:12]}"
        if kernel.origin.attached:  # started elsewhere, history unknown: nothing fresh
            where += f", started by {kernel.origin.started_by or 'someone else'}: not run here"
    return f"{where}; code cells: {counts or 'none'}"


def _busy_words(overview: SessionOverview) -> str:
    """What the kernel runs and for whom, as the registry records it (`` (running cell `c`
    for `j-cli run nb.ipynb` (pid 12, ended): its code outlived it)``), else nothing."""
    busy = overview.kernel_busy
    if busy is None:
        return ""
    from jupyter_jcli.kernels import running_words

    gone = ": its code outlived it" if busy.get("busy_gone") else ""
    return f" (running {running_words(busy)} for {busy.get('busy_command_words')}{gone})"


def output_hint_command(hint: ReadHint, file_arg: str) -> str:
    """The ``j-cli notebook output`` command doing the read a condensed output's cut names."""
    cell = [] if hint.cell_index is None else ["--cell", hint.cell_index]
    return j_cli("notebook", "output", file_arg, *cell, *hint.options())


def outputs_text(outputs: CondensedOutputs, file_arg: str) -> str:
    """The condensed text with every read hint (structured in its parts) written as the
    ``j-cli notebook output`` command, and source-cut hints as ``j-cli notebook read``."""
    text = outputs.text_with_hints(lambda hint: output_hint_command(hint, file_arg))
    return _cells_hints(text, file_arg)


def _cells_hints(text: str, file_arg: str) -> str:
    """``text`` with each source-cut hint (``read_cells names=N budget=B``) as its command."""
    return _CELLS_HINT.sub(lambda m: read_command(file_arg, m[1], budget=m[2]), text)


def read_command(file_arg: str, name: str, *, budget: str = "", whole: int = 0) -> str:
    """The ``j-cli notebook read FILE --cell NAME --budget N`` command; ``whole``: the
    characters of the cell's whole source, given a budget that reads it all."""
    from jupyter_jcli.workbench import MIN_CELL_SHARE

    budget = budget or str(2 * whole + MIN_CELL_SHARE)
    return j_cli("notebook", "read", file_arg, "--cell", name, "--budget", budget)


def read_lines(result: ReadCellsResult, file_arg: str) -> list[str]:
    """Each cell's header, source and condensed outputs; read hints as ``j-cli`` commands."""
    lines: list[str] = pair_lines(result.pair_out_of_sync)
    for c in result.cells:
        lines.append(f"── [{c.index}] {c.name} · {c.cell_type} · rev {c.rev} ──")
        lines.extend(_cells_hints(c.source, file_arg).splitlines() or [""])
        if c.source_omitted_characters and not _CELLS_HINT.search(c.source):
            whole = len(c.source) + c.source_omitted_characters
            command = read_command(file_arg, c.name, whole=whole)
            lines.append(
                f"[… {c.source_omitted_characters:,} characters of source cut; "
                f"read the whole cell: {command}]"
            )
        if c.outputs is not None:
            lines.append(f"── outputs ({c.output_count}) ──")
            lines.extend(outputs_text(c.outputs, file_arg).splitlines())
        elif c.output_count:
            lines.append(f"── {c.output_count} outputs not shown: the budget is spent ──")
        lines.append("")
    footer = f"{result.characters:,} of {result.budget:,} characters"
    if result.truncated:
        footer += "; some text was cut (each cut says how to read it)"
    lines.append(footer)
    omitted = result.omitted_cells
    if omitted:
        span = omitted[0] if len(omitted) == 1 else f"{omitted[0]} … {omitted[-1]}"
        lines.append(
            f"{len(omitted)} more cells not shown ({span}): raise --budget, "
            "or pick cells with --cell NAME"
        )
    return lines


_VERBS = {
    "add_cell": "added",
    "update_cell": "updated",
    "remove_cell": "removed",
    "move_cell": "moved",
}


def mutation_lines(outcome: MutationOutcome, file_arg: str) -> list[str]:
    """What the edit did: the cell and its new rev, the structure rev, what went stale."""
    verb = _VERBS.get(outcome.operation, outcome.operation)
    lines = []
    if outcome.cell is not None:
        c = outcome.cell
        line = f"{verb} {c.cell_type} cell {cell_name(c.name)} (index {c.index}), rev {c.rev}"
        previous = outcome.previous_cell
        if previous is not None:
            if previous.name != c.name:
                line += f", renamed from {cell_name(previous.name)}"
            if previous.rev != c.rev:
                line += f" (was {previous.rev})"
            if previous.index != c.index:
                line += f", from index {previous.index}"
        lines.append(line)
    elif outcome.removed is not None:
        r = outcome.removed
        lines.append(
            f"{verb} {r.cell_type} cell {cell_name(r.name)} (was index {r.index}, rev {r.rev})"
        )
    if not outcome.written:
        lines.append("nothing changed in the file")
    lines.append(f"structure rev {outcome.previous_structure_rev} -> {outcome.structure_rev}")
    if outcome.reloaded:
        lines.append("note: the file had changed outside; the edit applied on top of that change")
    stale = outcome.stale
    lines.append(
        f"stale ({len(stale):,}): {cell_names(stale, file_arg)}" if stale else "stale: none"
    )
    if outcome.written:
        lines.append(f"undo: {j_cli('notebook', 'undo', file_arg)}")
    return lines


def undo_lines(outcome: UndoOutcome, file_arg: str | None = None) -> list[str]:
    """What the undo restored and what is left on the stack (``file_arg``: the notebook as
    the command named it, for the command that lists what a long list leaves out)."""
    restored = ", ".join(str(path) for path in outcome.restored)
    lines = [f"undid {outcome.operation}: restored {restored or 'nothing (already undone)'}"]
    reverted = f"reverted cells: {cell_names(outcome.changed) if outcome.changed else 'none'}"
    lines.append(
        f"{reverted}; outputs and edits made since were kept" if outcome.merged else reverted
    )
    if outcome.forced:
        overwritten = cell_names([str(conflict["cell"]) for conflict in outcome.conflicts])
        shown = overwritten if outcome.conflicts else "files"
        lines.append(f"forced: changes made since were overwritten ({shown})")
    stale = outcome.stale
    lines.append(
        f"stale ({len(stale):,}): {cell_names(stale, file_arg)}" if stale else "stale: none"
    )
    lines.append(
        f"{counted(outcome.cell_count, 'cell')}, structure rev {outcome.structure_rev}; "
        f"{outcome.remaining} more {'undo step' if outcome.remaining == 1 else 'undo steps'}"
    )
    return lines
