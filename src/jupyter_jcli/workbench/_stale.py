"""Which cells a mutation made stale: the graphs before and after it, compared.

The rule (analysis issue, section 2, applied to a whole mutation), with cells matched by
name (a rename maps the old name to the new one):

1. *edited*: cells present before and after whose rev changed (the target of an update, and
   any cell an outside edit changed when the mutation applied on top of it);
2. *rewired*: code cells present before and after whose set of parents changed (the former
   dependents of a removed cell, the cells under a moved cell or under a new cell that now
   read from it, a cell moved above its parent, the dependents a changed cell lost);
3. the stale set is :func:`jupyter_jcli.analysis.stale_after_edit` over the graph after the
   mutation, started from *edited* and *rewired* (their transitive dependents, then the
   replay of the nearest writer above any stale cell that both reads and writes a name);
4. plus every new code cell (added, or brought in by an outside edit): it never ran. A new
   cell's own read-and-write does not replay its writer (it has never been applied), but a
   rewired dependent's does.

So: an update stales ``stale_after_edit`` of the edited cell (a rename alone or a change to a
Markdown cell stales nothing, and a code cell turned Markdown stales its former dependents);
an add stales the new cell and its dependents; a remove stales the removed cell's former
dependents and theirs; a move stales the cells whose parents changed and their dependents.
Markdown and raw cells are never stale.
"""

from __future__ import annotations

from collections.abc import Mapping

from jupyter_jcli.analysis import CellNode, NotebookGraph, stale_after_edit

__all__ = ["stale_between"]


def stale_between(
    before: NotebookGraph,
    after: NotebookGraph,
    before_revs: Mapping[str, str],
    after_revs: Mapping[str, str],
) -> list[str]:
    """Names of the cells stale after a mutation, in document order (module rule).

    Args:
        before: the graph before the mutation, keyed by the names the cells have after it
            (a renamed cell under its new name).
        after: the graph after the mutation.
        before_revs: rev of every cell before, by the same keys as ``before``.
        after_revs: rev of every cell after, by name.

    Returns:
        Names of stale code cells, in document order.
    """
    # Graphs built incrementally share every node the edit could not change: a node of
    # ``after`` that is the very node of ``before`` at the same index, with the same keys in
    # the same order, has the same parents (same indexes, same keys), so only the other
    # nodes are compared. Cost in proportion to the edit, not to the notebook.
    same_order = len(before.cells) == len(after.cells) and all(
        old is new or old.key == new.key for old, new in zip(before.cells, after.cells, strict=True)
    )
    seeds: list[str] = []
    new: set[str] = set()
    for node in after.cells:
        key = node.key
        if key not in before_revs:
            if node.cell_type == "code":
                new.add(key)
            continue
        if before_revs[key] != after_revs.get(key):
            seeds.append(key)
            continue
        if (same_order and before.cells[node.index] is node) or node.cell_type != "code":
            continue
        # ``key`` is in ``before_revs``, so in ``before`` (same keys).
        if _parent_keys(after, node) != _parent_keys(before, before.node(key)):
            seeds.append(key)
    stale = set(stale_after_edit(after, seeds, before=before)) | new
    return [node.key for node in after.cells if node.key in stale]


def _parent_keys(graph: NotebookGraph, node: CellNode) -> frozenset[str]:
    return frozenset(graph.cells[p].key for p in node.parents)
