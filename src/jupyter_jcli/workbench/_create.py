"""``create_notebook``: a new nbformat 4.5 notebook, its kernelspec recorded, never overwriting.

The notebook is built with nbformat's own constructors (``nbformat.v4.new_notebook`` and the
``new_*_cell`` functions, which give every cell an ``id`` as nbformat 4.5 requires), validated
against the nbformat schema, named by :mod:`jupyter_jcli.notebook.names` (every name stored in
``cell.metadata.jupyter_mcp.name``) and serialised as Jupyter writes it (``nbformat.writes``:
indent 1, sorted keys, sources as lists of lines).

The file is written atomically and without ever replacing an existing file, by the one atomic
writer (``notebook._atomic``, exclusive mode: the folder opened by descriptor under the active
confinement, a temporary file written and ``fsync``-ed there, then hard-linked to the target
name; ``link`` fails if the name exists, so a file created meanwhile by someone else is kept).
Where the filesystem cannot hard-link, the target is checked for absence just before a
rename (atomic, but with a small check-then-write window).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from jupyter_jcli.errors import (
    CELL_TYPES,
    ErrorCode,
    JcliError,
    KernelError,
    NotebookError,
    UsageError,
)
from jupyter_jcli.notebook.document import Document
from jupyter_jcli.notebook.io import create_file
from jupyter_jcli.notebook.names import assign_names, set_stored_name, validate_name
from jupyter_jcli.notebook.store import NotebookRef, NotebookStore, open_notebook
from jupyter_jcli.notebook.stores import active_choice
from jupyter_jcli.workbench._envelope import ok_fields
from jupyter_jcli.workbench._mutations import CellRef

__all__ = ["CreateOutcome", "KernelspecEntry", "NewCell", "create_notebook", "list_kernelspecs"]

_NEW_CELL_KEYS = frozenset({"source", "cell_type", "name"})


@dataclass(frozen=True)
class NewCell:
    """One initial cell of :func:`create_notebook`.

    Attributes:
        source: the cell's source text.
        cell_type: ``"code"``, ``"markdown"`` or ``"raw"``.
        name: its name (kebab-case, unique in the notebook); default derived from the source
            (rules of :mod:`jupyter_jcli.notebook.names`).
    """

    source: str
    cell_type: str = "code"
    name: str | None = None


@dataclass(frozen=True)
class CreateOutcome:
    """What :func:`create_notebook` wrote.

    Attributes:
        path: the new notebook (absolute).
        kernelspec: the notebook's ``metadata.kernelspec`` (``name``, ``display_name``,
            ``language``).
        language_info: the notebook's ``metadata.language_info`` (``name``).
        nbformat: ``(major, minor)`` of the file, ``(4, 5)``.
        cells: the cells written (index, name, type, rev), in order.
        structure_rev: the notebook's structure rev (``expected_rev`` for a positional add).
    """

    path: Path
    kernelspec: dict[str, str]
    language_info: dict[str, str]
    nbformat: tuple[int, int]
    cells: tuple[CellRef, ...]
    structure_rev: str

    def to_dict(self) -> dict[str, Any]:
        """The JSON document: ``schema_version``, ``status``, ``operation``, the fields."""
        return {
            **ok_fields("create_notebook", self.path),
            "kernelspec": dict(self.kernelspec),
            "language_info": dict(self.language_info),
            "nbformat": self.nbformat[0],
            "nbformat_minor": self.nbformat[1],
            "structure_rev": self.structure_rev,
            "cell_count": len(self.cells),
            "cells": [cell.to_dict() for cell in self.cells],
        }


def create_notebook(
    path: str | os.PathLike[str],
    *,
    cells: Sequence[NewCell | Mapping[str, Any]] = (),
    kernelspec_name: str = "python3",
    cache_dir: Path | None = None,
) -> CreateOutcome:
    """Create a new nbformat 4.5 notebook with optional initial cells; never overwrite.

    ``metadata.kernelspec`` is taken from the installed kernelspec (``jupyter_client``'s
    ``KernelSpecManager``: its ``display_name`` and ``language``), ``metadata.language_info``
    holds the language name (the kernel fills in the rest when it runs, as in Jupyter). The
    result is validated against the nbformat schema before it is written.

    Args:
        path: the new ``.ipynb`` file; its folder must exist.
        cells: initial cells, in order: :class:`NewCell` or mappings with ``source`` and
            optional ``cell_type`` (default ``"code"``) and ``name``.
        kernelspec_name: an installed kernelspec (see ``jupyter kernelspec list``).
        cache_dir: snapshot cache base folder of the document model (default
            ``$JUPYTER_JCLI_CACHE_DIR`` or the user cache); nothing is written there.

    Returns:
        The :class:`CreateOutcome`.

    Raises:
        NotebookError: ``FILE_TYPE_UNSUPPORTED`` (suffix not ``.ipynb``), ``FILE_NOT_FOUND``
            (the parent folder is missing), ``FILE_EXISTS`` (something is already at
            ``path``; in another store than the local files: the store's ``FILE_EXISTS``),
            ``INVALID_NAME``, ``NAME_CONFLICT`` (two initial cells with one name),
            ``INVALID_CELL_TYPE``, ``NOTEBOOK_WRITE_FAILED``.
        KernelError: ``KERNELSPEC_NOT_FOUND`` (details ``kernelspec``, ``installed``).
        UsageError: ``USAGE_ERROR`` for a cell mapping without a string ``source`` or with
            unknown keys.
    """
    target = Path(os.path.abspath(path))
    in_store = _store_of(path)
    if in_store is None:
        _check_target(target)
    elif target.suffix.lower() != ".ipynb":
        _check_target(target)  # FILE_TYPE_UNSUPPORTED
    specs = [_as_new_cell(cell, number) for number, cell in enumerate(cells)]
    kernelspec = _kernelspec(kernelspec_name)
    notebook = _build(specs, kernelspec)
    if in_store is None:
        _write_new(target, notebook)
        document = Document.load(target, cache_dir=cache_dir)
    else:  # another store than the local files (the active --store): it creates it
        store, ref = in_store
        store.create(ref, notebook)
        document = open_notebook(ref, store=store)
    return CreateOutcome(
        path=document.path,
        kernelspec=dict(kernelspec),
        language_info={"name": kernelspec["language"]},
        nbformat=(4, 5),
        cells=tuple(CellRef.of(view) for view in document.cells),
        structure_rev=document.structure_rev,
    )


def _store_of(path: str | os.PathLike[str]) -> tuple[NotebookStore, NotebookRef] | None:
    """The store and ref ``path`` is created in when the active store choice
    (``notebook.stores``) opens it elsewhere than in a local file, else ``None``."""
    choice = active_choice()
    if choice is None or choice.local_only:
        return None
    store, ref = choice.ref_for(path)
    return None if store.kind == "local" else (store, ref)


def _check_target(target: Path) -> None:
    if target.suffix.lower() != ".ipynb":
        raise NotebookError(
            ErrorCode.FILE_TYPE_UNSUPPORTED,
            f"{target} is not a notebook name: a new notebook needs the .ipynb suffix.",
            {"path": str(target), "suffix": target.suffix},
        )
    if not target.parent.is_dir():
        raise NotebookError(
            ErrorCode.FILE_NOT_FOUND,
            f"No folder {target.parent} to create {target.name} in.",
            {"path": str(target), "folder": str(target.parent)},
        )
    if os.path.lexists(target):
        raise _exists(target)


def _exists(target: Path) -> NotebookError:
    return NotebookError(
        ErrorCode.FILE_EXISTS,
        f"{target} already exists; creating a notebook never overwrites (edit it or pick another "
        "name).",
        {"path": str(target)},
    )


def _as_new_cell(cell: NewCell | Mapping[str, Any], number: int) -> NewCell:
    if isinstance(cell, NewCell):
        spec = cell
    else:
        unknown = sorted(str(key) for key in cell if key not in _NEW_CELL_KEYS)
        source = cell.get("source")
        cell_type = cell.get("cell_type", "code")
        name = cell.get("name")
        if unknown or not isinstance(source, str):
            raise UsageError(
                f"Initial cell {number} needs a string 'source' and only the keys "
                f"{', '.join(sorted(_NEW_CELL_KEYS))}.",
                {"cell": number, "unknown_keys": unknown},
            )
        if not isinstance(cell_type, str) or not (name is None or isinstance(name, str)):
            raise UsageError(
                f"Initial cell {number}: 'cell_type' and 'name' must be strings.",
                {"cell": number},
            )
        spec = NewCell(source=source, cell_type=cell_type, name=name)
    if spec.cell_type not in CELL_TYPES:
        raise NotebookError(
            ErrorCode.INVALID_CELL_TYPE,
            f"{spec.cell_type!r} is not a cell type; use one of {', '.join(CELL_TYPES)}.",
            {"cell_type": spec.cell_type, "allowed": list(CELL_TYPES), "cell": number},
        )
    if spec.name is not None:
        validate_name(spec.name)
    return spec


class KernelspecEntry(TypedDict):
    """One installed kernelspec: its ``name`` (what ``--kernel`` and a notebook's
    ``metadata.kernelspec.name`` use), ``display_name``, ``language`` and ``resource_dir``
    (the folder holding its ``kernel.json``)."""

    name: str
    display_name: str
    language: str
    resource_dir: str


def list_kernelspecs() -> list[KernelspecEntry]:
    """The kernelspecs ``jupyter_client`` finds on this machine, sorted by name
    (``KernelSpecManager.get_all_specs``, the search path of ``jupyter kernelspec list``; a
    kernelspec whose ``kernel.json`` cannot be read is left out, with a warning on stderr)."""
    from jupyter_client.kernelspec import KernelSpecManager

    specs: Mapping[str, Any] = KernelSpecManager().get_all_specs()
    entries: list[KernelspecEntry] = []
    for name in sorted(specs):
        found: Mapping[str, Any] = specs[name] if isinstance(specs[name], Mapping) else {}
        raw = found.get("spec")
        spec: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        entries.append(
            {
                "name": name,
                "display_name": str(spec.get("display_name") or name),
                "language": str(spec.get("language") or ""),
                "resource_dir": str(found.get("resource_dir") or ""),
            }
        )
    return entries


def _kernelspec(name: str) -> dict[str, str]:
    """The ``metadata.kernelspec`` of a new notebook: the installed kernelspec ``name``'s
    ``display_name`` and ``language`` (:func:`list_kernelspecs`; names compare lowercased,
    as ``KernelSpecManager.get_kernel_spec`` finds them), ``name`` as given."""
    entries = list_kernelspecs()
    for entry in entries:
        if entry["name"] == name.lower():
            return {"name": name, "display_name": entry["display_name"],
                    "language": entry["language"]}  # fmt: skip
    installed = [entry["name"] for entry in entries]
    raise KernelError(
        ErrorCode.KERNELSPEC_NOT_FOUND,
        f"kernelspec {name!r} is not installed; use one of: {', '.join(installed) or '(none)'}",
        {"kernelspec": name, "installed": installed},
    )


def _build(specs: Sequence[NewCell], kernelspec: Mapping[str, str]) -> dict[str, Any]:
    import nbformat
    from nbformat import v4

    makers = {
        "code": v4.new_code_cell,
        "markdown": v4.new_markdown_cell,
        "raw": v4.new_raw_cell,
    }
    cells: list[dict[str, Any]] = []
    taken: dict[str, int] = {}
    for number, spec in enumerate(specs):
        # Plain dicts: a NotebookNode copies dict values on assignment, so nested edits of
        # the metadata would be lost.
        made = makers[spec.cell_type](source=spec.source)  # type: ignore[no-untyped-call]
        cell: dict[str, Any] = _plain(made)
        if spec.name is not None:
            if spec.name in taken:
                raise NotebookError(
                    ErrorCode.NAME_CONFLICT,
                    f"Initial cells {taken[spec.name]} and {number} are both named {spec.name!r}.",
                    {"name": spec.name, "index": taken[spec.name], "other_index": number},
                )
            taken[spec.name] = number
            set_stored_name(cell, spec.name)
        cells.append(cell)
    for cell, name in zip(cells, assign_names(cells), strict=True):
        set_stored_name(cell, name)
    notebook: dict[str, Any] = _plain(v4.new_notebook())  # type: ignore[no-untyped-call]
    notebook["cells"] = cells
    notebook["metadata"] = {
        "kernelspec": dict(kernelspec),
        "language_info": {"name": kernelspec["language"]},
    }
    notebook["nbformat"], notebook["nbformat_minor"] = 4, 5
    try:
        nbformat.validate(notebook)
    except nbformat.ValidationError as err:  # our own construction is wrong: a bug
        raise JcliError(
            ErrorCode.INTERNAL_ERROR,
            f"The new notebook does not validate against the nbformat schema: {err.message}",
        ) from err
    return notebook


def _plain(value: Any) -> Any:
    """``value`` with every mapping (such as nbformat's ``NotebookNode``) as a plain dict."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _write_new(target: Path, notebook: dict[str, Any]) -> None:
    """Write ``notebook`` to ``target`` atomically, refusing if ``target`` exists.

    Through the one atomic create (``notebook.io.create_file``).
    """
    import nbformat

    node = nbformat.from_dict(notebook)  # type: ignore[no-untyped-call]
    text: str = nbformat.writes(node)  # type: ignore[no-untyped-call]
    data = (text if text.endswith("\n") else text + "\n").encode("utf-8", "surrogatepass")
    try:
        create_file(target, data)
    except FileExistsError:
        raise _exists(target) from None
