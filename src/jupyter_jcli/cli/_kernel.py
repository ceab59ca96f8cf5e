"""``j-cli kernel start|list|stop|restart|interrupt``: the notebooks' live kernels.

A kernel started here is registered (:class:`jupyter_jcli.kernels.KernelRegistry`) and
outlives the command: every later ``j-cli run`` on the notebook, and ``jupyter-mcp``, use it,
so its variables and the record of what ran on it (which cells are fresh) carry over between
commands. It stops by itself after ``--idle-timeout`` seconds without an execution (default
one hour, or ``$JUPYTER_JCLI_KERNEL_IDLE_TIMEOUT``): its supervisor process, started with it,
stops it, so nothing leaks even when no command runs again. ``-j`` prints one document::

    {"schema_version": 1, "status": "ok", "operation": "kernel_start", "started": bool,
     "kernel": <entry>}
    {"schema_version": 1, "status": "ok", "operation": "kernel_list", "kernels": [<entry>...]}

where an entry is :func:`entry_dict`'s. With ``--server-url`` (or ``$JUPYTER_JCLI_SERVER_URL``)
every subcommand works on that Jupyter Server's notebook sessions instead
(:mod:`jupyter_jcli.cli._kernel_server`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from jupyter_jcli.cli._emit import echo, emit_json, json_mode
from jupyter_jcli.cli._server_options import server_from, server_options, store_options
from jupyter_jcli.errors import SCHEMA_VERSION, ErrorCode, KernelError, UsageError

if TYPE_CHECKING:
    from jupyter_jcli.kernels import KernelEntry, ServerConfig

__all__ = ["entry_dict", "kernel", "notebook_kernel_path"]

_COMMAND_WIDTH = 60
"""Widest started-by command in the ``kernel list`` table."""
_IDLE_HELP = (
    "Seconds without an execution after which the kernel stops by itself "
    "(default: $JUPYTER_JCLI_KERNEL_IDLE_TIMEOUT or 3600)."
)


def _iso(stamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp))


def entry_dict(entry: KernelEntry) -> dict[str, Any]:
    """One registered kernel as JSON: ``notebook_path``, ``kernelspec``, ``pid``, ``epoch``,
    ``state``, ``started``, ``idle_since`` (ISO 8601 UTC), ``idle_timeout_s``,
    ``started_by`` (who: ``"j-cli pid 123"``), ``started_command`` (the command line that
    started it, ``None`` when not recorded), ``users`` (who uses it and still runs, most
    recent first), ``running_cell``, ``busy_gone`` (the command running the code has ended,
    killed, so nobody will record how it ends: the kernel may still run it, and the next
    command on the notebook finds out), ``keep``, ``transport``, ``connection_file``,
    ``kernel_id``, ``server_url``, ``runs`` (cells recorded on its epoch)."""
    from jupyter_jcli.kernels import KernelRegistry
    from jupyter_jcli.kernels._shared_busy import busy_facts

    busy = entry.busy or {}
    facts = busy_facts(entry) if entry.state == "busy" else None
    return {
        "notebook_path": entry.notebook_path,
        "kernelspec": entry.kernelspec,
        "pid": entry.pid,
        "epoch": entry.epoch,
        "state": entry.state,
        "started": _iso(entry.started),
        "idle_since": _iso(entry.idle_since) if entry.state != "busy" else None,
        "idle_timeout_s": entry.idle_timeout,
        "started_by": entry.started_by,
        "started_command": entry.started_command,
        "users": entry.present_users(),
        "running_cell": busy.get("cell") if entry.state == "busy" else None,
        "busy_gone": bool(facts and facts.get("busy_gone")),
        "keep": entry.keep,
        "transport": entry.transport,
        "connection_file": entry.connection_file,
        "kernel_id": entry.kernel_id,
        "server_url": entry.server_url,
        "runs": len(KernelRegistry().runs_of(entry)),
    }


def notebook_kernel_path(file: str) -> Path:
    """The resolved ``.ipynb`` whose kernel ``file`` names (a paired script names its
    notebook's).

    Raises:
        NotebookError: the read codes of ``Document.load`` for a script.
    """
    path = Path(file).expanduser()
    if path.suffix == ".ipynb":
        return path.resolve()
    from jupyter_jcli.notebook.document import Document

    return Document.load(path).notebook_path.resolve()


def _kernelspec(file: str, kernel_name: str | None) -> str:
    if kernel_name:
        return kernel_name
    from jupyter_jcli.kernels import kernelspec_name_from_metadata
    from jupyter_jcli.notebook.store import open_notebook

    document = open_notebook(file)  # in the command's store (--store)
    return kernelspec_name_from_metadata(document.notebook_dict().get("metadata"))


def _not_running(path: Path) -> KernelError:
    return KernelError(
        ErrorCode.KERNEL_NOT_RUNNING,
        "no live kernel for this notebook (start one: j-cli kernel start)",
        {"notebook_path": str(path)},
    )


def _document(operation: str, **fields: Any) -> None:
    emit_json({"schema_version": SCHEMA_VERSION, "status": "ok", "operation": operation, **fields})


def _report(operation: str, entry: KernelEntry, started: bool, verb: str) -> None:
    if json_mode():
        _document(operation, started=started, kernel=entry_dict(entry))
        return
    what = verb if started else "already running"
    echo(
        f"{what}: {entry.kernelspec} kernel pid {entry.pid} epoch {entry.epoch[:12]} for "
        f"{entry.notebook_path} (stops after {entry.idle_timeout:g} s idle)"
    )


def _server(
    server_url: str | None = None, token: str | None = None, server_root: str | None = None
) -> ServerConfig | None:
    return server_from(server_url, token, server_root)


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
@server_options
def start_command(
    file: str, *, kernel_name: str | None, idle_timeout: float | None, **where: str | None
) -> None:
    """Start NB's kernel and leave it running (nothing happens if one already runs)."""
    import anyio

    from jupyter_jcli.kernels import DEFAULT_STARTUP_TIMEOUT, KernelRegistry, start_registered
    from jupyter_jcli.kernels import idle_timeout as resolve_idle

    server = _server(**where)
    path = notebook_kernel_path(file)
    spec = _kernelspec(file, kernel_name)
    if server is not None:
        from jupyter_jcli.cli._kernel_server import server_start

        if idle_timeout is not None:
            raise UsageError(
                "--idle-timeout is for local kernels; the server culls its own idle kernels.",
                {"idle_timeout": idle_timeout},
            )
        server_start(server, path, spec)
        return
    limit = resolve_idle(idle_timeout)

    async def start() -> tuple[KernelEntry, bool]:
        return await start_registered(
            KernelRegistry(),
            path,
            kernelspec=spec,
            keep=True,
            idle_timeout=limit,
            startup_timeout=DEFAULT_STARTUP_TIMEOUT,
        )

    entry, started = anyio.run(start)
    if not started and kernel_name and entry.kernelspec != kernel_name:
        raise KernelError(
            ErrorCode.KERNELSPEC_MISMATCH,
            f"the notebook's kernel already runs kernelspec {entry.kernelspec!r}, not "
            f"{kernel_name!r}: to switch (its variables are lost), j-cli kernel restart "
            f"{file} --kernel {kernel_name}",
            {
                "kernelspec": kernel_name,
                "running_kernelspec": entry.kernelspec,
                "notebook_path": str(path),
            },
        )
    _report("kernel_start", entry, started, "started")


@kernel.command("list")
@server_options
def list_command(**where: str | None) -> None:
    """The live kernels: notebook, kernelspec, pid, epoch, state, started, idle since, who
    started it (and with which command), who uses it now."""
    from jupyter_jcli.cli._document_render import table
    from jupyter_jcli.kernels import KernelRegistry

    server = _server(**where)
    if server is not None:
        from jupyter_jcli.cli._kernel_server import server_list

        server_list(server)
        return
    entries = KernelRegistry().entries()
    if json_mode():
        _document(
            "kernel_list",
            kernels=[entry_dict(e) for e in entries],
        )
        return
    if not entries:
        echo("no live kernels")
        return
    rows = []
    for entry in entries:
        shown = entry_dict(entry)
        rows.append(
            [
                entry.notebook_path,
                entry.kernelspec,
                str(entry.pid),
                entry.epoch[:12],
                entry.state,
                shown["started"],
                shown["idle_since"] or "-",
                _started_by(entry),
                ", ".join(shown["users"]) or "-",
            ]
        )
    header = ["notebook", "kernelspec", "pid", "epoch", "state", "started", "idle since",
              "started by", "users"]  # fmt: skip
    for line in table(header, rows):
        echo(line)


def _started_by(entry: KernelEntry) -> str:
    """Who started the kernel and with which command: ``"j-cli pid 12: j-cli kernel start
    nb.ipynb"`` (the command clipped to :data:`_COMMAND_WIDTH`)."""
    command = entry.started_command
    if not command:
        return entry.started_by
    if len(command) > _COMMAND_WIDTH:
        command = command[: _COMMAND_WIDTH - 1] + "…"
    return f"{entry.started_by}: {command}"


@kernel.command("stop")
@store_options
@click.argument("file", metavar="NB", required=False)
@click.option("--all", "stop_all", is_flag=True, help="Stop every live kernel.")
@server_options
def stop_command(file: str | None, *, stop_all: bool, **where: str | None) -> None:
    """Stop NB's kernel (or every kernel with --all); its variables are gone."""
    import anyio

    from jupyter_jcli.kernels import KernelRegistry, stop_for_everyone

    if (file is None) == (not stop_all):
        raise UsageError("Give NB or --all.", {"notebook": file, "all": stop_all})
    server = _server(**where)
    if server is not None:
        from jupyter_jcli.cli._kernel_server import server_stop

        server_stop(server, notebook_kernel_path(file) if file is not None else None)
        return
    registry = KernelRegistry()
    if stop_all:
        paths = [Path(e.notebook_path) for e in registry.entries()]
    else:
        assert file is not None
        paths = [notebook_kernel_path(file)]

    async def stop() -> list[KernelEntry]:
        stopped = []
        for path in paths:
            entry = await stop_for_everyone(registry, path)
            if entry is not None:
                stopped.append(entry)
        return stopped

    stopped = anyio.run(stop)
    if file is not None and not stopped:
        raise _not_running(paths[0])
    if json_mode():
        _document(
            "kernel_stop",
            stopped=[entry_dict(e) for e in stopped],
        )
        return
    for entry in stopped:
        echo(f"stopped {entry.kernelspec} kernel pid {entry.pid} for {entry.notebook_path}")
    if not stopped:
        echo("no live kernels")


@kernel.command("restart")
@store_options
@click.argument("file", metavar="NB")
@click.option(
    "--kernel", "kernel_name", metavar="NAME", help="Kernelspec to start instead of the notebook's."
)
@server_options
def restart_command(file: str, *, kernel_name: str | None, **where: str | None) -> None:
    """Restart NB's kernel (start one if none runs): a new epoch, every cell stale. A cell
    another command runs on it is interrupted first."""
    import anyio

    from jupyter_jcli.kernels import KernelRegistry
    from jupyter_jcli.workbench import shared_workbench

    server = _server(**where)
    path = notebook_kernel_path(file)
    if server is not None:
        from jupyter_jcli.cli._kernel_server import server_restart

        try:
            server_restart(server, path, _kernelspec(file, kernel_name), named=bool(kernel_name))
        except KernelError as err:
            from jupyter_jcli.cli._exec import kernel_hinted

            hinted = kernel_hinted(err, restart_switches=False)
            if hinted is err:
                raise
            raise hinted from err
        return
    was_running = KernelRegistry().live(path) is not None

    async def restart() -> None:
        async with shared_workbench(keep=True) as workbench:
            await workbench.restart_kernel(file, kernel_name=kernel_name)

    try:
        anyio.run(restart)  # a kernelspec not installed is refused before the kernel stops
    except KernelError as err:
        from jupyter_jcli.cli._exec import kernel_hinted

        hinted = kernel_hinted(err)
        if hinted is err:
            raise
        raise hinted from err
    entry = KernelRegistry().live(path)
    if entry is None:
        raise _not_running(path)
    if json_mode():
        _document(
            "kernel_restart",
            started=not was_running,
            restarted=was_running,
            kernel=entry_dict(entry),
        )
        return
    _report("kernel_restart", entry, True, "restarted" if was_running else "started")


@kernel.command("interrupt")
@store_options
@click.argument("file", metavar="NB")
@server_options
def interrupt_command(file: str, **where: str | None) -> None:
    """Interrupt the cell running on NB's kernel (the variables are kept)."""
    from contextlib import suppress

    from jupyter_jcli.kernels import KernelRegistry, interrupt_registered, process_name

    server = _server(**where)
    path = notebook_kernel_path(file)
    if server is not None:
        from jupyter_jcli.cli._kernel_server import server_interrupt

        server_interrupt(server, path)
        return
    registry = KernelRegistry()
    entry = registry.live(path)
    if entry is None:
        raise _not_running(path)
    # recorded first: the command running the cell then reports it interrupted, by us (a
    # registry that stays locked loses only that attribution, never the interrupt)
    with suppress(KernelError):
        registry.record_interrupt(path, entry.epoch, process_name(), "kernel_interrupted")
    interrupt_registered(entry)
    if json_mode():
        _document(
            "kernel_interrupt",
            kernel=entry_dict(entry),
        )
    else:
        running = (entry.busy or {}).get("cell")
        echo(f"interrupted {running or 'the kernel'} on {entry.notebook_path}")
