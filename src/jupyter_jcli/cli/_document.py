"""``j-cli notebook overview|graph|read|undo``: the workbench's notebook-level operations.

Each command parses its options, calls one :mod:`jupyter_jcli.workbench` operation (imported
lazily, so ``--help`` stays cheap) and renders its result: the result's JSON document with
``-j``, readable text otherwise (see :mod:`jupyter_jcli.cli._document_render`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from jupyter_jcli.cli._cell_ref import CELL_REF_HELP
from jupyter_jcli.cli._emit import echo, emit_json, emit_result, json_mode
from jupyter_jcli.cli._params import FILE, cell_names_option, page_options
from jupyter_jcli.cli._server_options import store_options

if TYPE_CHECKING:
    from jupyter_jcli.workbench import SessionOverview

__all__ = ["graph_command", "overview_command", "read_command", "undo_command"]


@click.command("overview")
@store_options
@FILE
@page_options(
    "Index of the first cell shown.",
    "The most cells shown (the next page: --start at the first cell not shown).",
)
def overview_command(file: str, start: int, limit: int) -> None:
    """Every cell: name, type, rev, run status, what it defines and uses, its parents; then
    the kernel and the lint.

    Names address cells in `j-cli cell ...`; revs are the --expected-rev of an edit. The
    status (fresh, stale, error, never_run) is judged against the notebook's live kernel
    (`j-cli kernel start`), with the cause of a cell that inline code made stale; without
    one every code cell is never_run. The same document as the MCP notebook_overview, paged
    like it: --limit cells from --start. Reads only: starts no kernel, never writes the
    notebook or any other file.
    """
    import anyio

    from jupyter_jcli.cli._server_options import current_server
    from jupyter_jcli.workbench import shared_workbench

    server = current_server()  # --server-url, else $JUPYTER_JCLI_SERVER_URL, as for j-cli run

    async def read() -> SessionOverview:
        async with shared_workbench(server=server) as workbench:
            return await workbench.notebook_overview(file, start=start, limit=limit)

    overview = anyio.run(read)
    from jupyter_jcli.cli._document_render import overview_document, overview_lines

    emit_result(
        lambda: overview_document(overview, file, limit),
        lambda: overview_lines(overview, file, limit),
    )


@click.command("graph")
@store_options
@FILE
@click.option(
    "--format",
    "graph_format",
    type=click.Choice(["mermaid", "dot", "json"]),
    default="mermaid",
    show_default=True,
    help="Mermaid flowchart, Graphviz DOT, or the graph as JSON data.",
)
def graph_command(file: str, graph_format: str) -> None:
    """The dependency DAG between code cells (edges carry the names that flow).

    With -j the document holds the rendered text (mermaid, dot) and the graph as data. For
    a pair whose sides disagree, the warning line goes to stderr.
    """
    from jupyter_jcli.workbench import GRAPH_FORMATS, notebook_graph

    chosen = next(f for f in GRAPH_FORMATS if f == graph_format)
    result = notebook_graph(file, format=chosen)
    if json_mode():
        emit_json(result.to_dict())
        return
    from jupyter_jcli.cli._document_render import pair_lines

    for line in pair_lines(result.pair_out_of_sync):  # on stderr: stdout stays Mermaid/DOT
        echo(line, err=True)
    if result.text is not None:
        echo(result.text, nl=False)
        return
    emit_json(dict(result.graph))


@click.command("read")
@store_options
@FILE
@cell_names_option(
    f"Show this cell ({CELL_REF_HELP}; repeatable, in this order). Default: every cell."
)
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Characters of source and output text over all cells (default 20000).",
)
def read_command(file: str, names: tuple[str, ...], budget: int | None) -> None:
    """Sources with their saved outputs condensed: streams as a terminal shows them,
    tables as CSV, errors shortened, images described (with -j: base64 images, downscaled).

    Every cut says what was left out and how to read it exactly.
    """
    from jupyter_jcli.cli._cell_ref import resolve_to_names
    from jupyter_jcli.workbench import DEFAULT_READ_BUDGET, read_cells

    result = read_cells(
        file,
        names=resolve_to_names(file, names) or None,
        budget=budget if budget is not None else DEFAULT_READ_BUDGET,
        include_images=json_mode(),
    )
    from jupyter_jcli.cli._document_render import read_lines
    from jupyter_jcli.cli._lists import bounded

    emit_result(lambda: bounded(result.to_dict(), file), lambda: read_lines(result, file))


@click.command("undo")
@store_options
@FILE
@click.option(
    "--force",
    is_flag=True,
    help="Overwrite the changes made since the edit that conflict with undoing it.",
)
def undo_command(file: str, force: bool) -> None:
    """Revert the last `j-cli cell` edit, keeping outputs and edits made since (one step per
    call)."""
    from jupyter_jcli.workbench import undo_last

    result = undo_last(file, force=force)
    from jupyter_jcli.cli._document_render import undo_lines
    from jupyter_jcli.cli._lists import bounded

    emit_result(lambda: bounded(result.to_dict(), file), lambda: undo_lines(result, file))
