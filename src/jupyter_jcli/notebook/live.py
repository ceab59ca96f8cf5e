"""Outputs streamed into a store's live cell while it runs: the optional :class:`LiveOutputs`.

A store whose notebook someone watches as it changes (the collaborative room) may offer
``live_outputs(ref, cell_id) -> LiveOutputs | None``; the workbench's execution path then
feeds each output of a running cell to that sink as the kernel's iopub messages arrive
(translated by ``kernels._translate``; Jupyter messaging spec, "IOPub"), and commits the
final outputs through the store once, as for every store (the sink's :meth:`finish` lets the
store drop what it streamed, so they are in the document once). A store without the method
(local, contents, memory) is not streamed to. The method names follow the messages:

=====================  ==================================================================
:meth:`~LiveOutputs.stream`          a ``stream`` message (name ``stdout``/``stderr``, text)
:meth:`~LiveOutputs.display`         ``display_data`` or ``execute_result`` (whole output)
:meth:`~LiveOutputs.update_display`  ``update_display_data`` (``transient.display_id``)
:meth:`~LiveOutputs.clear_output`    ``clear_output`` (``wait``)
:meth:`~LiveOutputs.execution_count` ``execute_input``'s ``execution_count``
:meth:`~LiveOutputs.finish`          the cell ended (``ok``, ``error``, ``aborted`` ...)
=====================  ==================================================================

Today the workbench feeds what the kernel layer's ``on_output`` surfaces: :meth:`stream`,
:meth:`display` (an ``update_display_data`` arrives there as a ``display_data``; a
``clear_output`` is not surfaced), then :meth:`execution_count` and :meth:`finish`. A sink
implements all six, so feeding the other two needs no change of this protocol.

Every method is called on the event loop of the run; a sink must not block for long (the room
applies each change in its own transaction) and must never raise for a gone cell (the person
deleted it: the outputs are then written nowhere).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from jupyter_jcli.notebook.store import NotebookRef

__all__ = ["LiveCell", "LiveOutputs", "live_sink"]


class LiveCell(Protocol):
    """The sink of one running cell (module docstring)."""

    def stream(self, name: str, text: str) -> None:
        """Append ``text`` to the cell's ``name`` stream (merged into its last stream
        output of that name, as JupyterLab shows it)."""
        ...

    def display(self, output: dict[str, Any]) -> None:
        """Add an nbformat ``display_data`` or ``execute_result`` output."""
        ...

    def update_display(self, display_id: str, output: dict[str, Any]) -> None:
        """Replace the outputs shown for ``display_id`` with ``output``'s data."""
        ...

    def clear_output(self, wait: bool) -> None:
        """Clear the cell's outputs (``wait``: at the next output)."""
        ...

    def execution_count(self, count: int | None) -> None:
        """The cell's execution count, as the kernel gave it."""
        ...

    def finish(self, status: str) -> None:
        """The cell's run ended with ``status``; the final outputs come in the commit."""
        ...


@runtime_checkable
class LiveOutputs(Protocol):
    """A store that streams a running cell's outputs into its live document."""

    def live_outputs(self, ref: NotebookRef, cell_id: str) -> LiveCell | None:
        """The sink for the cell with nbformat id ``cell_id`` of ``ref`` (``None``: the
        cell is gone or nobody watches; nothing is streamed)."""
        ...


def live_sink(store: object, ref: NotebookRef | None, cell_id: str | None) -> LiveCell | None:
    """``store.live_outputs(ref, cell_id)`` when the store offers it, else ``None``; a sink
    that cannot be opened streams nothing (the run's outputs are committed all the same)."""
    if ref is None or not cell_id or not isinstance(store, LiveOutputs):
        return None
    return store.live_outputs(ref, cell_id)
