"""``j-cli kernel start|list|stop|restart|interrupt``: the notebooks' live kernels.

The operations are the workbench's (:mod:`jupyter_jcli.workbench`'s ``start_live_kernel``,
``list_live_kernels``, ``stop_live_kernels``, ``restart_live_kernel``,
``interrupt_live_kernel``); this module parses and renders. A kernel started here is
registered and outlives the command: every later ``j-cli run`` on the notebook, and
``jupyter-mcp``, use it, so its variables and the record of what ran on it (which cells are
fresh) carry over between commands. It stops by itself after ``--idle-timeout`` seconds
without an execution (default one hour, or ``$JUPYTER_JCLI_KERNEL_IDLE_TIMEOUT``). ``-j``
prints one document::

    {"schema_version": 1, "status": "ok", "operation": "kernel_start", "started": bool,
     "kernel": <entry>}
    {"schema_version": 1, "status": "ok", "operation": "kernel_list", "kernels": [<entry>...]}

where an entry is :func:`~jupyter_jcli.workbench.kernel_dict`'s. With ``--server-url`` (or
``$JUPYTER_JCLI_SERVER_URL``) every subcommand works on that Jupyter Server's notebook
sessions instead (the operations of :mod:`jupyter_jcli.workbench._live_kernels`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
import click

from jupyter_jcli.cli._clip import clip
from jupyter_jcli.cli._emit import echo, emit_json, json_mode, ok_document
from jupyter_jcli.cli._server_options import (
    current_server,
    server_from,
    server_options,
    store_options,
)
from jupyter_jcli.errors import UsageError

if TYPE_CHECKING:
    from jupyter_jcli.kernels import KernelEntry, ServerSession

__all__ = ["kernel"]

_COMMAND_WIDTH = 60
"""Widest started-by command in the ``kernel list`` table."""
_IDLE_HELP = (
    "Seconds without an execution after which the kernel stops by itself "
    "(default: $JUPYTER_JCLI_KERNEL_IDLE_TIMEOUT or 3600)."
)


def _document(operation: str, **fields: Any) -> None:
    emit_json(ok_document(operation=operation, **fields))


def _report(operation: str, kernel: KernelEntry | ServerSession, what: str, **fields: bool) -> None:
    """The kernel a start or restart left running: ``operation``'s document (with ``fields``)
    with ``-j``, else a line beginning with ``what`` happened."""
    from jupyter_jcli.kernels import KernelEntry
    from jupyter_jcli.workbench import kernel_dict

    if json_mode():
        _document(operation, **fields, kernel=kernel_dict(kernel))
        return
    if not isinstance(kernel, KernelEntry):
        echo(_line(what, kernel))
        return
    echo(
        f"{what}: {kernel.kernelspec} kernel pid {kernel.pid} epoch {kernel.epoch[:12]} for "
        f"{kernel.notebook_path} (stops after {kernel.idle_timeout:g} s idle)"
    )


def _line(verb: str, session: ServerSession) -> str:
    return (
        f"{verb}: {session.kernelspec} kernel {session.kernel_id} on {session.server_url} for "
        f"{session.notebook_path}"
    )


@click.group("kernel")
def kernel() -> None:
    """Live kernels, one per notebook, shared by every j-cli command and jupyter-mcp."""


@kernel.command("start")
@store_options
@click.argument("file", metavar="NB")
@click.option(
    "--kernel", "kernel_name", metavar="NAME", help="Kernelspec to start instead of the notebook's."
)
@click.option("--idle-timeout", type=float, metavar="S", help=_IDLE_HELP)
def start_command(file: str, *, kernel_name: str | None, idle_timeout: float | None) -> None:
    """Start NB's kernel and leave it running (nothing happens if one already runs)."""
    from jupyter_jcli.workbench import start_live_kernel

    server = current_server()
    kernel, started = anyio.run(
        lambda: start_live_kernel(
            file, kernel_name=kernel_name, idle_timeout=idle_timeout, server=server
        )
    )
    _report("kernel_start", kernel, "started" if started else "already running", started=started)


@kernel.command("list")
@server_options
def list_command(server_url: str | None, token: str | None, server_root: str | None) -> None:
    """The live kernels: notebook, kernelspec, pid, epoch, state, started, idle since, who
    started it (and with which command), who uses it now."""
    from jupyter_jcli.cli._document_render import table
    from jupyter_jcli.kernels import KernelEntry
    from jupyter_jcli.workbench import kernel_dict, list_live_kernels

    server = server_from(server_url, token, server_root)
    kernels = anyio.run(list_live_kernels, server)
    if json_mode():
        _document("kernel_list", kernels=[kernel_dict(k) for k in kernels])
        return
    if not kernels:
        echo("no live kernels" + (f" on {server.url}" if server is not None else ""))
        return
    rows, header = [], ["notebook", "kernelspec", "kernel id", "state", "last activity",
                        "connections"]  # fmt: skip
    for k in kernels:
        if not isinstance(k, KernelEntry):
            connections = str(k.connections) if k.connections is not None else "-"
            rows.append([str(k.notebook_path), k.kernelspec or "-", k.kernel_id,
                         k.state or "-", k.last_activity or "-", connections])  # fmt: skip
            continue
        header = ["notebook", "kernelspec", "pid", "epoch", "state", "started", "idle since",
                  "started by", "users"]  # fmt: skip
        shown = kernel_dict(k)
        rows.append([k.notebook_path, k.kernelspec, str(k.pid), k.epoch[:12], k.state,
                     shown["started"], shown["idle_since"] or "-", _started_by(k),
                     ", ".join(shown["users"]) or "-"])  # fmt: skip
    for line in table(header, rows):
        echo(line)


def _started_by(entry: KernelEntry) -> str:
    """Who started the kernel and with which command: ``"j-cli pid 12: j-cli kernel start
    nb.ipynb"`` (the command clipped to :data:`_COMMAND_WIDTH`)."""
    command = entry.started_command
    if not command:
        return entry.started_by
    return f"{entry.started_by}: {clip(command, _COMMAND_WIDTH)}"


@kernel.command("stop")
@store_options
@click.argument("file", metavar="NB", required=False)
@click.option("--all", "stop_all", is_flag=True, help="Stop every live kernel.")
def stop_command(file: str | None, *, stop_all: bool) -> None:
    """Stop NB's kernel (or every kernel with --all); its variables are gone."""
    from jupyter_jcli.kernels import KernelEntry
    from jupyter_jcli.workbench import kernel_dict, stop_live_kernels

    if (file is None) == (not stop_all):
        raise UsageError("Give NB or --all.", {"notebook": file, "all": stop_all})
    server = current_server()
    stopped = anyio.run(lambda: stop_live_kernels(file, server=server))
    if json_mode():
        _document("kernel_stop", stopped=[kernel_dict(k) for k in stopped])
        return
    for k in stopped:
        if isinstance(k, KernelEntry):
            echo(f"stopped {k.kernelspec} kernel pid {k.pid} for {k.notebook_path}")
        else:
            echo(_line("stopped", k))
    if not stopped:
        echo("no live kernels" + (f" on {server.url}" if server is not None else ""))


@kernel.command("restart")
@store_options
@click.argument("file", metavar="NB")
@click.option(
    "--kernel", "kernel_name", metavar="NAME", help="Kernelspec to start instead of the notebook's."
)
def restart_command(file: str, *, kernel_name: str | None) -> None:
    """Restart NB's kernel (start one if none runs): a new epoch, every cell stale. A cell
    another command runs on it is interrupted first."""
    from jupyter_jcli.cli._exec import kernelspec_hints
    from jupyter_jcli.workbench import restart_live_kernel

    server = current_server()
    with kernelspec_hints(restart_switches=server is None):  # refused before the kernel stops
        kernel, restarted = anyio.run(
            lambda: restart_live_kernel(file, kernel_name=kernel_name, server=server)
        )
    what = "restarted" if restarted else "started"
    _report("kernel_restart", kernel, what, started=not restarted, restarted=restarted)


@kernel.command("interrupt")
@store_options
@click.argument("file", metavar="NB")
def interrupt_command(file: str) -> None:
    """Interrupt the cell running on NB's kernel (the variables are kept)."""
    from jupyter_jcli.kernels import KernelEntry
    from jupyter_jcli.workbench import interrupt_live_kernel, kernel_dict

    server = current_server()
    kernel = anyio.run(lambda: interrupt_live_kernel(file, server=server))
    if json_mode():
        _document("kernel_interrupt", kernel=kernel_dict(kernel))
    elif isinstance(kernel, KernelEntry):
        running = (kernel.busy or {}).get("cell")
        echo(f"interrupted {running or 'the kernel'} on {kernel.notebook_path}")
    else:
        echo(_line("interrupted", kernel))
