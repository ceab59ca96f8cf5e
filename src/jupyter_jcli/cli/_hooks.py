"""``j-cli _hooks NAME ...`` and the ``j-cli-hook NAME ...`` console script: the reference's
hook command line (see :mod:`jupyter_jcli.hosts.hooks` for the guards, payloads and exit
statuses).

The ``j-cli-hook`` console script serves it without importing click (:func:`entry`, which calls
:func:`serve`); the click app has a hidden ``_hooks`` command that calls the same function, for
``j-cli _hooks ...``, ``python -m jupyter_jcli _hooks ...`` and ``click.testing.CliRunner``.
The command is hidden from ``--help``: hosts call it, people do not.
"""

from __future__ import annotations

import sys

__all__ = ["MAX_EVENT_BYTES", "entry", "serve"]

MAX_EVENT_BYTES = 64 * 1024 * 1024
"""The largest hook event read from stdin (a larger one is malformed)."""


def serve(args: list[str]) -> int:
    """Answer one hook call: read the event from stdin, write the answer, return the status."""
    from jupyter_jcli.hosts.hooks import run_hook

    result = run_hook(args, _read_stdin)
    for stream, text in ((sys.stdout, result.stdout), (sys.stderr, result.stderr)):
        if text and stream is not None:
            try:
                stream.write(text)
                stream.flush()
            except (BrokenPipeError, OSError):
                pass  # the host stopped reading: the status still tells
    return result.exit_code


def _read_stdin() -> str:
    """The event's text (at most 64 MiB; a larger one is malformed, so its call fails).

    Raises:
        ValueError: no readable stdin, or an event over the limit.
    """
    stdin = sys.stdin
    if stdin is None:
        raise ValueError("no stdin")
    buffer = getattr(stdin, "buffer", None)
    data = buffer.read(MAX_EVENT_BYTES + 1) if buffer is not None else stdin.read().encode()
    if len(data) > MAX_EVENT_BYTES:
        raise ValueError(f"the event is over {MAX_EVENT_BYTES} bytes")
    return data.decode("utf-8", errors="replace")


def entry() -> None:
    """The ``j-cli-hook`` console script: ``j-cli-hook NAME ...`` is ``j-cli _hooks NAME ...``."""
    sys.exit(serve(sys.argv[1:]))
