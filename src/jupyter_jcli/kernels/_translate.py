"""Translating iopub messages into nbformat v4 outputs. Pure: no kernel, no I/O.

Rules (the Jupyter messaging spec, https://jupyter-client.readthedocs.io/en/latest/messaging.html,
nbformat, https://nbformat.readthedocs.io/en/latest/format_description.html, and what nbclient and
JupyterLab do with them):

- ``stream``: appended to the previous output when that is a stream of the same name, else a
  new output. In the text, ``\\r\\n`` is a newline; a line rewritten after ``\\r`` keeps only its
  last version (a trailing ``\\r`` waits for the next chunk); ``\\b`` erases the character
  before it on the same line.
- ``display_data``, ``execute_result``, ``error``: one output each, ``transient`` dropped.
  ``execute_result`` carries ``execution_count``; ``error`` carries ``ename``, ``evalue``,
  ``traceback``.
- ``clear_output``: empties the outputs at once, or with ``wait: true`` just before the next
  output arrives (a display update is not an output).
- ``transient.display_id``: ``update_display_data`` replaces ``data`` and ``metadata`` of every
  output with that display id, in this cell and in earlier cells (through a
  :class:`DisplayRegistry`); a ``display_data``/``execute_result`` with a known display id
  updates the existing ones too and is appended (nbclient's rule). Unknown ids are ignored.
"""

from __future__ import annotations

import re
from typing import Any

from jupyter_jcli.kernels._types import DisplayUpdate, KernelMessage, Output

__all__ = ["DisplayRegistry", "OutputCollector", "message_type", "parent_id"]

_CR_NEWLINE = re.compile(r"\r+\n")
_OVERWRITTEN = re.compile(r"[^\n]*\r(?=[^\n])")
_BACKSPACE = re.compile(r"[^\n\x08]\x08")
_OUTPUT_TYPES = frozenset({"stream", "display_data", "execute_result", "error"})


def message_type(msg: KernelMessage) -> str:
    """The ``msg_type`` of a Jupyter message (from its header; ``""`` when it has none)."""
    header = msg.get("header")
    return str(header.get("msg_type") or "") if isinstance(header, dict) else ""


def parent_id(msg: KernelMessage) -> object:
    """The ``msg_id`` of the request a Jupyter message answers (``None`` when it names none)."""
    parent = msg.get("parent_header")
    return parent.get("msg_id") if isinstance(parent, dict) else None


def _fix_overwrites(text: str) -> str:
    """Apply ``\\r\\n``, ``\\r`` and ``\\b`` to ``text`` (JupyterLab's removeOverwrittenChars)."""
    while "\x08" in text and (fixed := _BACKSPACE.sub("", text)) != text:
        text = fixed
    if "\r" in text:
        text = _CR_NEWLINE.sub("\n", text)
        text = _OVERWRITTEN.sub("", text)
    return text


class _Stream:
    """A stream output under construction: finished lines, and the last, open line."""

    __slots__ = ("done", "name", "tail")

    def __init__(self, name: str) -> None:
        self.name = name
        self.done: list[str] = []
        self.tail: list[str] = []

    def append(self, chunk: str) -> None:
        if "\r" in chunk or "\x08" in chunk or (self.tail and self.tail[-1].endswith("\r")):
            text = _fix_overwrites("".join(self.tail) + chunk)
            cut = text.rfind("\n") + 1
            if cut:
                self.done.append(text[:cut])
            self.tail = [text[cut:]] if cut < len(text) else []
            return
        cut = chunk.rfind("\n") + 1
        if cut:
            self.done.extend(self.tail)
            self.done.append(chunk[:cut])
            self.tail = [chunk[cut:]] if cut < len(chunk) else []
        else:
            self.tail.append(chunk)

    def text(self) -> str:
        text = "".join(self.done) + "".join(self.tail)
        self.done = [text] if text else []
        self.tail = []
        return text


class DisplayRegistry:
    """Which outputs of earlier cells carry which display id, for one kernel.

    Keys are the cell keys the caller gave to executions (cell names); indexes are output
    indexes in those cells. Clear it when the kernel is replaced (a new kernel's display ids
    refer to nothing shown before).
    """

    def __init__(self) -> None:
        self._by_cell: dict[str, dict[int, str]] = {}

    def register(self, cell_key: str, display_ids: dict[int, str]) -> None:
        """Record the display ids of ``cell_key``'s outputs ``{output_index: display_id}``,
        replacing what was recorded for that cell."""
        if display_ids:
            self._by_cell[cell_key] = dict(display_ids)
        else:
            self._by_cell.pop(cell_key, None)

    def forget(self, cell_key: str) -> None:
        """Drop a cell (re-executed, cleared or removed): its outputs are no longer targets."""
        self._by_cell.pop(cell_key, None)

    def clear(self) -> None:
        """Drop every cell."""
        self._by_cell.clear()

    def targets(self, display_id: str) -> list[tuple[str, int]]:
        """``(cell_key, output_index)`` of every recorded output with ``display_id``."""
        return [
            (key, index)
            for key, ids in self._by_cell.items()
            for index, did in ids.items()
            if did == display_id
        ]


class OutputCollector:
    """The outputs of one execution, built from its iopub messages in arrival order.

    Args:
        registry: the kernel's display registry (earlier cells' display ids), or ``None``.
        cell_key: the key of the cell being executed; with a registry, that cell's earlier
            display ids are forgotten now (its outputs are being replaced) and its new ones are
            recorded by :meth:`finish`. ``None`` for code that is not a cell.

    Feed every message whose parent is the execute request to :meth:`handle`; read
    :attr:`outputs`, :attr:`execution_count`, :attr:`last_error` (``(ename, evalue)`` of the
    last error output, even if cleared since) and :attr:`display_updates` when done.
    """

    def __init__(self, registry: DisplayRegistry | None = None, cell_key: str | None = None):
        self._registry = registry
        self._cell_key = cell_key
        self._slots: list[_Stream | Output] = []
        self._ids: list[str | None] = []
        self._clear_pending = False
        self._updates: dict[tuple[str, int], DisplayUpdate] = {}
        self.execution_count: int | None = None
        self.last_error: tuple[str, str] | None = None
        if registry is not None and cell_key is not None:
            registry.forget(cell_key)

    @property
    def outputs(self) -> list[Output]:
        """The nbformat v4 outputs so far (new dicts; streams joined)."""
        return [
            {"output_type": "stream", "name": s.name, "text": s.text()}
            if isinstance(s, _Stream)
            else dict(s)
            for s in self._slots
        ]

    @property
    def display_updates(self) -> list[DisplayUpdate]:
        """Latest new bundle per earlier-cell output touched by a display update, in the order
        they were first touched."""
        return list(self._updates.values())

    def handle(self, msg: KernelMessage) -> Output | None:
        """Apply one iopub message.

        Returns:
            The output this message carried, as an nbformat dict (a stream chunk as its own
            stream output; an ``update_display_data`` as ``display_data``), or ``None`` for
            messages that carry none (``status``, ``execute_input``, ``clear_output``, comms,
            unknown types).
        """
        kind = message_type(msg)
        content: dict[str, Any] = dict(msg.get("content") or {})
        if kind == "execute_input":
            self._note_count(content)
            return None
        if kind == "clear_output":
            self._clear_pending = True  # until the next output, or now without "wait"
            if not content.get("wait"):
                self._clear()
            return None
        if kind == "update_display_data":
            display_id = _display_id(content)
            out = _bundle_output("display_data", content)
            if display_id is not None:
                self._update_display(display_id, out)
            return out
        if kind not in _OUTPUT_TYPES:
            return None
        if self._clear_pending:
            self._clear()
        if kind == "stream":
            return self._add_stream(content)
        display_id = None
        if kind == "error":
            out = {
                "output_type": "error",
                "ename": str(content.get("ename", "")),
                "evalue": str(content.get("evalue", "")),
                "traceback": [str(line) for line in content.get("traceback") or []],
            }
            self.last_error = (out["ename"], out["evalue"])
        else:
            out = _bundle_output(kind, content)
            if kind == "execute_result":
                self._note_count(content)
                out["execution_count"] = content.get("execution_count")
            display_id = _display_id(content)
            if display_id is not None:
                self._update_display(display_id, out)
        self._slots.append(out)
        self._ids.append(display_id)
        return dict(out)

    def finish(self) -> None:
        """Record this cell's display ids in the registry (when a cell key and registry exist)."""
        if self._registry is None or self._cell_key is None:
            return
        ids = {i: did for i, did in enumerate(self._ids) if did is not None}
        self._registry.register(self._cell_key, ids)

    def _note_count(self, content: dict[str, Any]) -> None:
        count = content.get("execution_count")
        if isinstance(count, int) and not isinstance(count, bool):
            self.execution_count = count

    def _clear(self) -> None:
        self._slots.clear()
        self._ids.clear()
        self._clear_pending = False

    def _add_stream(self, content: dict[str, Any]) -> Output:
        name = str(content.get("name", "stdout"))
        chunk = str(content.get("text", ""))
        last = self._slots[-1] if self._slots else None
        if not (isinstance(last, _Stream) and last.name == name):
            last = _Stream(name)
            self._slots.append(last)
            self._ids.append(None)
        last.append(chunk)
        return {"output_type": "stream", "name": name, "text": chunk}

    def _update_display(self, display_id: str, out: Output) -> None:
        for i, did in enumerate(self._ids):
            if did == display_id:
                slot = self._slots[i]
                if isinstance(slot, dict):
                    slot["data"] = dict(out["data"])
                    slot["metadata"] = dict(out["metadata"])
        if self._registry is None:
            return
        for key, index in self._registry.targets(display_id):
            self._updates[(key, index)] = DisplayUpdate(
                cell_key=key,
                output_index=index,
                data=dict(out["data"]),
                metadata=dict(out["metadata"]),
            )


def _display_id(content: dict[str, Any]) -> str | None:
    transient = content.get("transient")
    did = transient.get("display_id") if isinstance(transient, dict) else None
    return did if isinstance(did, str) and did else None


def _bundle_output(kind: str, content: dict[str, Any]) -> Output:
    data = content.get("data")
    metadata = content.get("metadata")
    return {
        "output_type": kind,
        "data": dict(data) if isinstance(data, dict) else {},
        "metadata": dict(metadata) if isinstance(metadata, dict) else {},
    }
