"""The ``j-cli`` console script, with a fast lane for the protocol's two JSON reads (and, in
:mod:`jupyter_jcli.cli._fast_exec`, one for inline code on a live kernel).

An agent reads saved outputs with ``j-cli -j notebook outputs FILE --cell C`` and
``j-cli -j notebook output FILE --cell C --output K [--mime T] [--supported-mime T]
[--offset N] [--limit N]``, one fresh process per call, so start-up is most of their cost:
importing click alone takes longer than parsing a 2 MB notebook. :func:`entry` therefore
serves exactly these two well-formed command lines without importing click, through the
same functions as the click commands (:mod:`jupyter_jcli.cli._reads`) and the same JSON
writer, so the document and the exit status are the same. Every other command line, and any
of these that is not plainly well formed (help, an unknown or repeated option, an option
without its value, a non-decimal integer, an empty value, text mode, ``--save``), goes to
the click application (:data:`jupyter_jcli.cli.main`), which parses it and reports usage
errors as always.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # this module is the console script's first: no ``typing`` import
if TYPE_CHECKING:
    from collections.abc import Container, Sequence
    from typing import Any

__all__ = ["entry", "fast_read", "plain_words", "write_answer"]

_JSON = frozenset({"-j", "--json"})
_OPTIONS: dict[str, dict[str, type]] = {
    "outputs": {"--cell": str},
    "output": {
        "--cell": str,
        "--output": int,
        "--mime": str,
        "--offset": int,
        "--limit": int,
        "--supported-mime": list,
    },
}
_REQUIRED = {"outputs": ("--cell",), "output": ("--cell", "--output")}


def plain_words(
    words: Sequence[str], allowed: Container[str]
) -> tuple[str | None, list[tuple[str, str]]] | None:
    """The one positional word and the ``(--name, value)`` options, in order, of a plainly
    well-formed command line (``--name value`` or ``--name=value``, each name in
    ``allowed``; ``-`` is a positional word), else None: a second positional word, an empty
    one or one with a NUL, an unknown option, an option without its value."""
    positional: str | None = None
    options: list[tuple[str, str]] = []
    rest = list(words)
    while rest:
        token = rest.pop(0)
        if not token.startswith("-") or token == "-":
            if positional is not None or not token or "\0" in token:
                return None
            positional = token
            continue
        name, equals, value = token.partition("=")
        if name not in allowed:
            return None
        if not equals:
            if not rest:
                return None
            value = rest.pop(0)
        options.append((name, value))
    return positional, options


def _plain_int(value: str) -> bool:
    """Whether ``value`` is ``-?[0-9]+`` (ASCII digits only)."""
    digits = value[1:] if value.startswith("-") else value
    return digits.isascii() and digits.isdigit()


def _parse(argv: Sequence[str]) -> tuple[str, str, dict[str, Any]] | None:
    """``(command, FILE, options)`` for a plainly well-formed read, else None."""
    if len(argv) < 4 or argv[0] not in _JSON or argv[1] != "notebook":
        return None
    command = argv[2]
    allowed = _OPTIONS.get(command)
    if allowed is None:
        return None
    words = plain_words(argv[3:], allowed)
    if words is None:
        return None
    file, pairs = words
    options: dict[str, Any] = {}
    for name, value in pairs:
        kind = allowed[name]
        if kind is list:
            options.setdefault(name, []).append(value)
            continue
        if name in options or not value.strip():
            return None
        if kind is int:
            if not _plain_int(value):
                return None
            options[name] = int(value)
        else:
            options[name] = value
    if file is None or any(name not in options for name in _REQUIRED[command]):
        return None
    return command, file, options


def fast_read(argv: Sequence[str]) -> tuple[int, bytes] | None:
    """Serve a plainly well-formed ``-j notebook outputs|output`` read.

    Returns:
        ``(exit status, stdout bytes)``, or None when the command line is for click.
    """
    parsed = _parse(argv)
    if parsed is None:
        return None
    command, file, options = parsed
    from jupyter_jcli.errors import ErrorCode, JcliError
    from jupyter_jcli.outputs import serialize_json

    try:
        from jupyter_jcli.cli._reads import list_cell_outputs, read_cell_output, read_options

        if command == "outputs":
            document = list_cell_outputs(file, options["--cell"])
        else:
            keywords = read_options(
                mime_type=options.get("--mime"),
                supported_mime=options.get("--supported-mime", []),
                offset=options.get("--offset"),
                limit=options.get("--limit"),
            )
            document = read_cell_output(file, options["--cell"], options["--output"], keywords)
        return 0, serialize_json(document) + b"\n"
    except JcliError as err:
        status = 2 if err.code == ErrorCode.USAGE_ERROR else 1
        return status, serialize_json(err.to_dict()) + b"\n"
    except Exception:
        return None  # anything unexpected: click's error boundary reports it


def entry() -> None:
    """The ``j-cli`` console script: a fast lane when one applies (the reads, ``exec`` on a
    live kernel: :mod:`jupyter_jcli.cli._fast_exec`, and the hosts' ``_hooks`` calls:
    :mod:`jupyter_jcli.cli._hooks`), else the click app. ``-j exec`` and
    ``-j run`` are served by the warm exec server of :mod:`jupyter_jcli.cli._exec_client`
    when there is one; a command that ran itself on a live kernel starts one."""
    args = sys.argv[1:]
    if args[:1] == ["_hooks"]:  # an agent host's hook: answered without click
        from jupyter_jcli.cli._hooks import serve

        sys.exit(serve(args[1:]))
    json_first = args[:1] in (["-j"], ["--json"])
    if json_first and args[1:2] in (["exec"], ["run"]):
        from jupyter_jcli.cli import _exec_client

        status = _exec_client.serve(args)
        if status is not None:
            sys.exit(status)
        if args[1] == "run":
            from jupyter_jcli.cli._app import run

            status = run(args, prog_name="j-cli")
            _spawn_server_if_useful(_exec_client)
            sys.exit(status)
        from jupyter_jcli.cli._fast_exec import fast_exec

        served = fast_exec(args)
        if served is not None:
            status = write_answer(*served)
            _spawn_server_if_useful(_exec_client)
            sys.exit(status)
    else:
        served = fast_read(args)
    if served is None:
        from jupyter_jcli.cli._app import main

        main(prog_name="j-cli")
        return
    sys.exit(write_answer(*served))


def _spawn_server_if_useful(client: Any) -> None:
    """After a command that ran itself: start the warm server when this platform has one and
    a kernel is still registered (a server without kernels ends at once)."""
    if not client.available():
        return
    from jupyter_jcli.kernels._registry import registry_dir

    root = str(registry_dir())
    try:
        with os.scandir(root) as entries:
            if not any(entry.name.endswith(".json") for entry in entries):
                return
    except OSError:
        return
    client.spawn_server(root)


def write_answer(status: int, out: bytes) -> int:
    """Write a fast lane's answer to stdout; returns the exit status (1 when stdout is a pipe
    whose reader has gone: then stdout becomes ``/dev/null``, so the exit writes nothing)."""
    if sys.stdout is None:  # started with descriptor 1 closed: nowhere to answer
        return 1
    try:
        sys.stdout.buffer.write(out)
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        status = 1
    return status
