"""Cell references: every ``j-cli`` option or argument that names a cell takes a name or an index.

A reference is one string, read by one rule (:func:`parse_cell_ref`):

- ASCII decimal digits, optionally after one ``-`` (``"3"``, ``"-1"``): a physical, zero-based
  cell index. Cell names can never look like this: a name starts with a lowercase letter
  (:data:`jupyter_jcli.notebook.names.NAME_PATTERN`);
- anything else: a cell name, compared exactly (``"٣"``, ``"1_8"`` or ``"Data"`` are names no
  cell has, never an index).

One resolver (:func:`resolve_cell_ref`) turns a reference into an index among a file's cell
names and refuses an unknown one with ``CELL_NOT_FOUND``: for an index the protocol's own error
(details ``path``, ``cell_index``, ``cell_count``), for a name details ``path``, ``name``,
``cell_count`` and ``close_names``.
The names are the ones ``j-cli notebook overview`` shows, from the same function
(:func:`jupyter_jcli.notebook.names.assign_names`), computed on the fly: resolving never
writes a name into the file.

Where the names come from:

- the commands of the saved-output protocol (``notebook cells|outputs|output|show``) name the
  cells of the file as the protocol reads it
  (:func:`~jupyter_jcli.workbench.saved_cell_names`). For a ``.py`` file
  the cells are the script's cells (the protocol's indexes), called by the names the workbench
  gives them when it edits the pair (``notebook overview nb.py``, ``cell update nb.py NAME``),
  so every command addresses the same cell by the same name. Resolving a ``.py`` reference
  gives the script cell's index; reading it then maps it into the notebook by the protocol's
  rules, as every index read does (a shared name or id, or a unique identical source; see
  :func:`jupyter_jcli.notebook.pairing.map_py_cell`), and refuses an unreliable mapping with
  ``CELL_MAPPING_UNRELIABLE``;
- the workbench commands (``notebook read|summarize``, ``cell ...``, ``run --cell``) name the
  cells of the document the workbench edits
  (:func:`~jupyter_jcli.workbench.document_cell_names`): for a paired ``.py``
  the combined notebook, whose cells are the script's cells in the same order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from jupyter_jcli.errors import ErrorCode, JcliError

if TYPE_CHECKING:
    from jupyter_jcli.outputs.notebook import NotebookOutputs

__all__ = [
    "CELL_REF_HELP",
    "parse_cell_ref",
    "resolve_cell_ref",
    "resolve_loaded_cell",
    "resolve_named",
    "resolve_to_names",
]

CELL_REF_HELP = "a name, as `j-cli notebook overview` shows it, or a zero-based index"
"""How every cell option's help text describes a reference."""

_INDEX = re.compile(r"-?[0-9]+")
_CLOSE_NAMES = 3
_MAX_INDEX_DIGITS = 40


def parse_cell_ref(ref: str) -> int | str:
    """A reference as an index (ASCII decimal, optional leading ``-``) or else a name.

    Digits past the first :data:`_MAX_INDEX_DIGITS` are dropped (such an index is out of
    range anyway; Python refuses to convert very long digit strings).
    """
    if not _INDEX.fullmatch(ref):
        return ref
    sign = "-" if ref.startswith("-") else ""
    return int(sign + ref.lstrip("-")[:_MAX_INDEX_DIGITS])


def resolve_cell_ref(ref: str, names: Sequence[str], *, path: str) -> int:
    """The index of the cell ``ref`` addresses among cells called ``names`` (in order).

    Args:
        ref: a cell name or a zero-based index, as typed (see the module docstring).
        names: every cell's name, in document order.
        path: the file, for the error.

    Returns:
        The physical zero-based index.

    Raises:
        JcliError: ``CELL_NOT_FOUND``: for an index out of range the protocol's own error
            (:func:`jupyter_jcli.notebook.io.check_cell_index`: details ``path``,
            ``cell_index``, ``cell_count``); for a name no cell has, details ``path``,
            ``name``, ``cell_count`` (as the workbench's) and ``close_names`` (up to three
            similar names).
    """
    parsed = parse_cell_ref(ref)
    if isinstance(parsed, int):
        from jupyter_jcli.notebook.io import check_cell_index

        return check_cell_index(parsed, len(names), path=Path(path))
    for index, name in enumerate(names):
        if name == parsed:
            return index
    import difflib  # only for a name that is not found: kept off the start-up path

    close = difflib.get_close_matches(parsed, names, n=_CLOSE_NAMES)
    from jupyter_jcli.cli._document_render import cell_names

    hint = f"; did you mean {cell_names(close)}?" if close else ""
    raise JcliError(
        ErrorCode.CELL_NOT_FOUND,
        f"{path} has no cell named {parsed!r}{hint} (`j-cli notebook cells FILE` lists them).",
        {"path": path, "name": parsed, "cell_count": len(names), "close_names": close},
    )


def resolve_loaded_cell(loaded: NotebookOutputs, ref: str) -> int:
    """The index (in the file supplied) of the cell ``ref`` addresses in a loaded file.

    An index is returned as it is, without naming any cell: the protocol's read checks it
    (the same ``CELL_NOT_FOUND`` as :func:`resolve_cell_ref` gives, and as every other front
    end of the protocol gives for that index).

    Raises:
        JcliError: ``CELL_NOT_FOUND`` for a name (see :func:`resolve_cell_ref`).
    """
    parsed = parse_cell_ref(ref)
    if isinstance(parsed, int):
        return parsed
    from jupyter_jcli.workbench import saved_cell_names

    return resolve_cell_ref(ref, saved_cell_names(loaded), path=str(loaded.path))


def resolve_to_names(file: str, refs: Sequence[str]) -> list[str]:
    """Each reference as the name of the cell it addresses, in order.

    The workbench operations take names; this turns every index into one, and refuses an
    unknown reference before the operation starts. The file is read once, and only when a
    reference is given.

    Raises:
        JcliError: ``CELL_NOT_FOUND`` (see :func:`resolve_cell_ref`) and the read codes of
            :func:`~jupyter_jcli.workbench.document_cell_names`.
    """
    if not refs:
        return []
    from jupyter_jcli.workbench import document_cell_names

    path, names = document_cell_names(file)
    return [names[resolve_cell_ref(ref, names, path=path)] for ref in refs]


def resolve_named(file: str, refs: Mapping[str, str | None]) -> dict[str, str]:
    """:func:`resolve_to_names` for named slots (``{"cell": ..., "after": ...}``); slots
    given ``None`` are left out of the result."""
    given = {slot: ref for slot, ref in refs.items() if ref is not None}
    return dict(zip(given, resolve_to_names(file, list(given.values())), strict=True))
