"""``j-cli notebook ...``: read cells and saved outputs of a notebook (or a paired ``.py``).

Each command parses its options, calls the protocol (imported lazily, so ``--help`` stays
cheap) and renders the result: the protocol response itself with ``-j``, text otherwise.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from jupyter_jcli.cli._cell_ref import CELL_REF_HELP
from jupyter_jcli.cli._emit import echo, emit_json, emit_result, json_mode
from jupyter_jcli.cli._params import FILE_PATH, LazyGroup, page_options, single
from jupyter_jcli.cli._server_options import store_options
from jupyter_jcli.errors import UsageError
from jupyter_jcli.workbench import CELLS_PAGE_LIMIT

if TYPE_CHECKING:
    from jupyter_jcli.outputs.notebook import NotebookOutputs

__all__ = ["notebook", "read_window_options", "split_mime_types"]

F = TypeVar("F", bound=Callable[..., Any])

_FILE = click.argument("file", metavar="FILE", type=FILE_PATH)
_CELL = single(
    "--cell",
    "cell_ref",
    required=True,
    metavar="CELL",
    help=f"The cell in FILE (.ipynb, or a .py paired with one): {CELL_REF_HELP}.",
)


def read_window_options(command: F) -> F:
    """The options of one output's read: ``--mime``, ``--supported-mime``, ``--offset`` and
    ``--limit`` (``j-cli notebook output`` and ``j-cli output show``); the command receives
    them as ``options``, the keyword arguments of ``read_output`` for those given.

    Raises:
        UsageError: ``USAGE_ERROR`` for an empty item of ``--supported-mime``.
    """

    @functools.wraps(command)
    def run(*args: Any, mime_type: str | None, supported_mime: Sequence[str], **kwargs: Any) -> Any:
        given: dict[str, Any] = {"mime_type": mime_type}
        given["supported_mime_types"] = split_mime_types(supported_mime)
        given.update(offset=kwargs.pop("offset"), limit=kwargs.pop("limit"))
        options = {key: value for key, value in given.items() if value is not None}
        return command(*args, options=options, **kwargs)

    help_of = {
        "--offset": "Text page start, in characters.",
        "--limit": "Text page size, in characters.",
    }
    for name, text in reversed(help_of.items()):
        run = single(name, type=int, metavar="N", help=text)(run)
    run = click.option(
        "--supported-mime",
        "supported_mime",
        multiple=True,
        metavar="TYPE[,TYPE]",
        help="Only accept these MIME types (repeat the option or separate with commas).",
    )(run)
    mime = single("--mime", "mime_type", metavar="TYPE", help="Return this MIME type of a bundle.")
    return mime(run)  # type: ignore[return-value]


def split_mime_types(values: Sequence[str]) -> list[str] | None:
    """``--supported-mime`` values, repeated and/or comma-separated, as one list (stripped,
    duplicates dropped), None when the option was not given.

    Raises:
        UsageError: ``USAGE_ERROR`` for an empty item (``""``, ``","``, ``"a,,b"``).
    """
    if not values:
        return None
    types = [part.strip() for value in values for part in value.split(",")]
    if not all(types):
        raise UsageError(
            "--supported-mime needs MIME types (comma-separated or repeated); "
            "an empty item was given.",
            {"supported_mime": list(values)},
        )
    return list(dict.fromkeys(types))


def _cell_of(file: str, cell_ref: str) -> tuple[NotebookOutputs, int]:
    """FILE loaded by the protocol and the index of its cell ``cell_ref`` (name or index).

    Raises:
        OutputProtocolError: the protocol's codes; ``CELL_NOT_FOUND`` for an unknown name.
    """
    from jupyter_jcli.cli._cell_ref import resolve_loaded_cell
    from jupyter_jcli.workbench import saved_outputs

    loaded = saved_outputs(file)
    return loaded, resolve_loaded_cell(loaded, cell_ref)


@click.group(
    cls=LazyGroup,
    lazy={
        "overview": ("jupyter_jcli.cli._document", "overview_command"),
        "graph": ("jupyter_jcli.cli._document", "graph_command"),
        "read": ("jupyter_jcli.cli._document", "read_command"),
        "undo": ("jupyter_jcli.cli._document", "undo_command"),
        "create": ("jupyter_jcli.cli._workbench_extra", "create_command"),
        "search": ("jupyter_jcli.cli._workbench_extra", "search_command"),
        "summarize": ("jupyter_jcli.cli._workbench_extra", "summarize_command"),
        "map": ("jupyter_jcli.cli._map", "map_command"),
    },
)
def notebook() -> None:
    """Read a notebook: cells, saved outputs, overview, dependency graph; undo an edit.

    Only `undo` writes; nothing here runs the notebook.
    """


@notebook.command("cells")
@store_options
@_FILE
@single(
    "--start",
    type=click.IntRange(min=0),
    metavar="N",
    help="First cell of the page (default 0); `next_start` of the previous page.",
)
@single(
    "--limit",
    type=click.IntRange(min=1),
    metavar="N",
    help=f"Most cells per page (default {CELLS_PAGE_LIMIT}).",
)
def cells_command(file: str, start: int | None, limit: int | None) -> None:
    """One line per cell: index, type, name or id, outputs, first line; paged.

    For a .py file: its cells and the paired notebook cell each maps to, when reliable.
    """
    from jupyter_jcli.cli._cells import cell_lines
    from jupyter_jcli.workbench import list_saved_cells

    document = list_saved_cells(
        file,
        start=0 if start is None else start,
        limit=CELLS_PAGE_LIMIT if limit is None else limit,
    )
    emit_result(lambda: document, lambda: cell_lines(document, file))


@notebook.command("outputs")
@store_options
@_FILE
@_CELL
def outputs_command(file: str, cell_ref: str) -> None:
    """List the saved outputs of one cell: index, type, MIME types and sizes."""
    from jupyter_jcli.cli._render import listing_lines

    loaded, index = _cell_of(file, cell_ref)
    listing = loaded.list_outputs(index)
    emit_result(lambda: listing, lambda: listing_lines(listing, file))


@notebook.command("output")
@store_options
@_FILE
@_CELL
@single(
    "--output",
    "output_index",
    type=int,
    required=True,
    metavar="K",
    help="Output index: physical, zero-based, in the cell's outputs.",
)
@read_window_options
@single(
    "--save",
    "save_path",
    type=FILE_PATH,  # "" or a NUL byte: a usage error before anything is read
    metavar="PATH",
    help="Write the selected image (decoded) to PATH.",
)
@click.option("--force", is_flag=True, help="With --save: replace PATH if it is a regular file.")
def output_command(
    *,
    file: str,
    cell_ref: str,
    output_index: int,
    options: dict[str, Any],
    save_path: str | None,
    force: bool,
) -> None:
    """Read one saved output: a text page, an image, JSON, or an error's traceback."""
    if force and save_path is None:
        raise UsageError("--force only applies together with --save.")
    loaded, index = _cell_of(file, cell_ref)
    result = loaded.read_output(index, output_index, **options)
    if save_path is not None:
        _save_and_report(result, save_path, force=force)
        return
    if json_mode():
        emit_json(result)
        return
    from jupyter_jcli.cli._render import render_read

    render_read(result, file)


def _save_and_report(result: dict[str, Any], save_path: str, *, force: bool) -> None:
    from jupyter_jcli.cli._render import describe_image
    from jupyter_jcli.cli._save import (
        SavedFile,
        image_bytes,
        require_matching_suffix,
        save_bytes,
    )

    mime_type, content = image_bytes(result)
    require_matching_suffix(save_path, mime_type)
    save_bytes(save_path, content, force=force)
    saved: SavedFile = {"path": save_path, "mime_type": mime_type, "bytes": len(content)}
    if json_mode():
        # The image is in the file now: the document keeps the read's facts, not its data.
        selected = {k: v for k, v in result["selected"].items() if k != "data"}
        emit_json({**result, "selected": selected, "saved": saved})
        return
    echo(f"saved {describe_image(result['selected'])} to {save_path}")


@notebook.command("show")
@store_options
@_FILE
@click.option(
    "--cell",
    "cells",
    multiple=True,
    metavar="CELL",
    help=f"Show only this cell ({CELL_REF_HELP}; repeatable, each shown once). "
    "Default: every cell with outputs.",
)
@page_options(
    "Begin the page at the first cell to show whose index is this or more.",
    "The most cells a page shows.",
)
def show_command(file: str, cells: tuple[str, ...], start: int, limit: int) -> None:
    """A quick tour: every cell with outputs, its whole source and each output cut short.

    Text and tables are shown as plain text, images as type, size and pixel dimensions,
    errors as name, value and the end of the traceback. Each cut (a very long source
    included) says how to read the rest. Paged: a page holds --limit cells and at most
    100,000 characters (with -j: 1 MB of listings); its last line (-j: next_call) is the
    command of the next page.
    """
    from jupyter_jcli.cli._show import show_document, show_text

    if json_mode():
        emit_json(show_document(file, cells, start=start, limit=limit))
        return
    show_text(file, cells, start=start, limit=limit)
