"""``j-cli kernel start|list|stop|restart|interrupt --server-url URL``: the live kernels of a
Jupyter Server, which are its notebook sessions (:mod:`jupyter_jcli.kernels`'s
``notebook_sessions``): a kernel started here is a session JupyterLab shows and reuses, and
stays until stopped (or culled by the server); a session a person opened is listed and
controlled the same way. ``-j`` prints the documents of :mod:`jupyter_jcli.cli._kernel`, each
kernel as :func:`session_dict`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from jupyter_jcli.cli._emit import echo, json_mode
from jupyter_jcli.cli._kernel import _document, _not_running

if TYPE_CHECKING:
    from jupyter_jcli.kernels import ServerConfig, ServerSession

__all__ = [
    "server_interrupt",
    "server_list",
    "server_restart",
    "server_start",
    "server_stop",
    "session_dict",
]


def session_dict(session: ServerSession) -> dict[str, Any]:
    """A server kernel with the keys of :func:`~jupyter_jcli.cli._kernel.entry_dict` (those
    the server does not know are ``None``: ``pid``, ``epoch``, ``started``), plus
    ``session_id`` and ``connections`` (how many clients it has)."""
    return {
        "notebook_path": str(session.notebook_path),
        "kernelspec": session.kernelspec,
        "pid": None,
        "epoch": None,
        "state": session.state,
        "started": None,
        "idle_since": session.last_activity if session.state != "busy" else None,
        "idle_timeout_s": None,
        "started_by": f"server session {session.name or session.session_id}",
        "users": [],
        "running_cell": None,
        "keep": True,
        "transport": "server",
        "connection_file": None,
        "kernel_id": session.kernel_id,
        "server_url": session.server_url,
        "runs": 0,
        "session_id": session.session_id,
        "connections": session.connections,
    }


def _line(verb: str, session: ServerSession) -> str:
    return (
        f"{verb}: {session.kernelspec} kernel {session.kernel_id} on {session.server_url} for "
        f"{session.notebook_path}"
    )


def _asking(server: ServerConfig, session: ServerSession, reason: str) -> None:
    """Note in the server's ledger that this command stops the session's running cell
    (``reason`` as :meth:`~jupyter_jcli.kernels.ServerLedger.record_interrupt`), so the
    command running it ends it ``interrupted`` and names us, as with a local kernel."""
    from jupyter_jcli.kernels import ServerLedger, process_name

    ledger = ServerLedger(server.url)
    ledger.record_interrupt(session.notebook_path, None, process_name(), reason)


async def _session_or_fail(server: ServerConfig, path: Path) -> ServerSession:
    from jupyter_jcli.kernels import notebook_session

    session = await notebook_session(server, path)
    if session is None:
        raise _not_running(path)
    return session


def server_start(server: ServerConfig, path: Path, spec: str) -> None:
    """``kernel start NB``: the notebook's session, created when the server has none."""
    from jupyter_jcli.kernels import DEFAULT_STARTUP_TIMEOUT, start_session

    session, started = anyio.run(
        lambda: start_session(server, path, kernelspec=spec, timeout=DEFAULT_STARTUP_TIMEOUT)
    )
    if json_mode():
        _document("kernel_start", started=started, kernel=session_dict(session))
    else:
        echo(_line("started" if started else "already running", session))


def server_list(server: ServerConfig) -> None:
    """``kernel list``: the server's notebook sessions."""
    from jupyter_jcli.cli._document_render import table
    from jupyter_jcli.kernels import notebook_sessions

    sessions = anyio.run(notebook_sessions, server)
    if json_mode():
        _document("kernel_list", kernels=[session_dict(s) for s in sessions])
        return
    if not sessions:
        echo(f"no live kernels on {server.url}")
        return
    header = ["notebook", "kernelspec", "kernel id", "state", "last activity", "connections"]
    rows = [
        [
            str(s.notebook_path),
            s.kernelspec or "-",
            s.kernel_id,
            s.state or "-",
            s.last_activity or "-",
            str(s.connections) if s.connections is not None else "-",
        ]
        for s in sessions
    ]
    for line in table(header, rows):
        echo(line)


def server_stop(server: ServerConfig, path: Path | None) -> None:
    """``kernel stop NB|--all``: delete the notebook's session (every one with ``None``)."""
    from jupyter_jcli.kernels import notebook_sessions, stop_session

    async def stop() -> list[ServerSession]:
        chosen = await notebook_sessions(server) if path is None else []
        if path is not None:
            chosen = [await _session_or_fail(server, path)]
        for session in chosen:
            _asking(server, session, "kernel_shutdown")
            await stop_session(server, session)
        return chosen

    stopped = anyio.run(stop)
    if json_mode():
        _document("kernel_stop", stopped=[session_dict(s) for s in stopped])
        return
    for session in stopped:
        echo(_line("stopped", session))
    if not stopped:
        echo(f"no live kernels on {server.url}")


def server_restart(server: ServerConfig, path: Path, spec: str, *, named: bool = False) -> None:
    """``kernel restart NB``: restart the session's kernel in place, or start a session; a
    kernelspec ``named`` with ``--kernel`` is checked first (the server has it, the session
    runs it: a restart in place cannot switch)."""
    from jupyter_jcli.kernels import (
        DEFAULT_STARTUP_TIMEOUT,
        notebook_session,
        require_session_kernelspec,
        restart_session,
        start_session,
    )

    async def restart() -> tuple[ServerSession, bool]:
        current = await notebook_session(server, path)
        if current is None:
            made, _ = await start_session(
                server, path, kernelspec=spec, timeout=DEFAULT_STARTUP_TIMEOUT
            )
            return made, False
        if named:
            await require_session_kernelspec(server, current, spec)
        _asking(server, current, "kernel_restarted")
        await restart_session(server, current, timeout=DEFAULT_STARTUP_TIMEOUT)
        return await notebook_session(server, path) or current, True

    session, restarted = anyio.run(restart)
    if json_mode():
        kernel = session_dict(session)
        _document("kernel_restart", started=not restarted, restarted=restarted, kernel=kernel)
    else:
        echo(_line("restarted" if restarted else "started", session))


def server_interrupt(server: ServerConfig, path: Path) -> None:
    """``kernel interrupt NB``: interrupt the session's kernel."""
    from jupyter_jcli.kernels import interrupt_session

    async def interrupt() -> ServerSession:
        session = await _session_or_fail(server, path)
        _asking(server, session, "kernel_interrupted")
        await interrupt_session(server, session)
        return session

    session = anyio.run(interrupt)
    if json_mode():
        _document("kernel_interrupt", kernel=session_dict(session))
    else:
        echo(_line("interrupted", session))
