"""``j-cli notebook create|search|summarize``: kernel-less whole-notebook workbench operations.

Each command parses its options, calls one :mod:`jupyter_jcli.workbench` operation (imported
lazily, so ``--help`` stays cheap) and renders its result: the result's JSON document with
``-j``, readable text otherwise (the ``*_lines`` functions here, pure strings).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from jupyter_jcli.cli._cell_ref import CELL_REF_HELP
from jupyter_jcli.cli._emit import emit_result
from jupyter_jcli.cli._params import FILE, cell_names_option
from jupyter_jcli.cli._server_options import store_options

if TYPE_CHECKING:
    from jupyter_jcli.workbench import CreateOutcome, SearchOutcome, SummarizeOutcome

__all__ = [
    "create_command",
    "create_lines",
    "search_command",
    "search_lines",
    "summarize_command",
    "summarize_lines",
]


def create_lines(outcome: CreateOutcome) -> list[str]:
    """The new file, its kernelspec and its cells (index, name, type, rev)."""
    spec = outcome.kernelspec
    lines = [
        f"created {outcome.path} (kernelspec {spec['name']}: {spec['display_name']}), "
        f"{len(outcome.cells)} cells, structure rev {outcome.structure_rev}"
    ]
    lines.extend(f"  [{c.index}] {c.name} · {c.cell_type} · rev {c.rev}" for c in outcome.cells)
    return lines


def search_lines(outcome: SearchOutcome) -> list[str]:
    """A header, then one line per match: where it is and its snippet."""
    kind = "regex" if outcome.regex else "text"
    lines = [
        f"{outcome.path}: {len(outcome.matches)} matches for {kind} {outcome.query!r} in "
        f"{len(outcome.cells)} cells (searched: {', '.join(outcome.fields)})"
    ]
    from jupyter_jcli.cli._document_render import cell_name, pair_lines

    lines.extend(pair_lines(outcome.pair_out_of_sync))
    for m in outcome.matches:
        where: str = m.field
        if m.output_index is not None:
            where += f" (output {m.output_index})"
        if m.summary_part is not None:
            where += f" ({m.summary_part})"
        lines.append(f"[{m.index}] {m.name} · {where} · {m.line}:{m.column}  {m.snippet}")
    if outcome.truncated:
        lines.append("more matches exist: raise --max-results or narrow the pattern")
    for name, field in outcome.clipped:
        lines.append(
            f"note: only the start of the {field} of {cell_name(name)} was searched (too long)"
        )
    return lines


def summarize_lines(outcome: SummarizeOutcome) -> list[str]:
    """Each cell's tldr, description and output summary, then what was cached."""
    from jupyter_jcli.cli._document_render import pair_lines

    lines: list[str] = pair_lines(outcome.pair_out_of_sync)
    reasons: set[str] = set()
    for c in outcome.cells:
        s = c.summary
        origin: str = "cached" if c.cached else c.source
        if s.fallback_reason is not None:
            origin += f": {s.fallback_reason}"
            reasons.add(s.fallback_reason)
        lines.append(f"── [{c.index}] {c.name} · {c.cell_type} · rev {c.rev} · {origin} ──")
        lines.append(f"tldr: {s.tldr}")
        lines.append(f"description: {s.description}")
        lines.append(f"outputs: {s.output_summary}")
        lines.append("")
    if outcome.written:
        lines.append(f"cached {len(outcome.written)} new summaries in the notebook's metadata")
    if reasons:
        lines.append(
            "texts starting with * are fallbacks computed from the cell "
            f"({', '.join(sorted(reasons))})"
        )
    if not outcome.cells:
        lines.append("no cells to summarize")
    return lines


@click.command("create")
@store_options
@FILE
@click.option(
    "--kernel",
    "kernelspec_name",
    metavar="NAME",
    default="python3",
    show_default=True,
    help="The kernelspec recorded in the notebook (see `jupyter kernelspec list`).",
)
@click.option(
    "--cell-source",
    "sources",
    multiple=True,
    metavar="TEXT",
    help="An initial code cell (repeatable, in this order).",
)
def create_command(file: str, kernelspec_name: str, sources: tuple[str, ...]) -> None:
    """Create a new notebook (nbformat 4.5, named cells); never overwrites a file."""
    from jupyter_jcli.workbench import NewCell, create_notebook

    outcome = create_notebook(
        file,
        cells=[NewCell(source) for source in sources],
        kernelspec_name=kernelspec_name,
    )
    emit_result(outcome.to_dict, lambda: create_lines(outcome))


@click.command("search")
@store_options
@FILE
@click.argument("pattern", metavar="PATTERN")
@click.option("--regex", is_flag=True, help="PATTERN is a Python regular expression.")
@click.option(
    "--in",
    "fields",
    metavar="FIELDS",
    default="sources,names,summaries,outputs",
    show_default=True,
    help="Where to look, comma-separated (summaries: cached ones only).",
)
@click.option(
    "--max-results",
    type=click.IntRange(min=1, max=1000),
    default=50,
    show_default=True,
    help="Most matches shown.",
)
@click.option(
    "--context",
    "context_chars",
    type=click.IntRange(min=0, max=1000),
    default=80,
    show_default=True,
    help="Characters of the line shown each side of a match.",
)
def search_command(
    *, file: str, pattern: str, regex: bool, fields: str, max_results: int, context_chars: int
) -> None:
    """Find text in cell sources, names, cached summaries and output text (case-insensitive).

    Output text is what `j-cli notebook read` shows (ANSI removed, errors shortened, tables
    as CSV); images are not searched. Reads only.
    """
    from jupyter_jcli.workbench import search_cells

    outcome = search_cells(
        file,
        pattern,
        regex=regex,
        fields=fields,
        max_results=max_results,
        context_chars=context_chars,
    )
    emit_result(outcome.to_dict, lambda: search_lines(outcome))


@click.command("summarize")
@store_options
@FILE
@cell_names_option(
    f"Summarize this cell ({CELL_REF_HELP}; repeatable, in this order). "
    "Default: every code and Markdown cell."
)
@click.option("--model", metavar="MODEL", help="The model (default: claude-haiku-4-5).")
def summarize_command(file: str, names: tuple[str, ...], model: str | None) -> None:
    """Summaries of cells: tldr, description, output summary.

    Written by the model when the anthropic SDK finds credentials (then cached in the
    notebook's cell metadata, so an unchanged cell is never summarized twice); otherwise
    fallbacks computed from the cell, marked with *.
    """
    from jupyter_jcli.cli._cell_ref import resolve_to_names
    from jupyter_jcli.workbench import summarize_cells

    outcome = summarize_cells(file, names=resolve_to_names(file, names) or None, model=model)
    emit_result(outcome.to_dict, lambda: summarize_lines(outcome))
