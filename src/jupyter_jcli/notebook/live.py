"""Outputs streamed into a store's live cell while it runs: the optional :class:`LiveOutputs`.

A store whose notebook someone watches as it changes (the collaborative room) offers
``live_outputs(ref, cell_id) -> LiveCell``; the workbench's execution path then, for each code
cell it runs::

    with sink:                                   # the cell shows "running", outputs cleared
        ...kernel.execute(..., on_message=sink.message)   # each iopub message as it arrives
        sink.finish(result.outputs, result.execution_count)  # the final outputs, once
    # leaving the block: the cell is idle again

and commits the final outputs through the store as for every store (that commit finds them
already there and changes nothing, so they are in the document once). A store without the
method (local, contents, memory) is not streamed to. :meth:`LiveCell.message` takes the
``msg_type`` and ``content`` of each iopub message of the run (Jupyter messaging spec,
"IOPub"): ``stream`` (merged into the cell's last stream output of that name, as JupyterLab
shows it), ``display_data``, ``execute_result``, ``error``, ``update_display_data`` (by
``transient.display_id``), ``clear_output`` (``wait``) and ``execute_input`` (the execution
count); other types are ignored.

Every method is called on the thread of the run and must not block for long (each change is
one transaction on the live document), except :meth:`LiveCell.finish`, which waits (bounded)
until the store has the outputs and is run off the event loop. A sink never raises for a gone
cell (the person deleted it): its outputs are then written nowhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from types import TracebackType

    from jupyter_jcli.notebook.store import NotebookRef

__all__ = ["LiveCell", "LiveOutputs", "live_sink"]


class LiveCell(Protocol):
    """The sink of one running cell (module docstring); a context manager.

    Entering marks the cell running (outputs cleared, no execution count) and returns the
    sink itself; leaving marks it idle. Entering raises ``NotebookError`` ``CELL_NOT_FOUND``
    when no code cell has the id.
    """

    delivered: bool
    """True once :meth:`finish` put the final outputs into the live cell (it was still
    there): they are written, whatever the commit by rev then finds (a person typing into
    the running cell changes its rev, as in JupyterLab, where the outputs land all the same)."""

    def __enter__(self) -> LiveCell: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    def message(self, msg_type: str, content: dict[str, Any]) -> None:
        """Write one iopub message's ``content`` into the cell (module docstring)."""
        ...

    def finish(self, outputs: list[dict[str, Any]], execution_count: int | None) -> None:
        """Make the cell's outputs exactly ``outputs`` (written only where they differ from
        what was streamed) and its execution count; wait (bounded) until the store has them.

        Raises:
            NotebookError: ``SERVER_UNREACHABLE`` (not acknowledged in time).
        """
        ...


@runtime_checkable
class LiveOutputs(Protocol):
    """A store that streams a running cell's outputs into its live document."""

    def live_outputs(
        self,
        ref: NotebookRef,
        cell_id: str | None,
        *,
        index: int | None = None,
        rev: str | None = None,
    ) -> LiveCell | None:
        """The sink for the code cell with nbformat id ``cell_id`` of ``ref``, or, for a
        cell without an id (nbformat < 4.5), the cell at ``index`` while its rev is ``rev``
        (``None``: nothing is streamed)."""
        ...


def live_sink(
    store: object,
    ref: NotebookRef | None,
    cell_id: str | None,
    *,
    index: int | None = None,
    rev: str | None = None,
) -> LiveCell | None:
    """``store.live_outputs(ref, cell_id, index=..., rev=...)`` when the store offers it,
    else ``None``; a sink that cannot be opened streams nothing (the run's outputs are
    committed all the same)."""
    if ref is None or not isinstance(store, LiveOutputs):
        return None
    if not cell_id and (index is None or rev is None):
        return None
    return store.live_outputs(ref, cell_id or None, index=index, rev=rev)
