"""What ``j-cli run`` shows while it runs, and what Ctrl-C does.

On a terminal (stderr is a TTY) :class:`LiveView` prints, on stderr, the cell being run
(``[2/5] running load (2/5)``), its elapsed time every few seconds, and its stdout/stderr as
it streams, bounded per cell (:data:`LIVE_LINES` lines, :data:`LIVE_CHARS` characters; the
rest is counted, never lost: it is in the saved outputs). Elsewhere, one line per cell. With
``-j`` nothing is shown until the one JSON document at the end.

:func:`interrupt_on_sigint`: the first SIGINT interrupts the running cell on the kernel, so the
batch ends with that cell ``interrupted`` and what it printed so far saved in the notebook;
a second SIGINT cancels the command.

:func:`waiting_line`: before a run that may wait for the kernel (``--wait S``), what it would
wait on when the registry records code running there (another command's, or the code a killed
command left running), as one line for stderr.
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import TYPE_CHECKING, Any

import anyio

from jupyter_jcli.cli._emit import echo
from jupyter_jcli.errors import TERMINATING_SIGNALS, KernelError, Terminated

if TYPE_CHECKING:
    from pathlib import Path

    from jupyter_jcli.kernels import KernelPool

__all__ = ["LIVE_CHARS", "LIVE_LINES", "LiveView", "interrupt_on_sigint", "waiting_line"]

LIVE_LINES = 40
"""Lines of one cell's streamed output shown live."""
LIVE_CHARS = 4000
"""Characters of one cell's streamed output shown live."""
_PREFIX = "    | "


class LiveView:
    """The progress lines and, on a terminal, the streamed output of a run (on stderr).

    Args:
        live: stream outputs and heartbeats (a terminal); else one line per cell.
    """

    def __init__(self, *, live: bool | None = None) -> None:
        self.live = sys.stderr.isatty() if live is None else live
        self._lines = 0
        self._chars = 0
        self._hidden = 0
        self._partial: dict[str, str] = {}
        self._cell_started = time.monotonic()

    async def progress(self, done: float, total: float | None, message: str) -> None:
        """A :data:`~jupyter_jcli.workbench.ProgressCallback`."""
        if done == int(done):
            self._end_cell()
            self._cell_started = time.monotonic()
            echo(f"[{int(done)}/{int(total or 0)}] {message}", err=True)
        elif self.live:
            elapsed = time.monotonic() - self._cell_started
            echo(f"{_PREFIX}... still running ({elapsed:.0f} s)", err=True)

    def output(self, output: dict[str, Any]) -> None:
        """An :data:`~jupyter_jcli.kernels.OutputCallback`: streams shown, bounded."""
        if not self.live or output.get("output_type") != "stream":
            return
        name = str(output.get("name"))
        lines = (self._partial.get(name, "") + str(output.get("text", ""))).split("\n")
        self._partial[name] = lines.pop()
        for line in lines:
            self._show(line, stderr=name == "stderr")

    def _show(self, line: str, *, stderr: bool) -> None:
        if self._lines >= LIVE_LINES or self._chars >= LIVE_CHARS:
            self._hidden += 1
            return
        line = line.rsplit("\r", 1)[-1][: LIVE_CHARS - self._chars]
        self._lines += 1
        self._chars += len(line) + 1
        echo(f"{_PREFIX}{'! ' if stderr else ''}{line}", err=True)

    def _end_cell(self) -> None:
        for name, rest in self._partial.items():
            if rest:
                self._show(rest, stderr=name == "stderr")
        if self._hidden:
            echo(f"{_PREFIX}... {self._hidden} more lines (saved in the notebook)", err=True)
        self._lines = self._chars = self._hidden = 0
        self._partial = {}

    def finish(self) -> None:
        """Flush the last cell's partial line and hidden-line count."""
        self._end_cell()


@asynccontextmanager
async def interrupt_on_sigint(pool: KernelPool) -> AsyncIterator[list[bool]]:
    """While the block runs, SIGINT interrupts every live kernel of ``pool`` (the running
    cell ends ``interrupted``, its outputs saved); a second SIGINT cancels the block
    (``KeyboardInterrupt``), and so does SIGTERM or SIGHUP (a closed terminal), interrupting
    the kernels first if no SIGINT did (:class:`~jupyter_jcli.errors.Terminated`); the cells
    that finished are saved (each as it finished, the running one's outputs so far at the
    batch's end). Yields
    a one-item list, ``[True]`` once a SIGINT arrived."""
    seen = [False]
    cancelled: BaseException | None = None
    error: BaseException | None = None
    terminating = [  # SIGHUP as SIGTERM, unless ignored (nohup)
        signal.Signals(signum)
        for signum in TERMINATING_SIGNALS
        if signal.getsignal(signum) != signal.SIG_IGN
    ]
    previous = {signum: signal.getsignal(signum) for signum in terminating}
    async with anyio.create_task_group() as tg:

        async def interrupt() -> None:
            seen[0] = True
            for kernel in pool.kernels():
                with suppress(KernelError):
                    await kernel.interrupt()

        async def watch() -> None:
            nonlocal cancelled
            with anyio.open_signal_receiver(signal.SIGINT, *terminating) as signals:
                async for signum in signals:
                    if signum in terminating:  # as a second Ctrl-C, interrupting first
                        if not seen[0]:
                            await interrupt()
                        cancelled = Terminated(signum)
                    elif seen[0]:
                        cancelled = KeyboardInterrupt()
                    if cancelled is not None:
                        tg.cancel_scope.cancel()
                        return
                    echo("interrupting the kernel's code (Ctrl-C again to cancel)", err=True)
                    await interrupt()

        tg.start_soon(watch)
        try:
            yield seen
        except Exception as exc:  # raised as is, not wrapped in an ExceptionGroup
            error = exc
        finally:
            tg.cancel_scope.cancel()
    for signum, handler in previous.items():  # the receiver left them at their default
        if handler is not None:
            signal.signal(signum, handler)
    if error is not None:
        raise error
    if cancelled is not None:
        raise cancelled


def waiting_line(notebook_path: Path, file_arg: str, busy_wait: float) -> str | None:
    """What a command that waits up to ``busy_wait`` s for the kernel of ``notebook_path``
    (the resolved ``.ipynb``; ``file_arg``: as the command named it) waits on, as the local
    registry records it now: the cell or inline code, who runs it, and, for code a killed
    command left running, that its command has ended and how to stop the code; ``None`` when
    nothing is recorded running there (or no wait is asked)."""
    if busy_wait <= 0:
        return None
    import shlex

    from jupyter_jcli.kernels import KernelRegistry, busy_facts, running_words

    facts = busy_facts(KernelRegistry().read(notebook_path))
    if facts is None:
        return None
    what, by = running_words(facts), facts.get("busy_command_words", "another command")
    line = f"waiting up to {busy_wait:g} s for the kernel: it runs the {what} of {by}"
    if facts.get("busy_gone"):
        stop = shlex.join(["j-cli", "kernel", "interrupt", file_arg])
        line += f", a command that has ended (its code outlived it; {stop} stops that code)"
    return line
