"""``j-cli cell add|update|remove|move``: edit one cell by name or index, guarded by its rev.

Each command calls one :mod:`jupyter_jcli.workbench` mutation. The rev comes from
``j-cli notebook overview`` (or a previous edit's result); if the cell changed since, the
edit is refused with ``REV_MISMATCH`` and the cell's current state (exit 1). Every edit is
snapshotted: ``j-cli notebook undo FILE`` reverts it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import click

from jupyter_jcli.cli._cell_ref import CELL_REF_HELP, resolve_named
from jupyter_jcli.cli._emit import emit_result
from jupyter_jcli.cli._params import FILE, single, text_or_file
from jupyter_jcli.cli._server_options import store_options
from jupyter_jcli.errors import CELL_TYPES, UsageError

if TYPE_CHECKING:
    from jupyter_jcli.workbench import MutationOutcome

__all__ = ["cell"]

_NAME = click.argument("name", metavar="CELL")
_SOURCE = click.option("--source", metavar="TEXT", help="The cell's source text.")
_SOURCE_FILE = click.option(
    "--source-file",
    metavar="PATH",
    type=click.Path(path_type=str, allow_dash=True),
    help="Read the source from PATH (UTF-8), or from stdin with '-'.",
)
_TYPE = click.option(
    "--type",
    "cell_type",
    type=click.Choice(CELL_TYPES),
    help="Cell type.",
)
_BEFORE = click.option(
    "--before", metavar="CELL", help=f"Place it before the cell CELL ({CELL_REF_HELP})."
)
_AFTER = click.option(
    "--after", metavar="CELL", help=f"Place it after the cell CELL ({CELL_REF_HELP})."
)
_EXPECTED_REV = single(
    "--expected-rev", metavar="REV", required=True, help="The cell's rev as you read it."
)  # an empty rev is a usage error naming the option, not a rev that "changed"
_START = click.option("--start", is_flag=True, help="Place it first.")
_END = click.option("--end", is_flag=True, help="Place it last.")

Position = Literal["start", "end"]
_SOURCE_USAGE = (
    "Give the cell's source with one of --source TEXT or --source-file PATH ('-': stdin)."
)


def _position(before: str | None, after: str | None, start: bool, end: bool) -> Position | None:
    """``--start`` or ``--end`` as a position (``None`` for neither), once at most one of the
    four placements was given."""
    places = ("--before", "--after", "--start", "--end")
    given = [flag for flag, value in zip(places, (before, after, start, end), strict=True) if value]
    if len(given) > 1:
        raise UsageError(
            f"Give only one of --before, --after, --start and --end (got {', '.join(given)}).",
            {"given": given},
        )
    return "start" if start else "end" if end else None


def _report(outcome: MutationOutcome, file: str) -> None:
    from jupyter_jcli.cli._document_render import mutation_lines
    from jupyter_jcli.cli._lists import bounded

    emit_result(lambda: bounded(outcome.to_dict(), file), lambda: mutation_lines(outcome, file))


@click.group()
def cell() -> None:
    """Edit cells by name or index, each edit guarded by the rev you read.

    CELL is a cell's name (as `j-cli notebook overview` shows it) or its zero-based index.
    Undo: j-cli notebook undo.
    """


@cell.command("add")
@store_options
@FILE
@_SOURCE
@_SOURCE_FILE
@_TYPE
@click.option("--name", metavar="NAME", help="The new cell's name (default: from its source).")
@_BEFORE
@_AFTER
@_START
@_END
@single(
    "--expected-rev",
    metavar="REV",
    help="With --before/--after: the anchor cell's rev (required). With --start/--end: "
    "the notebook's structure rev, to refuse if anything changed (optional).",
)
def add_command(
    *,
    file: str,
    source: str | None,
    source_file: str | None,
    cell_type: str | None,
    name: str | None,
    before: str | None,
    after: str | None,
    start: bool,
    end: bool,
    expected_rev: str | None,
) -> None:
    """Insert a new cell next to a cell, or at the start or end (default: end)."""
    text = text_or_file(source, source_file, _SOURCE_USAGE, required=True)
    assert text is not None
    position = _position(before, after, start, end)
    if (before is not None or after is not None) and expected_rev is None:
        option = "--before" if before is not None else "--after"
        raise UsageError(
            f"--expected-rev (the anchor cell's rev, as you read it) is required with {option}.",
            {"anchor": before or after, "option": "--expected-rev"},
        )
    anchors = resolve_named(file, {"before": before, "after": after})
    from jupyter_jcli.workbench import add_cell

    outcome = add_cell(
        file,
        text,
        cell_type=cell_type or "code",
        name=name,
        before=anchors.get("before"),
        after=anchors.get("after"),
        position=position,
        expected_rev=expected_rev,
    )
    _report(outcome, file)


@cell.command("update")
@store_options
@FILE
@_NAME
@_EXPECTED_REV
@_SOURCE
@_SOURCE_FILE
@_TYPE
@click.option(
    "--rename",
    "new_name",
    metavar="NEW",
    help="Give the cell this name (kebab-case, unused); it keeps its rev and run status.",
)
def update_command(
    *,
    file: str,
    name: str,
    expected_rev: str,
    source: str | None,
    source_file: str | None,
    cell_type: str | None,
    new_name: str | None,
) -> None:
    """Change a cell's source, type and/or name."""
    text = text_or_file(source, source_file, _SOURCE_USAGE, required=False)
    if text is None and cell_type is None and new_name is None:
        raise UsageError("Nothing to change: give --source/--source-file, --type or --rename.")
    target = resolve_named(file, {"cell": name})["cell"]
    from jupyter_jcli.workbench import update_cell

    outcome = update_cell(
        file, target, expected_rev=expected_rev, source=text, cell_type=cell_type, new_name=new_name
    )
    _report(outcome, file)


@cell.command("remove")
@store_options
@FILE
@_NAME
@_EXPECTED_REV
def remove_command(file: str, name: str, expected_rev: str) -> None:
    """Delete a cell."""
    from jupyter_jcli.workbench import remove_cell

    target = resolve_named(file, {"cell": name})["cell"]
    _report(remove_cell(file, target, expected_rev=expected_rev), file)


@cell.command("move")
@store_options
@FILE
@_NAME
@_EXPECTED_REV
@_BEFORE
@_AFTER
@_START
@_END
def move_command(
    *,
    file: str,
    name: str,
    expected_rev: str,
    before: str | None,
    after: str | None,
    start: bool,
    end: bool,
) -> None:
    """Move a cell next to another cell, or to the start or end."""
    position = _position(before, after, start, end)
    if before is None and after is None and position is None:
        raise UsageError(
            "Say where to move the cell: --before CELL, --after CELL, --start or --end."
        )
    cells = resolve_named(file, {"cell": name, "before": before, "after": after})
    from jupyter_jcli.workbench import move_cell

    outcome = move_cell(
        file,
        cells["cell"],
        expected_rev=expected_rev,
        before=cells.get("before"),
        after=cells.get("after"),
        position=position,
    )
    _report(outcome, file)
