"""Lint findings over an analysed notebook: what a person should look at, never an error."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypedDict, cast, get_args

from jupyter_jcli._json import json_fields
from jupyter_jcli.analysis._types import CellEffects

__all__ = ["Finding", "FindingDict", "FindingKind", "lint_cell", "lint_cells"]

FindingKind = Literal[
    "syntax_error",
    "unresolved_name",
    "defined_below",
    "output_history",
    "wildcard_writer",
    "opaque_cell",
    "too_large",
]
"""The kinds of lint finding, in the order they are reported for one cell."""

_ORDER: tuple[FindingKind, ...] = get_args(FindingKind)


class FindingDict(TypedDict):
    """JSON shape of a :class:`Finding`."""

    kind: str
    cell: str
    index: int
    names: list[str]
    message: str
    line: int | None


@dataclass(frozen=True, slots=True)
class Finding:
    """One lint finding about one cell.

    Attributes:
        kind: see :data:`FindingKind`.
        cell: the cell's key (its name).
        index: the cell's 0-based position in the notebook.
        names: the names concerned, sorted (empty for syntax errors and opaque cells).
        message: one sentence for a person.
        line: 1-based line in the cell, for syntax errors; else ``None``.
    """

    kind: FindingKind
    cell: str
    index: int
    names: tuple[str, ...]
    message: str
    line: int | None = None

    def to_dict(self) -> FindingDict:
        """The finding as JSON-ready data."""
        return cast("FindingDict", json_fields(self))


def _join(names: Sequence[str]) -> str:
    return ", ".join(names)


def lint_cells(
    keys: Sequence[str],
    effects: Sequence[CellEffects],
    unresolved: Sequence[frozenset[str]],
    writers: Mapping[str, list[int]],
) -> list[Finding]:
    """Findings for every cell, in document order and :data:`FindingKind` order per cell.

    Args:
        keys: cell keys by index.
        effects: cell effects by index.
        unresolved: per cell, the names it reads that no cell above writes (not builtins,
            no wildcard writer above).
        writers: for each name, the ascending indexes of the cells that bind it (define it,
            or call a function that binds it through ``global``); a cell that only changes
            it in place does not make it ``defined_below``.
    """
    found: list[Finding] = []
    for i, eff in enumerate(effects):
        found.extend(lint_cell(keys, i, eff, unresolved[i], writers))
    return found


def lint_cell(
    keys: Sequence[str],
    i: int,
    eff: CellEffects,
    unresolved: frozenset[str],
    writers: Mapping[str, list[int]],
) -> list[Finding]:
    """The findings of cell ``i`` in :data:`FindingKind` order (arguments as in
    :func:`lint_cells`, for one cell; ``writers`` needs only the names in ``unresolved``)."""
    if not (
        unresolved
        or eff.syntax_error
        or eff.history_refs
        or eff.wildcard_writers
        or eff.opaque_magics
        or eff.too_large
    ):
        return []
    key = keys[i]
    cell: dict[FindingKind, Finding] = {}
    err = eff.syntax_error
    if err is not None:
        msg = f"syntax error at line {err.line}, column {err.col}: {err.message}"
        cell["syntax_error"] = Finding("syntax_error", key, i, (), msg, err.line)
    nowhere: list[str] = []
    below: list[str] = []
    first_below: list[str] = []
    for name in sorted(unresolved):
        where = writers.get(name, [])
        pos = bisect_right(where, i)
        if pos < len(where):
            below.append(name)
            first_below.append(f"{name} in {keys[where[pos]]}")
        else:
            nowhere.append(name)
    if nowhere:
        msg = f"reads {_join(nowhere)}, which no cell binds and is not a builtin"
        cell["unresolved_name"] = Finding("unresolved_name", key, i, tuple(nowhere), msg)
    if below:
        msg = f"reads names bound only in a later cell: {_join(first_below)}"
        cell["defined_below"] = Finding("defined_below", key, i, tuple(below), msg)
    if eff.history_refs:
        names = tuple(sorted(eff.history_refs))
        msg = f"reads output history ({_join(names)}), which depends on execution order"
        cell["output_history"] = Finding("output_history", key, i, names, msg)
    if eff.wildcard_writers:
        msg = f"may bind names analysis cannot see: {_join(eff.wildcard_writers)}"
        cell["wildcard_writer"] = Finding("wildcard_writer", key, i, (), msg)
    if eff.opaque_magics:
        magics = _join([f"%%{m}" for m in eff.opaque_magics])
        msg = f"runs code that is not Python ({magics}); its effects are not analysed"
        cell["opaque_cell"] = Finding("opaque_cell", key, i, (), msg)
    if eff.too_large:
        msg = (
            "too large to analyse: it may write any name and what it reads is unknown, "
            "so edits above it do not make it stale"
        )
        cell["too_large"] = Finding("too_large", key, i, (), msg)
    return [cell[k] for k in _ORDER if k in cell]
