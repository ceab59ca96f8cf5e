"""The person in a collaborative room, for tests: jupyter-nbmodel-client (Datalayer's Y.js
notebook client, independent of our code) joined to a notebook's room on a real Jupyter Server
with jupyter-collaboration, run on its own event-loop thread.

:class:`Person` edits through the client's own API (``set_cell_source``, ``insert_cell``,
``delete_cell``) or types into a cell's shared text as an editor does; :meth:`Person.wait_for`
waits (bounded) until the person's view satisfies a condition; :meth:`Person.save` asks the
room's server to save the file now (JupyterLab's ``save`` message).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

WAIT = 20.0
"""Longest wait, in seconds, for a change to reach the person (or us)."""


class Person:
    """One nbmodel client in a notebook's room, on a background thread."""

    def __init__(self, base_url: str, token: str, path: str) -> None:
        from jupyter_nbmodel_client import NbModelClient, get_jupyter_notebook_websocket_url

        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        url = get_jupyter_notebook_websocket_url(base_url, path, token, timeout=WAIT)
        self.client = NbModelClient(url, timeout=WAIT)
        self._run(self.client.start(), WAIT + 5)
        if not self.client.synced:
            self.close()
            raise RuntimeError("the person's client did not sync")

    def _run(self, coro: Coroutine[Any, Any, T], timeout: float = WAIT) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the client's thread (its document is not shared across threads)."""

        async def run() -> T:
            return fn()

        return self._run(run())

    # ------------------------------------------------------------------ what they see

    def sources(self) -> list[str]:
        """Every cell's source as the person sees it."""
        return self.call(lambda: [str(cell["source"]) for cell in self.client._doc.ycells])

    def notebook(self) -> dict[str, Any]:
        """The person's notebook model."""
        return self.call(self.client.as_dict)

    def wait_for(self, condition: Callable[[Person], bool], timeout: float = WAIT) -> None:
        """Wait until ``condition(self)`` holds.

        Raises:
            AssertionError: it did not within ``timeout`` s.
        """
        deadline = time.monotonic() + timeout
        while not condition(self):
            if time.monotonic() >= deadline:
                raise AssertionError(f"the person never saw it: {self.sources()}")
            time.sleep(0.01)

    # ------------------------------------------------------------------ what they do

    def set_source(self, index: int, source: str) -> None:
        """Replace a cell's source (nbmodel's ``set_cell_source``)."""
        self.call(lambda: self.client.set_cell_source(index, source))

    def type(self, index: int, text: str) -> None:
        """Type ``text`` at the end of a cell, one keystroke per transaction."""

        def keys() -> None:
            for char in text:
                ysource = self.client._doc.ycells[index]["source"]
                with self.client._lock, self.client._doc.ydoc.transaction():
                    ysource.insert(len(ysource), char)

        self.call(keys)

    def delete(self, index: int) -> None:
        """Delete a cell."""
        self.call(lambda: self.client.delete_cell(index))

    def move(self, index: int, to: int) -> None:
        """Move the cell at ``index`` to ``to`` (a delete and an insert, as JupyterLab)."""

        def move() -> None:
            cell = self.client._doc.get_cell(index)
            with self.client._lock, self.client._doc.ydoc.transaction():
                del self.client._doc.ycells[index]
                self.client._doc.ycells.insert(to, self.client._doc.create_ycell(cell))

        self.call(move)

    def insert(self, index: int, source: str) -> None:
        """Insert a code cell."""
        self.call(lambda: self.client.insert_code_cell(index, source))

    def close(self) -> None:
        """Leave the room and stop the thread (bounded)."""
        try:
            self._run(self.client.stop(), WAIT)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5.0)


def wait_until(condition: Callable[[], bool], timeout: float = WAIT) -> None:
    """Wait until ``condition()`` holds (bounded).

    Raises:
        AssertionError: it did not within ``timeout`` s.
    """
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            raise AssertionError("the condition did not hold in time")
        time.sleep(0.02)
