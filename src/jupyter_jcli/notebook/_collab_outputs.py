"""Outputs streamed into a live cell of a collaborative room while it runs.

:meth:`CollabStore.live_outputs(ref, cell_id) <jupyter_jcli.notebook._collab_store.CollabStore>`
gives a :class:`LiveRoomCell` sink (the ``notebook.live.LiveCell`` protocol) for the code
cell whose nbformat ``id`` is ``cell_id``. The execution path feeds it the ``content`` of each
iopub message of the run (Jupyter messaging spec, "IOPub"), as JupyterLab's output area
writes them into the shared cell (``@jupyter/ydoc`` ``YCodeCell``)::

    with store.live_outputs(ref, cell_id) as sink:   # execution_state "running", outputs
        for msg in iopub:                            # cleared, execution_count None
            sink.message(msg["header"]["msg_type"], msg["content"])
        sink.finish(final_outputs, execution_count)  # exactly these outputs, once
    # leaving the block: execution_state "idle"

``message`` understands ``stream`` (appended to the cell's last output when that is a stream
of the same ``name``, as one text, else a new stream output), ``display_data``,
``execute_result`` and ``error`` (appended; ``transient.display_id`` remembered),
``update_display_data`` (every output shown with that ``display_id`` replaced in place),
``clear_output`` (now, or with ``wait: true`` just before the next output) and
``execute_input`` (its ``execution_count``); other types are ignored. :meth:`finish` makes the
cell's outputs exactly the final list (written once: nothing is appended twice) and its
``execution_count``; the caller then commits nothing more for them.

Each write is one transaction on the room's document; the room's server forwards it to every
person at once. The cell is found by its ``id`` at every write: when a person deleted it, the
sink stops writing (:attr:`LiveRoomCell.lost` becomes true) and nothing lands in another
cell. ``finish`` waits (bounded) until the room's server has the outputs.
"""

from __future__ import annotations

import copy
from types import TracebackType
from typing import TYPE_CHECKING, Any

from jupyter_jcli.errors import ErrorCode, NotebookError

if TYPE_CHECKING:
    from jupyter_jcli.notebook._collab_room import Room

__all__ = ["LiveRoomCell", "same_outputs", "youtput"]


def youtput(output: dict[str, Any]) -> Any:
    """An nbformat output as a shared map (``stream`` text as a shared text, numbers as
    floats, the kernel protocol's ``transient`` left out), as ``@jupyter/ydoc`` makes it."""
    from jupyter_ydoc.utils import cast_all
    from pycrdt import Map, Text

    made = {key: copy.deepcopy(value) for key, value in output.items() if key != "transient"}
    cast_all(made, int, float)
    if made.get("output_type") == "stream":
        text = made.get("text", "")
        made["text"] = Text(text if isinstance(text, str) else "".join(text))
    return Map(made)


def _plain(youtput_: Any) -> dict[str, Any]:
    from jupyter_ydoc.utils import cast_all

    value = youtput_.to_py() if hasattr(youtput_, "to_py") else copy.deepcopy(youtput_)
    cast_all(value, float, int)
    result: dict[str, Any] = value
    return result


class LiveRoomCell:
    """The sink of one running cell's outputs (module docstring). Use it as a context
    manager.

    Args:
        room: the open room.
        cell_id: the nbformat ``id`` of the code cell.
        where: the notebook, for errors.

    Raises:
        NotebookError: ``CELL_NOT_FOUND`` on entry when no live code cell has that id.
    """

    def __init__(self, room: Room, cell_id: str, *, where: str) -> None:
        self._room = room
        self.cell_id = cell_id
        self._where = where
        self.lost = False
        """True once the cell is gone from the live document (a person deleted it)."""
        self.delivered = False
        """True once :meth:`finish` put the final outputs into the live cell."""
        self._ids: list[str | None] = []
        self._clear_pending = False
        self._index_hint = 0

    # ------------------------------------------------------------------ life

    def __enter__(self) -> LiveRoomCell:
        with self._room.lock:
            ycell = self._find()
            if ycell is None or ycell.get("cell_type") != "code":
                raise NotebookError(
                    ErrorCode.CELL_NOT_FOUND,
                    f"No code cell with id {self.cell_id} in {self._where}.",
                    {"path": self._where, "cell_id": self.cell_id},
                )
            self.lost = False
            with self._room.doc.transaction(origin="jupyter-jcli"):
                ycell["execution_state"] = "running"
                ycell["execution_count"] = None
                ycell["outputs"].clear()
        self._ids = []
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._write(lambda ycell: ycell.__setitem__("execution_state", "idle"))

    # ------------------------------------------------------------------ messages

    def message(self, msg_type: str, content: dict[str, Any]) -> None:
        """Write one iopub message's ``content`` into the cell (module docstring)."""
        if msg_type == "stream":
            self._stream(str(content.get("name", "stdout")), _text(content.get("text", "")))
        elif msg_type in ("display_data", "execute_result", "error"):
            output = {"output_type": msg_type}
            output.update({k: v for k, v in content.items() if k != "transient"})
            display_id = (content.get("transient") or {}).get("display_id")
            self._append(output, display_id)
        elif msg_type == "update_display_data":
            self._update_display(content)
        elif msg_type == "clear_output":
            if content.get("wait"):
                self._clear_pending = True
            else:
                self._clear()
        elif msg_type == "execute_input" and content.get("execution_count") is not None:
            self.execution_count(int(content["execution_count"]))

    def execution_count(self, count: int | None) -> None:
        """Set the cell's execution count."""
        value = float(count) if count is not None else None
        self._write(lambda ycell: ycell.__setitem__("execution_count", value))

    def finish(self, outputs: list[dict[str, Any]], execution_count: int | None) -> None:
        """Make the cell's outputs exactly ``outputs`` (replaced only where they differ from
        what was streamed) and its ``execution_count``; wait (bounded) until the room's server
        has them.

        Raises:
            NotebookError: ``SERVER_UNREACHABLE`` (not acknowledged in time).
        """

        def final(ycell: Any) -> None:
            youtputs = ycell["outputs"]
            if not same_outputs(youtputs, outputs):
                youtputs.clear()
                youtputs.extend([youtput(o) for o in outputs])
            count = float(execution_count) if execution_count is not None else None
            if ycell.get("execution_count") != count:
                ycell["execution_count"] = count

        self._write(final)
        self._clear_pending = False
        if not self.lost:
            self._room.flush()
            self.delivered = True

    # ------------------------------------------------------------------ writes

    def _stream(self, name: str, text: str) -> None:
        def write(ycell: Any) -> None:
            from pycrdt import Text

            self._maybe_clear(ycell)
            youtputs = ycell["outputs"]
            if len(youtputs):
                last = youtputs[len(youtputs) - 1]
                if _get(last, "output_type") == "stream" and _get(last, "name") == name:
                    ytext = _get(last, "text")
                    if isinstance(ytext, Text):
                        ytext += text
                        return
                    merged = _plain(last)
                    merged["text"] = _text(merged.get("text", "")) + text
                    del youtputs[len(youtputs) - 1]
                    youtputs.append(youtput(merged))
                    return
            youtputs.append(youtput({"output_type": "stream", "name": name, "text": text}))
            self._ids.append(None)

        self._write(write)

    def _append(self, output: dict[str, Any], display_id: str | None) -> None:
        def write(ycell: Any) -> None:
            self._maybe_clear(ycell)
            ycell["outputs"].append(youtput(output))
            self._ids.append(display_id)

        self._write(write)

    def _update_display(self, content: dict[str, Any]) -> None:
        display_id = (content.get("transient") or {}).get("display_id")
        if not display_id:
            return

        def write(ycell: Any) -> None:
            youtputs = ycell["outputs"]
            for index, known in enumerate(self._ids):
                if known != display_id or index >= len(youtputs):
                    continue
                old = _plain(youtputs[index])
                old["data"] = copy.deepcopy(content.get("data", {}))
                old["metadata"] = copy.deepcopy(content.get("metadata", {}))
                del youtputs[index]
                youtputs.insert(index, youtput(old))

        self._write(write)

    def _clear(self) -> None:
        def write(ycell: Any) -> None:
            ycell["outputs"].clear()
            self._ids = []

        self._write(write)

    def _maybe_clear(self, ycell: Any) -> None:
        if self._clear_pending:
            ycell["outputs"].clear()
            self._ids = []
            self._clear_pending = False

    def _write(self, change: Any) -> None:
        """Apply ``change(ycell)`` in one transaction, if the cell is still there."""
        if self.lost:
            return
        with self._room.lock:
            ycell = self._find()
            if ycell is None:
                self.lost = True
                return
            with self._room.doc.transaction(origin="jupyter-jcli"):
                change(ycell)

    def _find(self) -> Any:
        """The live cell with our id (the last index it was at first), or ``None``."""
        ycells = self._room.notebook.ycells
        count = len(ycells)
        if self._index_hint < count and ycells[self._index_hint].get("id") == self.cell_id:
            return ycells[self._index_hint]
        for index in range(count):
            ycell = ycells[index]
            if ycell.get("id") == self.cell_id:
                self._index_hint = index
                return ycell
        return None


def _get(item: Any, key: str) -> Any:
    return item.get(key) if hasattr(item, "get") else None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "".join(value)


def same_outputs(youtputs: Any, outputs: list[dict[str, Any]]) -> bool:
    """Whether the shared ``outputs`` array already holds ``outputs`` (multiline strings
    joined, the kernel protocol's ``transient`` left out): a final write that finds them
    changes nothing, so they are in the document once."""
    if youtputs is None or not hasattr(youtputs, "__len__") or len(youtputs) != len(outputs):
        return False
    return [_normal(_plain(item)) for item in youtputs] == [_normal(o) for o in outputs]


def _normal(output: dict[str, Any]) -> dict[str, Any]:
    """An output with its multiline strings joined (nbformat allows a list or a string) and
    no ``transient``."""
    made = {key: value for key, value in output.items() if key != "transient"}
    if "text" in made:
        made["text"] = _text(made["text"])
    if isinstance(made.get("data"), dict):
        made["data"] = {
            mime: _text(value) if isinstance(value, list) and mime != "application/json" else value
            for mime, value in made["data"].items()
        }
    return made
