"""The notebooks' live kernels as operations: start, list, stop, restart, interrupt.

What ``j-cli kernel start|list|stop|restart|interrupt`` does, as functions any front end
calls (the command line renders their results; ``jupyter-mcp`` can offer the same): on this
machine the registry's kernels (:class:`~jupyter_jcli.kernels.KernelRegistry`: a kernel
started here outlives the process, every later command and ``jupyter-mcp`` join it, its
supervisor stops it after its idle timeout); with a
:class:`~jupyter_jcli.kernels.ServerConfig`, that Jupyter Server's notebook sessions (a
kernel started there is a session JupyterLab shows and reuses). Each result is the kernel's
record (:class:`~jupyter_jcli.kernels.KernelEntry` or
:class:`~jupyter_jcli.kernels.ServerSession`); :func:`kernel_dict` gives its JSON shape.
A stop this process asks for (interrupt, restart, stop) is recorded first in the kernel's
records, so the process running a cell on it reports it ``interrupted``, naming us.
"""

from __future__ import annotations

import dataclasses
import time
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jupyter_jcli.errors import ErrorCode, KernelError, UsageError

if TYPE_CHECKING:
    from jupyter_jcli.kernels import KernelEntry, ServerConfig, ServerSession

__all__ = [
    "entry_dict",
    "interrupt_live_kernel",
    "kernel_dict",
    "kernel_notebook_path",
    "list_live_kernels",
    "live_kernel_not_running",
    "restart_live_kernel",
    "session_dict",
    "start_live_kernel",
    "stop_live_kernels",
]


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
    from jupyter_jcli.kernels import KernelRegistry, busy_facts

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
        "runs": len(KernelRegistry().executions_of(entry)),
    }


def session_dict(session: ServerSession) -> dict[str, Any]:
    """A server kernel with the keys of :func:`entry_dict`, in its order (those the server
    does not know are ``None``: ``pid``, ``started``), plus ``session_id`` and
    ``connections`` (how many clients it has). Our ledger
    (:meth:`~jupyter_jcli.kernels.ServerLedger.facts`) gives ``keep`` (``false``: a process
    of ours created the session for its run and deletes it when it exits; ``true`` when kept
    or created by none of ours), ``started_command`` (the command line that created it,
    ``None``: none of ours), ``epoch`` (while its runs are trusted, as the overview trusts
    them, else ``None``), ``runs`` (cells recorded on ``epoch``), and, while the server says
    the kernel is busy, ``running_cell`` and ``busy_gone`` from what a process of ours
    recorded running there (as :func:`entry_dict`)."""
    from jupyter_jcli.kernels import ServerLedger, busy_facts

    facts = session.facts or ServerLedger(session.server_url).facts(
        session.notebook_path, session.kernel_id, session.last_activity
    )
    running = busy_facts(facts) if session.state == "busy" else None
    return {
        "notebook_path": str(session.notebook_path),
        "kernelspec": session.kernelspec,
        "pid": None,
        "epoch": facts.epoch,
        "state": session.state,
        "started": None,
        "idle_since": session.last_activity if session.state != "busy" else None,
        "idle_timeout_s": None,
        "started_by": session.started_by,
        "started_command": facts.started_command,
        "users": [],
        "running_cell": running["running_cell"] if running else None,
        "busy_gone": bool(running and running["busy_gone"]),
        "keep": facts.keep,
        "transport": "server",
        "connection_file": None,
        "kernel_id": session.kernel_id,
        "server_url": session.server_url,
        "runs": facts.runs,
        "session_id": session.session_id,
        "connections": session.connections,
    }


def kernel_dict(kernel: KernelEntry | ServerSession) -> dict[str, Any]:
    """A live kernel as JSON: :func:`entry_dict` or :func:`session_dict`."""
    from jupyter_jcli.kernels import KernelEntry

    return entry_dict(kernel) if isinstance(kernel, KernelEntry) else session_dict(kernel)


def kernel_notebook_path(file: str | Path) -> Path:
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


def _kernelspec(file: str | Path, kernel_name: str | None) -> str:
    if kernel_name:
        return kernel_name
    from jupyter_jcli.kernels import kernelspec_name_from_metadata
    from jupyter_jcli.notebook.store import open_notebook

    document = open_notebook(file)  # in the command's store (--store)
    return kernelspec_name_from_metadata(document.notebook_dict().get("metadata"))


def live_kernel_not_running(path: Path) -> KernelError:
    """``KERNEL_NOT_RUNNING`` for the notebook at ``path`` (details ``notebook_path``)."""
    return KernelError(
        ErrorCode.KERNEL_NOT_RUNNING,
        "no live kernel for this notebook (start one: j-cli kernel start, or the MCP tool "
        "start_kernel)",
        {"notebook_path": str(path)},
    )


async def start_live_kernel(
    file: str | Path,
    *,
    kernel_name: str | None = None,
    idle_timeout: float | None = None,
    server: ServerConfig | None = None,
) -> tuple[KernelEntry | ServerSession, bool]:
    """Start the notebook's kernel and leave it running; nothing when one already runs.
    Returns the kernel and whether this call started it.

    Args:
        file: the notebook (or its paired script).
        kernel_name: the kernelspec to start instead of the notebook's.
        idle_timeout: seconds without an execution after which a local kernel stops by
            itself (default ``$JUPYTER_JCLI_KERNEL_IDLE_TIMEOUT`` or one hour).
        server: start it as a session of this Jupyter Server instead.

    Raises:
        UsageError: ``USAGE_ERROR`` for an idle timeout with a server, or not > 0.
        KernelError: ``KERNELSPEC_MISMATCH`` when the running kernel runs another
            kernelspec than ``kernel_name``; ``KERNELSPEC_NOT_FOUND``,
            ``KERNEL_START_FAILED``, a server's ``SERVER_*`` codes.
    """
    from jupyter_jcli.kernels import DEFAULT_STARTUP_TIMEOUT

    path = kernel_notebook_path(file)
    spec = _kernelspec(file, kernel_name)
    if server is not None:
        from jupyter_jcli.kernels import start_session

        if idle_timeout is not None:
            raise UsageError(
                "--idle-timeout is for local kernels; the server culls its own idle kernels.",
                {"idle_timeout": idle_timeout},
            )
        return await start_session(server, path, kernelspec=spec, timeout=DEFAULT_STARTUP_TIMEOUT)
    from jupyter_jcli.kernels import KernelRegistry, start_registered
    from jupyter_jcli.kernels import idle_timeout as resolve_idle

    entry, started = await start_registered(
        KernelRegistry(),
        path,
        kernelspec=spec,
        keep=True,
        idle_timeout=resolve_idle(idle_timeout),
        startup_timeout=DEFAULT_STARTUP_TIMEOUT,
    )
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
    return entry, started


async def list_live_kernels(
    server: ServerConfig | None = None,
) -> list[KernelEntry] | list[ServerSession]:
    """The live kernels: the registry's, or ``server``'s notebook sessions."""
    if server is not None:
        from jupyter_jcli.kernels import notebook_sessions

        return await notebook_sessions(server)
    from jupyter_jcli.kernels import KernelRegistry

    return KernelRegistry().entries()


async def _session_or_fail(server: ServerConfig, path: Path) -> ServerSession:
    from jupyter_jcli.kernels import notebook_session

    session = await notebook_session(server, path)
    if session is None:
        raise live_kernel_not_running(path)
    return session


def _asking(server: ServerConfig, session: ServerSession, reason: str) -> None:
    """Note in the server's ledger that this process stops the session's running cell
    (``reason`` as :meth:`~jupyter_jcli.kernels.ServerLedger.record_interrupt`), so the
    process running it ends it ``interrupted`` and names us, as with a local kernel."""
    from jupyter_jcli.kernels import ServerLedger, process_name

    ledger = ServerLedger(server.url)
    ledger.record_interrupt(session.notebook_path, None, process_name(), reason)


async def stop_live_kernels(
    file: str | Path | None, *, server: ServerConfig | None = None
) -> list[KernelEntry] | list[ServerSession]:
    """Stop the notebook's kernel (``file`` ``None``: every live kernel); its variables are
    gone. Returns the kernels stopped, each as stopped, local or server alike: ``state``
    ``stopping``, no runs (its records went with it), the rest as it was.

    Raises:
        KernelError: ``KERNEL_NOT_RUNNING`` when ``file``'s notebook has none; a server's
            ``SERVER_*`` codes.
    """
    path = kernel_notebook_path(file) if file is not None else None
    if server is not None:
        from jupyter_jcli.kernels import ServerLedger, notebook_sessions, stop_session

        chosen = await notebook_sessions(server) if path is None else []
        if path is not None:
            chosen = [await _session_or_fail(server, path)]
        stopped_sessions = []
        for session in chosen:
            ledger = ServerLedger(server.url)  # read before the stop forgets it
            facts = ledger.facts(session.notebook_path, session.kernel_id, session.last_activity)
            _asking(server, session, "kernel_shutdown")
            await stop_session(server, session)
            facts = dataclasses.replace(facts, runs=0)
            stopped_sessions.append(dataclasses.replace(session, state="stopping", facts=facts))
        return stopped_sessions
    from jupyter_jcli.kernels import KernelRegistry, stop_for_everyone

    registry = KernelRegistry()
    paths = [Path(e.notebook_path) for e in registry.entries()] if path is None else [path]
    stopped = []
    for each in paths:
        entry = await stop_for_everyone(registry, each)
        if entry is not None:
            stopped.append(entry)
    if path is not None and not stopped:
        raise live_kernel_not_running(path)
    return stopped


async def restart_live_kernel(
    file: str | Path, *, kernel_name: str | None = None, server: ServerConfig | None = None
) -> tuple[KernelEntry | ServerSession, bool]:
    """Restart the notebook's kernel (start one if none runs): a new epoch, every cell
    stale; a cell another process runs on it is interrupted first. Returns the kernel and
    whether one was restarted (``False``: started).

    On a server the session's kernel restarts in place; a kernelspec named with
    ``kernel_name`` is checked first (the server has it, the session runs it: a restart in
    place cannot switch).

    Raises:
        KernelError: ``KERNELSPEC_NOT_FOUND`` (before the kernel stops),
            ``KERNELSPEC_MISMATCH``, ``KERNEL_BUSY``, ``KERNEL_START_FAILED``,
            ``KERNEL_NOT_RUNNING``, a server's ``SERVER_*`` codes.
    """
    from jupyter_jcli.kernels import DEFAULT_STARTUP_TIMEOUT

    path = kernel_notebook_path(file)
    if server is not None:
        from jupyter_jcli.kernels import (
            notebook_session,
            require_session_kernelspec,
            restart_session,
            start_session,
        )

        spec = _kernelspec(file, kernel_name)
        current = await notebook_session(server, path)
        if current is None:
            made, _ = await start_session(
                server, path, kernelspec=spec, timeout=DEFAULT_STARTUP_TIMEOUT
            )
            return made, False
        if kernel_name:
            await require_session_kernelspec(server, current, spec)
        _asking(server, current, "kernel_restarted")
        await restart_session(server, current, timeout=DEFAULT_STARTUP_TIMEOUT)
        return await notebook_session(server, path) or current, True
    from jupyter_jcli.kernels import KernelRegistry
    from jupyter_jcli.workbench._shared_workbench import shared_workbench

    was_running = KernelRegistry().live(path) is not None
    async with shared_workbench(keep=True) as workbench:
        await workbench.restart_kernel(file, kernel_name=kernel_name)
    entry = KernelRegistry().live(path)
    if entry is None:
        raise live_kernel_not_running(path)
    return entry, was_running


async def interrupt_live_kernel(
    file: str | Path, *, server: ServerConfig | None = None
) -> KernelEntry | ServerSession:
    """Interrupt the cell running on the notebook's kernel (the variables are kept); the
    interrupt is recorded first, so the process running the cell reports it
    ``interrupted``, by us (records that stay locked lose only that attribution).

    Raises:
        KernelError: ``KERNEL_NOT_RUNNING``; a server's ``SERVER_*`` codes.
    """
    path = kernel_notebook_path(file)
    if server is not None:
        from jupyter_jcli.kernels import interrupt_session

        session = await _session_or_fail(server, path)
        _asking(server, session, "kernel_interrupted")
        await interrupt_session(server, session)
        return session
    from jupyter_jcli.kernels import KernelRegistry, interrupt_registered, process_name

    registry = KernelRegistry()
    entry = registry.live(path)
    if entry is None:
        raise live_kernel_not_running(path)
    with suppress(KernelError):
        registry.record_interrupt(path, entry.epoch, process_name(), "kernel_interrupted")
    interrupt_registered(entry)
    return entry
