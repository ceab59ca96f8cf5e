"""The ``j-cli`` fast lane for inline code on a live kernel: ``-j exec NB --code TEXT
[--timeout S]``.

An agent asks its notebook's kernel scratch questions (``df.shape``, a quick plot) one fresh
process per call, so start-up is most of what the call costs: importing click, asyncio and
anyio takes longer than the kernel's own round trip. :func:`fast_exec` serves this plainly
well-formed command line, on a notebook whose live registered kernel it joins, without them:
through :func:`~jupyter_jcli.workbench._inline_live.execute_code_live` (the same outcome,
built by the same functions as the click command's ``execute_code``) and the same JSON
writer, so the document and the exit status are the click command's.

Everything else goes to the click application, which parses and runs it as always: any other
option or form (help, a repeated option, an option without its value, a value starting with
``-``, a timeout that is not plain decimal, text mode, ``--code-file``, ``--kernel``, a server
named by option or environment), and a notebook without a live kernel to join (the click
command starts or replaces one and says so); nothing has run when the lane hands over.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from jupyter_jcli.cli._fast import plain_words

if TYPE_CHECKING:
    from jupyter_jcli.workbench import CodeOutcome

__all__ = ["exit_status", "fast_exec"]

_JSON = frozenset({"-j", "--json"})
_DECIMAL = re.compile(r"[0-9]+(\.[0-9]+)?")
_OPTIONS = frozenset({"--code", "--timeout"})
_SERVER_ENV = ("JUPYTER_JCLI_SERVER_URL", "JUPYTER_JCLI_SERVER_TOKEN", "JUPYTER_JCLI_SERVER_ROOT")
_EXIT_FAILED = 1
_EXIT_USAGE = 2
_EXIT_INTERRUPTED = 130


def _parse(argv: Sequence[str]) -> tuple[str, str, float | None] | None:
    """``(NB, code, timeout)`` for a plainly well-formed exec line, else None."""
    if len(argv) < 4 or argv[0] not in _JSON or argv[1] != "exec":
        return None
    if any(os.environ.get(name) for name in _SERVER_ENV):
        return None
    words = plain_words(argv[2:], _OPTIONS)
    if words is None or words[0] == "-":
        return None
    notebook, pairs = words
    options: dict[str, str] = {}
    for name, value in pairs:
        if name in options or value.startswith("-"):
            return None
        options[name] = value
    if notebook is None or "--code" not in options:
        return None
    timeout = options.get("--timeout")
    if timeout is not None and not _DECIMAL.fullmatch(timeout):
        return None
    return notebook, options["--code"], None if timeout is None else float(timeout)


def fast_exec(argv: Sequence[str]) -> tuple[int, bytes] | None:
    """Serve a plainly well-formed ``-j exec NB --code TEXT`` on NB's live kernel.

    Returns:
        ``(exit status, stdout bytes)``, or None when the command line (or a notebook
        without a live kernel) is for click: then nothing has run.
    """
    parsed = _parse(argv)
    if parsed is None:
        return None
    notebook, code, timeout = parsed
    with _startup_objects_frozen():
        from jupyter_jcli.errors import (
            ErrorCode,
            JcliError,
            Terminated,
            cancelled,
            terminate_as_cancel,
        )
        from jupyter_jcli.outputs import serialize_json
        from jupyter_jcli.workbench._inline_live import execute_code_live

    terminate_as_cancel()  # SIGTERM, SIGHUP: as a second Ctrl-C, with a document
    try:
        outcome = execute_code_live(notebook, code, timeout=timeout)
    except JcliError as err:
        status = _EXIT_USAGE if err.code == ErrorCode.USAGE_ERROR else _EXIT_FAILED
        return status, serialize_json(err.to_dict()) + b"\n"
    except (
        KeyboardInterrupt
    ) as stop:  # a second Ctrl-C (or SIGTERM) (the first one interrupts the kernel and the
        # answer comes as for any outcome): the kernel was interrupted and let go; as click
        if sys.stderr is not None:  # (started with descriptor 2 closed)
            sys.stderr.write("\nAborted.\n")
        if isinstance(stop, Terminated):  # SIGTERM or SIGHUP
            error = cancelled(terminated=True, signal_name=stop.signal_name)
            return stop.exit_status, serialize_json(error.to_dict()) + b"\n"
        return _EXIT_INTERRUPTED, serialize_json(cancelled().to_dict()) + b"\n"
    except Exception as exc:  # the code may have run: never run it again through click
        return _EXIT_FAILED, serialize_json(JcliError.unexpected(exc).to_dict()) + b"\n"
    if outcome is None:
        return None
    return exit_status(outcome), serialize_json(outcome.to_dict()) + b"\n"


@contextlib.contextmanager
def _startup_objects_frozen() -> Iterator[None]:
    """Import the lane without the cyclic garbage collector, then move what the imports made
    (modules, classes, functions: kept until the process ends) out of its reach
    (``gc.freeze()``) and turn it back on for what the run allocates. The collector would
    otherwise walk those objects at every collection until the process ends: about 5% of an
    exec's instructions on a live kernel (callgrind). The ``gc`` module's documentation gives
    this recipe (disable early, freeze, enable) for the objects a forking server makes at
    start-up."""
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def exit_status(outcome: CodeOutcome) -> int:
    """The exit status of an exec (the click command's too): 0 when the code ran to the end
    and its outputs are where the answer says; 130 when an interrupt stopped it (from
    another command: ``j-cli kernel interrupt``), as for ``j-cli run``; else 1."""
    if outcome.ok and outcome.save_error is None:
        return 0
    return _EXIT_INTERRUPTED if outcome.result.status == "interrupted" else _EXIT_FAILED
