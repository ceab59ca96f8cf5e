"""What a workbench last saw of each notebook, and what others changed in it since.

A long-lived workbench (one per ``jupyter-mcp`` server) remembers, per notebook, its cells as
its calls last saw them: per cell a key (the nbformat cell ``id``; the name where ids are
missing or repeated), the name, the rev and whether it had outputs. Its warm document cache
tells it of every version a document of its calls takes (``notebook._warm.Watcher``), so no
file is read for this: the versions are those the operations load or write anyway, and an
unchanged notebook's version is the very object seen before (nothing is compared).

- A version our own write made (an edit, undo, the outputs of our runs, cached summaries)
  becomes what we saw, silently. A read that began before our newest write ended (a call
  running beside the one that wrote) may hold an older version: it is passed over (what
  others changed stays on disk, and the next read tells it); versions are ordered by
  ``notebook._warm.ticket``.
- A version read from disk is compared with what we saw: the cells someone else (the person,
  another agent, another process) edited, added, removed, moved, renamed or whose outputs they
  cleared are kept until the next result on that notebook takes them (:meth:`Sightings.take`)
  as one short line naming at most :data:`NAMED` cells. A change to a paired ``.py`` is a
  change to the cells (the document is the pair). The first sight of a notebook says nothing.

The command line has no session (one process per command): nothing is said there.
"""

from __future__ import annotations

import os
import threading
from bisect import bisect_left
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jupyter_jcli.notebook import LoadedNotebook

__all__ = ["KINDS", "NAMED", "Sighting", "Sightings", "changes", "line", "sighting"]

NAMED = 10
"""Cells a line names at most (the rest are counted)."""
KEPT_NOTEBOOKS = 64
"""Notebooks remembered (least recently seen forgotten first)."""
KINDS = ("edited", "added", "removed", "moved", "renamed", "outputs cleared")
"""The kinds of change, in the order a line says them."""


Sighting = tuple[tuple[str, str, str, bool], ...]
"""A notebook's cells as remembered, in order: ``(key, name, rev, has outputs)`` each."""


def sighting(document: LoadedNotebook) -> Sighting:
    """The cells of ``document`` as remembered (kept with its version: computed once)."""

    def compute() -> Sighting:
        views = document.cells
        names = [view.name for view in views]
        ids = [view.cell_id or "" for view in views]
        keys = ids if "" not in ids and len(set(ids)) == len(ids) else names
        outputs = [bool(cell.get("outputs")) for cell in document.cell_dicts()]  # nbformat lists
        revs = [view.rev for view in views]
        return tuple(zip(keys, names, revs, outputs, strict=True))

    return document.memo("sighting", compute)


def changes(old: Sighting, new: Sighting) -> dict[str, list[str]]:
    """What changed from ``old`` to ``new``: kind (:data:`KINDS`) -> cell names (the new
    names; the old ones for removed cells; ``old -> new`` for renamed ones), in document order.

    Cells are matched by key, then a removed and an added cell of the same name are one cell
    (its id was renewed, e.g. by jupytext reading the ``.py``). Moved cells are those outside
    the longest run of matched cells that kept their relative order. A notebook none of whose
    cells match is ``{"replaced": [...]}``.
    """
    same = 0  # the unchanged head and tail are skipped: others usually touch a few cells
    while same < min(len(old), len(new)) and old[same] == new[same]:
        same += 1
    tail = 0
    while tail < min(len(old), len(new)) - same and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    old, new = old[same : len(old) - tail], new[same : len(new) - tail]
    before = {cell[0]: cell for cell in old}
    after = {cell[0]: cell for cell in new}
    gone = {cell[1]: cell for cell in old if cell[0] not in after}
    renewed = {}
    for cell in new:
        if cell[0] not in before and cell[1] in gone:
            renewed[cell[0]] = gone.pop(cell[1])
    matched = [
        (previous, cell)
        for cell in new
        if (previous := before.get(cell[0]) or renewed.get(cell[0])) is not None
    ]
    if old and new and not matched and not same and not tail:
        return {"replaced": [f"{len(new)} cells, none of the {len(old)} you saw"]}
    position = {cell[0]: index for index, cell in enumerate(old)}
    kept = _increasing([position[previous[0]] for previous, _ in matched])
    found = {
        "edited": [cell[1] for previous, cell in matched if previous[2] != cell[2]],
        "added": [cell[1] for cell in new if cell[0] not in before and cell[0] not in renewed],
        "removed": [cell[1] for cell in old if gone.get(cell[1]) is cell],
        "moved": [cell[1] for number, (_, cell) in enumerate(matched) if number not in kept],
        "renamed": [f"{p[1]} -> {c[1]}" for p, c in matched if p[1] != c[1]],
        "outputs cleared": [c[1] for p, c in matched if p[3] and not c[3]],
    }
    return {kind: names for kind, names in found.items() if names}


def _increasing(values: list[int]) -> set[int]:
    """The indexes into ``values`` of one longest strictly increasing subsequence
    (patience sorting, O(n log n))."""
    tails: list[int] = []  # the smallest tail value of an increasing run of each length
    ends: list[int] = []  # the index of that tail
    back = [-1] * len(values)
    for index, value in enumerate(values):
        length = bisect_left(tails, value)
        if length == len(tails):
            tails.append(value)
            ends.append(index)
        else:
            tails[length] = value
            ends[length] = index
        back[index] = ends[length - 1] if length else -1
    kept: set[int] = set()
    index = ends[-1] if ends else -1
    while index >= 0:
        kept.add(index)
        index = back[index]
    return kept


def line(found: dict[str, list[str]]) -> str:
    """The one line a result carries: ``since your last call: edited a, b; added c``, at
    most :data:`NAMED` cells named in all, the others counted (``+3 more``)."""
    if "replaced" in found:
        return f"since your last call: the notebook was replaced ({found['replaced'][0]})"
    budget = NAMED
    parts = []
    for kind in KINDS:
        names = found.get(kind)
        if not names:
            continue
        shown = names[:budget]
        budget -= len(shown)
        rest = len(names) - len(shown)
        words = ", ".join(shown) if shown else f"{rest} cells"
        parts.append(f"{kind} {words} +{rest} more" if rest and shown else f"{kind} {words}")
    return "since your last call: " + "; ".join(parts)


def _merge(into: dict[str, list[str]], found: dict[str, list[str]]) -> None:
    if "replaced" in found or "replaced" in into:
        into.clear()
        into.update(found if "replaced" in found else {"replaced": into["replaced"]})
        return
    for kind, names in found.items():
        known = into.setdefault(kind, [])
        seen = set(known)
        known.extend(name for name in names if name not in seen)


class Sightings:
    """A workbench's memory of what its calls saw of each notebook (module docstring); the
    :data:`~jupyter_jcli.notebook._warm.Watcher` of its warm cache. Thread-safe."""

    def __init__(self, kept: int = KEPT_NOTEBOOKS) -> None:
        self._lock = threading.Lock()
        self._kept = kept
        self._seen: OrderedDict[Path, Sighting] = OrderedDict()
        self._written: dict[Path, int] = {}  # the ticket of our newest write
        self._news: dict[Path, dict[str, list[str]]] = {}
        self._notebooks: dict[Path, Path] = {}  # a file a call named -> its notebook

    def __call__(self, document: LoadedNotebook, *, written: bool, ticket: int) -> None:
        """Remember the version ``document`` now holds (see the module docstring)."""
        notebook = document.notebook_path
        cells = sighting(document)
        with self._lock:
            self._notebooks[document.path] = notebook
            last = self._seen.get(notebook)
            if written:
                self._written[notebook] = ticket
            elif last is not None and last is not cells and last != cells:
                if ticket < self._written.get(notebook, 0):
                    # read before our newest write ended (by a call running beside the one
                    # that wrote): maybe older than it. What others changed stays on disk,
                    # and the next read tells it.
                    return
                found = changes(last, cells)
                if found:
                    _merge(self._news.setdefault(notebook, {}), found)
            self._seen[notebook] = cells
            self._seen.move_to_end(notebook)
            while len(self._seen) > self._kept:
                self._forget(next(iter(self._seen)))

    def take(self, path: str | os.PathLike[str]) -> str | None:
        """The line naming what others changed in the notebook at ``path`` (the file a call
        named: the ``.ipynb`` or its paired ``.py``) since this workbench last saw it, once;
        ``None`` when nothing changed or nothing was seen before."""
        with self._lock:
            notebook = self._notebooks.get(Path(os.path.abspath(path)))
            found = self._news.pop(notebook, None) if notebook is not None else None
        return line(found) if found else None

    def _forget(self, notebook: Path) -> None:
        self._seen.pop(notebook, None)
        self._written.pop(notebook, None)
        self._news.pop(notebook, None)
        for path in [path for path, target in self._notebooks.items() if target == notebook]:
            del self._notebooks[path]
