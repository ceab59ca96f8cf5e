"""A Jupyter Server's notebook sessions (``api/sessions``) as the live kernels of ``j-cli
kernel``: started, listed, interrupted, restarted and stopped through its REST API.

On a server the sessions are the registry: a kernel started here (a new session, as
JupyterLab makes one) stays until someone stops it or the server culls it, and a session a
person opened is handled the same way. A server without sessions (Kernel Gateway) has no
notebook kernels.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels._server_http import ServerApi, kernel_path, no_sessions, session_body
from jupyter_jcli.kernels._server_ledger import ServerLedger, SessionFacts
from jupyter_jcli.server import ServerConfig, server_path, server_root

__all__ = [
    "ServerSession",
    "interrupt_session",
    "notebook_session",
    "notebook_sessions",
    "restart_session",
    "start_session",
    "stop_session",
]


@dataclass(frozen=True)
class ServerSession:
    """One notebook session of a Jupyter Server and its kernel.

    Attributes:
        notebook_path: the notebook on this machine (the server root joined with ``path``).
        path: the server's path of the notebook.
        session_id: the session's id.
        name: the session's name (JupyterLab: the notebook's file name).
        kernel_id: the kernel's id.
        kernelspec: the kernel's kernelspec name.
        state: the kernel's ``execution_state`` (``idle``, ``busy``, ``starting``...).
        last_activity: when the kernel last did something (ISO 8601, as the server says).
        connections: how many clients (WebSockets) the kernel has.
        server_url: the server's base URL.
        facts: what our ledger said of it when it was stopped (its entry is gone then);
            ``None``: read it when it is shown (:meth:`ServerLedger.facts`).
    """

    notebook_path: Path
    path: str
    session_id: str
    name: str | None
    kernel_id: str
    kernelspec: str | None
    state: str | None
    last_activity: str | None
    connections: int | None
    server_url: str
    facts: SessionFacts | None = None

    @property
    def started_by(self) -> str:
        """Who opened the session, as a kernel joined through it reports it (``started_by``)."""
        name, ident = self.name, self.session_id
        return f"server session {f'{name!r} ({ident})' if name else ident}"


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _session(model: dict[str, Any], root: Path, url: str) -> ServerSession | None:
    kernel, path, ident = model.get("kernel"), _text(model.get("path")), _text(model.get("id"))
    if not isinstance(kernel, dict) or path is None or ident is None:
        return None
    kernel_id = _text(kernel.get("id"))
    notebook = model.get("type") == "notebook" or path.endswith(".ipynb")
    if kernel_id is None or not notebook or PurePosixPath(path).is_absolute() or ".." in path:
        return None
    connections = kernel.get("connections")
    return ServerSession(
        notebook_path=(root / path).resolve(),
        path=path,
        session_id=ident,
        name=_text(model.get("name")),
        kernel_id=kernel_id,
        kernelspec=_text(kernel.get("name")),
        state=_text(kernel.get("execution_state")),
        last_activity=_text(kernel.get("last_activity")),
        connections=connections if isinstance(connections, int) else None,
        server_url=url,
    )


def _parsed(models: list[dict[str, Any]] | None, config: ServerConfig) -> list[ServerSession]:
    root = server_root(config)
    found = (_session(model, root, config.url) for model in models or ())
    return sorted((s for s in found if s is not None), key=lambda s: str(s.notebook_path))


async def notebook_sessions(config: ServerConfig) -> list[ServerSession]:
    """The server's notebook sessions, sorted by notebook path.

    Raises:
        KernelError: ``SERVER_UNREACHABLE``, ``SERVER_AUTH_FAILED``, ``SERVER_ERROR``.
    """
    async with ServerApi(config) as api:
        return _parsed(await api.sessions(), config)


async def notebook_session(config: ServerConfig, notebook_path: Path) -> ServerSession | None:
    """The session of ``notebook_path`` on the server, ``None`` when it has none.

    Raises:
        KernelError: ``SERVER_PATH_OUTSIDE_ROOT``; the codes of :func:`notebook_sessions`.
    """
    path = server_path(notebook_path, server_root(config), error=KernelError)
    return next((s for s in await notebook_sessions(config) if s.path == path), None)


async def start_session(
    config: ServerConfig, notebook_path: Path, *, kernelspec: str, timeout: float
) -> tuple[ServerSession, bool]:
    """The notebook's session: the one the server has, or one created now (``type:
    notebook``, as JupyterLab creates it), which stays after this process ends.

    Returns:
        ``(session, started)``: whether this call created it.

    Raises:
        KernelError: ``KERNELSPEC_NOT_FOUND`` (details ``kernelspec``, ``installed``),
            ``KERNEL_START_FAILED`` (a server without sessions), ``KERNEL_START_REFUSED``
            (the server answered the start with an error), the codes of
            :func:`notebook_session`.
    """
    async with ServerApi(config) as api:
        found = await open_session(api, notebook_path, kernelspec, timeout, keep=True)
    if found is None:
        raise no_sessions(config.url)
    return found


async def open_session(
    api: ServerApi, notebook_path: Path, kernelspec: str, timeout: float, *, keep: bool
) -> tuple[ServerSession, bool] | None:
    """:func:`start_session` through ``api`` (the server backend's join or start);
    ``None`` when the server keeps no sessions (a kernel gateway). A session created here is
    noted in the ledger as this process's (:meth:`ServerLedger.created`): ``keep``, whether
    it stays after this process exits. Raises as :func:`start_session` does."""
    models = await api.sessions()
    if models is None:
        return None
    config, root = api.config, server_root(api.config)
    path = server_path(notebook_path, root, error=KernelError)
    current = next((s for s in _parsed(models, config) if s.path == path), None)
    if current is not None:
        return current, False
    await api.require_kernelspec(kernelspec)
    _, model = await api.create_session(session_body(path, notebook_path.name, kernelspec), timeout)
    made = _session(model, root, config.url)
    if made is None:
        raise KernelError(
            ErrorCode.SERVER_ERROR,
            "the Jupyter Server's new session names no kernel",
            {"path": "api/sessions", "server_url": config.url},
        )
    with contextlib.suppress(KernelError, OSError):  # unnoted, it lists as none of ours
        ServerLedger(config.url).created(notebook_path, made.kernel_id, keep=keep)
    return made, True


async def stop_session(config: ServerConfig, session: ServerSession) -> None:
    """Delete the session, which stops its kernel (gone already: nothing to do), then the
    kernel's ledger entry and execution log (:meth:`ServerLedger.forget`; one left behind, should
    that fail, counts for nothing: the next kernel starts the ledger afresh).

    Raises:
        KernelError: ``SERVER_UNREACHABLE``, ``SERVER_AUTH_FAILED``, ``SERVER_ERROR``.
    """
    async with ServerApi(config) as api:
        where = f"api/sessions/{quote(session.session_id, safe='')}"
        await api.request("DELETE", where, "stopping the notebook's session", missing_ok=True)
    with contextlib.suppress(KernelError, OSError):
        ServerLedger(config.url).forget(session.notebook_path, session.kernel_id)


async def interrupt_session(config: ServerConfig, session: ServerSession) -> None:
    """Interrupt the session's kernel (its variables are kept).

    Raises:
        KernelError: ``KERNEL_NOT_RUNNING`` when the server no longer has the kernel; the
            codes of :func:`stop_session`.
    """
    await _kernel_action(config, session, "interrupt", "interrupting the kernel", None)


async def require_session_kernelspec(
    config: ServerConfig, session: ServerSession, kernelspec: str
) -> None:
    """Before a restart that names ``kernelspec``: the server must have it, and the session's
    kernel must run it (a restart in place keeps the session's kernelspec, so another name
    could not be honoured). Nothing is changed.

    Raises:
        KernelError: ``KERNELSPEC_NOT_FOUND`` (details ``kernelspec``, ``installed``,
            ``server_url``), ``KERNELSPEC_MISMATCH`` (details ``kernelspec``,
            ``running_kernelspec``, ``notebook_path``); the ``SERVER_*`` codes.
    """
    async with ServerApi(config) as api:
        await api.require_kernelspec(kernelspec)
    if session.kernelspec is not None and session.kernelspec != kernelspec:
        raise KernelError(
            ErrorCode.KERNELSPEC_MISMATCH,
            f"the notebook's session on the server runs kernelspec {session.kernelspec!r}, "
            f"not {kernelspec!r}, and a restart keeps its kernelspec: nothing was restarted. "
            "Stop the session and start it with that kernelspec to switch.",
            {
                "kernelspec": kernelspec,
                "running_kernelspec": session.kernelspec,
                "notebook_path": str(session.notebook_path),
            },
        )


async def restart_session(config: ServerConfig, session: ServerSession, *, timeout: float) -> None:
    """Restart the session's kernel in place (same kernel id: JupyterLab stays on it).

    Raises:
        KernelError: as :func:`interrupt_session`.
    """
    await _kernel_action(config, session, "restart", "restarting the kernel", timeout)


async def _kernel_action(
    config: ServerConfig, session: ServerSession, action: str, doing: str, timeout: float | None
) -> None:
    async with ServerApi(config) as api:
        if await api.kernel(session.kernel_id) is None:
            raise KernelError(
                ErrorCode.KERNEL_NOT_RUNNING,
                "the server no longer has the notebook's kernel",
                {"notebook_path": str(session.notebook_path), "kernel_id": session.kernel_id},
            )
        await api.request("POST", kernel_path(session.kernel_id, action), doing, timeout=timeout)
