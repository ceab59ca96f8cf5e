"""What the model reads of a ``jupyter-mcp`` result: its text content, cut to what it acts on.

Hosts show the model a tool result's text content, not its ``structuredContent``; the
structured content stays the complete record (every field of the operation's document, as
``-j`` prints it), and the text is a compact JSON view of it made by :func:`model_view`:
names, indexes, revs, statuses, what went stale, condensed outputs, errors and the hints
that lead to everything left out. What the view drops is bookkeeping the model does not
act on, or facts the rest of the view already states:

- fields whose value is ``null``, ``false``, ``0``, ``""``, ``[]`` or ``{}`` (a position,
  ``index``, ``output_index``, ``start``..., stays even when 0; ``ok: false`` stays);
- ``schema_version`` and ``operation`` (the model made the call); ``path`` (it named the
  notebook), and ``notebook_path`` unless it differs from ``path`` (a paired ``.py``);
- in ``kernel``: the notebook path, pid and working folder, and the epoch when the result
  gives it already;
- per cell: ``outputs`` becomes its condensed ``text`` alone (the ``parts`` bookkeeping, the
  budget and the image entries, whose facts the image line of the text already gives, stay
  in the structured content), ``output_count`` when the text lists the outputs,
  ``duration_s``, ``written`` (``not_written_reason`` says when not), ``execution_count``,
  ``source_omitted_characters`` and ``truncated`` (the cut markers say both),
  ``name_stored``, ``cell_type`` when it is ``code`` (so a cell without it is code), a tldr
  that only repeats the first line;
- a list's ``<key>_count`` when the list is whole (a cut one keeps it, beside the
  ``notice`` naming the rest: :mod:`jupyter_jcli.workbench._cell_lists`), ``skipped_count``
  when ``cells`` lists every skipped cell;
- a result's closing lists that repeat what precedes them: executions' ``written`` and
  ``image_count``, ``run_stale``'s ``plan`` when it is what ran, ``read_cells``'
  ``omitted_cells`` (its ``next_call`` reads them; the whole count, ``omitted_cells_count``,
  stays as ``omitted``), budgets
  and character counts;
- an edit's ``previous_cell``, ``previous_structure_rev``, ``changed`` when it is just the
  cell, ``written`` when it is just the notebook;
- ``execute_code``'s ``summary`` becomes its condensed ``text``, as ``outputs``;
- ``inspect_variable``'s column schema as one ``name: dtype`` list, ``repr_chars`` when the
  repr is whole, and its epoch.

Error results are not touched (their text is the error JSON, see
:mod:`jupyter_jcli.mcp._results`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jupyter_jcli.workbench import compact

__all__ = ["model_view"]

_DROP = frozenset({"schema_version", "operation", "image_count", "budget", "characters"})
_KERNEL_DROP = frozenset({"notebook_path", "pid", "cwd"})
_CELL_DROP = frozenset(
    {
        "duration_s",
        "written",
        "execution_count",
        "source_omitted_characters",
        "truncated",
        "name_stored",
    }
)


def model_view(document: Mapping[str, Any]) -> dict[str, Any]:
    """The compact view of a success document that becomes a result's text (see above).

    Args:
        document: a workbench operation's JSON document (after its images were lifted).

    Returns:
        A new JSON object; ``document`` is not modified.
    """
    view: dict[str, Any] = {
        k: v for k, v in document.items() if k not in _DROP and not _whole_count(document, k)
    }
    path = view.pop("path", None)
    if view.get("notebook_path") == path:
        view.pop("notebook_path", None)
    epoch = view.get("epoch")
    if isinstance(view.get("kernel"), Mapping):
        view["kernel"] = _kernel(view["kernel"], epoch)
    operation = document.get("operation")
    if isinstance(view.get("cells"), list):
        view["cells"] = [_cell(c) if isinstance(c, Mapping) else c for c in view["cells"]]
    if operation == "read_cells":
        view.pop("epoch", None)
        omitted = view.pop("omitted_cells", None)
        count = view.pop("omitted_cells_count", None)
        if isinstance(omitted, list):
            view["omitted"] = count if isinstance(count, int) else len(omitted)
    elif operation in ("execute_cells", "run_stale"):
        view.pop("written", None)
        ran = [cell.get("name") for cell in document.get("cells", ()) if isinstance(cell, Mapping)]
        if not document.get("dry_run") and view.get("plan") == ran:
            view.pop("plan")
    elif operation == "inspect_variable":
        _variable(view)
    elif operation == "execute_code" and isinstance(view.get("summary"), Mapping):
        view["outputs"] = view.pop("summary").get("text", "")
    elif isinstance(view.get("cell"), Mapping) or "previous_structure_rev" in view:
        _edit(view, path)
    if isinstance(view.get("kernelspec"), Mapping):  # create_notebook
        view["kernelspec"] = view["kernelspec"].get("name")
        for key in ("language_info", "nbformat", "nbformat_minor"):
            view.pop(key, None)
    pruned: dict[str, Any] = compact(view)
    return pruned


def _whole_count(document: Mapping[str, Any], key: str) -> bool:
    """``key`` is the ``<list>_count`` of a list the document holds whole (the list says it):
    ``skipped_count`` counts the ``skipped`` entries of ``cells``, ``ran_count`` the others."""
    count = document.get(key)
    if not key.endswith("_count") or not isinstance(count, int):
        return False
    if key in ("ran_count", "skipped_count") and isinstance(document.get("cells"), list):
        listed = [c for c in document["cells"] if isinstance(c, Mapping)]
        skipped = sum(1 for c in listed if c.get("status") == "skipped")
        return (skipped if key == "skipped_count" else len(listed) - skipped) == count
    items = document.get(key.removesuffix("_count"))
    return isinstance(items, list) and len(items) == count


def _kernel(kernel: Mapping[str, Any], epoch: Any) -> dict[str, Any]:
    view = {k: v for k, v in kernel.items() if k not in _KERNEL_DROP}
    if epoch is not None and view.get("epoch") == epoch:
        view.pop("epoch")
    return view


def _cell(cell: Mapping[str, Any]) -> dict[str, Any]:
    view = {k: v for k, v in cell.items() if k not in _CELL_DROP}
    outputs = view.get("outputs")
    if isinstance(outputs, Mapping):
        view["outputs"] = outputs.get("text", "")
        view.pop("output_count", None)
    if view.get("cell_type") == "code":
        view.pop("cell_type")
    first = view.get("first_line")
    if isinstance(first, str) and view.get("tldr") == f"* {first}":
        view.pop("tldr")
    for key in ("cell", "previous_cell", "removed"):  # create/undo: nested cell refs
        if isinstance(view.get(key), Mapping):
            view[key] = _cell(view[key])
    return view


def _edit(view: dict[str, Any], path: Any) -> None:
    view.pop("previous_cell", None)
    view.pop("previous_structure_rev", None)
    cell = view.get("cell")
    if isinstance(cell, Mapping):
        view["cell"] = _cell(cell)
        if view.get("changed") == [cell.get("name")]:
            view.pop("changed")
    if isinstance(view.get("removed"), Mapping):
        view["removed"] = _cell(view["removed"])
        if view.get("changed") == [view["removed"].get("name")]:
            view.pop("changed")
    if view.get("written") == [path]:
        view.pop("written")


def _variable(view: dict[str, Any]) -> None:
    view.pop("epoch", None)
    schema = view.get("schema")
    if isinstance(schema, list):
        view["schema"] = [
            f"{entry.get('name')}: {entry.get('dtype')}" if isinstance(entry, Mapping) else entry
            for entry in schema
        ]
        if view.get("schema_total") == len(schema):
            view.pop("schema_total")
    repr_text = view.get("repr")
    if isinstance(repr_text, str) and view.get("repr_chars") == len(repr_text):
        view.pop("repr_chars")
