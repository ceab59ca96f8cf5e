"""The Jupyter Server backend: a kernel of a Jupyter Server, Hub, Kernel Gateway or Enterprise
Gateway, reached with REST (start, interrupt, restart, stop) and its WebSocket (messages).

Joining: when the server has a session for the notebook's path
(:func:`~jupyter_jcli.kernels.server_root`), its kernel is used (``origin.attached``);
otherwise a session is created (``POST api/sessions``, ``type: notebook``), so JupyterLab
shows and reuses the kernel. A server without sessions to list (Kernel and Enterprise
Gateway) gets ``POST api/kernels`` with ``env`` ``KERNEL_USERNAME`` and
``KERNEL_WORKING_DIR`` (the notebook's folder; Enterprise Gateway's container kernels start
there only with ``EG_MIRROR_WORKING_DIRS=true``). Shutdown deletes only what this backend
created; restart is in place (``POST api/kernels/{id}/restart``: same kernel id).

Death: the kernel is gone (``is_alive`` false, a running execution ends ``died``) on the
lifecycle messages :mod:`~jupyter_jcli.kernels._server_ws` watches for, when the server no
longer has it (asked every :data:`LIVENESS_INTERVAL` s), or when its WebSocket does not
reopen within :data:`~jupyter_jcli.kernels._server_ws.RECONNECT_WINDOW`; while it reopens,
``is_alive`` waits for the outcome. A shutdown through the server interrupts the kernel
first (``jupyter_client`` does), so a cell may end with a ``KeyboardInterrupt`` we did not
ask for before the ``shutdown_reply`` arrives: the backend then probes the kernel before it
hands out the reply; a kernel shutting down never answers (the request ends ``died``), one
merely interrupted does (the cell ends ``error``).

Our own restart is over when the server answered ``POST .../restart`` and the new process
answered a probe; from then on a lifecycle message counts only when it is about that process
(its ``header.session``), so the old process's farewell read late is known for what it is:
no fixed quiet time.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit, urlunsplit

import anyio

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels._channels import ExecuteRequests
from jupyter_jcli.kernels._server_frames import V1_PROTOCOL, new_message
from jupyter_jcli.kernels._server_http import (
    ServerApi,
    kernel_path,
    no_sessions,
)
from jupyter_jcli.kernels._server_ledger import ServerLedger, witness
from jupyter_jcli.kernels._server_sessions import open_session
from jupyter_jcli.kernels._server_ws import MAX_MESSAGE_BYTES, RECONNECT_WINDOW, KernelChannels
from jupyter_jcli.kernels._translate import parent_id
from jupyter_jcli.kernels._types import LOCAL_ORIGIN, KernelMessage, KernelOrigin
from jupyter_jcli.server import (
    CONNECT_TIMEOUT,
    ServerConfig,
    kernel_username,
    server_errors,
    websocket_options,
)

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

__all__ = ["KERNEL_WORKING_DIR", "ServerBackend"]

LIVENESS_INTERVAL = 3.0
"""Seconds between the REST checks :meth:`ServerBackend.is_alive` makes of the kernel."""
LIVENESS_TIMEOUT = 2.0
"""Seconds one such check may take; an unanswered check decides nothing."""
CONFIRM_TIMEOUT = RECONNECT_WINDOW + 5.0
"""Seconds the probe after a ``KeyboardInterrupt`` we did not cause may take (longer than a
reconnect, whose failure also decides); unanswered, the cell's error stands."""
KERNEL_WORKING_DIR = "KERNEL_WORKING_DIR"
"""The kernel environment variable Enterprise Gateway takes as the kernel's working folder."""


class ServerBackend(ExecuteRequests):
    """One kernel of a Jupyter Server (:class:`~jupyter_jcli.kernels.KernelBackend`, and
    :class:`~jupyter_jcli.kernels.InPlaceRestart`); see the module docstring.

    Args:
        config: the server (:class:`~jupyter_jcli.kernels.ServerConfig`).
        protocols: the WebSocket subprotocols offered (default: the v1 binary framing); the
            server picks one, or the legacy JSON framing when it knows none of them (``()``
            offers none: always legacy).
        keep: the kernel outlives this backend (``j-cli run --server-url URL --keep``): a
            session for the notebook is created when the server has none (a server without
            sessions: ``KERNEL_START_FAILED``) and left running at shutdown, so later
            commands, ``j-cli kernel list``, ``stop`` and JupyterLab find it there.
    """

    def __init__(
        self,
        config: ServerConfig,
        *,
        protocols: Sequence[str] = (V1_PROTOCOL,),
        keep: bool = False,
    ):
        self.config = config
        self._keep = keep
        self._protocols = tuple(protocols)
        self._api: ServerApi | None = None
        self._channels: KernelChannels | None = None
        self._kernel_id: str | None = None
        self._created: str | None = None  # the REST path we delete at shutdown
        self._origin = LOCAL_ORIGIN
        self._framing: str | None = None
        self._checked = time.monotonic()
        self._interrupted = False  # whether we interrupted the execute request running
        self._notebook: Path | None = None  # the notebook whose session (and ledger) we use
        self._epoch: str | None = None  # the epoch our runs on it are recorded under
        # Jupyter Server answers a kernel WebSocket's handshake only after the kernel answers
        # its kernel_info request (or the server gives up waiting), so the handshake right
        # after a start lasts as long as the kernel's start-up: start() bounds it by the
        # start's own budget, not by the connect timeout meant for reaching the server.
        self._handshake_timeout = CONNECT_TIMEOUT

    @property
    def pid(self) -> int | None:
        """Always ``None``: the server does not say which process runs the kernel."""
        return None

    @property
    def origin(self) -> KernelOrigin:
        return self._origin

    async def installed_kernelspecs(self) -> list[str] | None:
        """The server's kernelspecs once started (:class:`~jupyter_jcli.kernels.
        KernelspecCatalogue`); ``None`` before: a start may join the notebook's session,
        whatever its kernelspec, so only the start can tell.

        Raises:
            KernelError: ``SERVER_UNREACHABLE``, ``SERVER_AUTH_FAILED``, ``SERVER_ERROR``.
        """
        return None if self._api is None else await self._api.kernelspecs()

    @property
    def kernel_id(self) -> str | None:
        """The server's id of the kernel, once started."""
        return self._kernel_id

    @property
    def framing(self) -> str | None:
        """The WebSocket framing in use (``v1.kernel.websocket.jupyter.org`` or ``None``:
        legacy JSON) the server selected at start (kept after a shutdown)."""
        return self._framing

    async def start(
        self, *, kernelspec_name: str, cwd: Path, startup_timeout: float, notebook_path: Path
    ) -> None:
        """Join the notebook's session kernel, or start one; open its channels; wait until
        it answers ``kernel_info`` (everything within ``startup_timeout`` s).

        Raises:
            KernelError: ``KERNELSPEC_NOT_FOUND`` (details ``kernelspec``, ``installed``),
                ``KERNEL_START_FAILED`` (not ready in time), ``KERNEL_START_REFUSED`` (the
                server's reason: a gateway refusing ``KERNEL_USERNAME``),
                ``SERVER_PATH_OUTSIDE_ROOT``, ``SERVER_UNREACHABLE``, ``SERVER_AUTH_FAILED``,
                ``SERVER_ERROR``. Nothing this backend created is left on the server.
        """
        self._api = api = ServerApi(self.config)
        try:
            with anyio.fail_after(startup_timeout):
                await self._join_or_create(
                    api, kernelspec_name, cwd, notebook_path, startup_timeout
                )
                self._handshake_timeout = max(CONNECT_TIMEOUT, startup_timeout)
                channels = KernelChannels(self._connect, self._kernel_gone)
                self._channels = channels
                self._framing = await channels.open()
                await channels.wait_ready(startup_timeout)
                await self._adopt(api, channels)
                if self._keep:
                    self._created = None  # the session stays when we leave
        except BaseException as exc:
            await self.shutdown(now=True, timeout=2.0)
            if not isinstance(exc, TimeoutError):
                raise
            raise KernelError(
                ErrorCode.KERNEL_START_FAILED,
                f"the server's kernel {kernelspec_name!r} was not ready within "
                f"{startup_timeout:g} s",
                {"kernelspec": kernelspec_name, "server_url": self.config.url},
            ) from exc

    async def _join_or_create(
        self, api: ServerApi, spec: str, cwd: Path, notebook_path: Path, limit: float
    ) -> None:
        found = await open_session(api, notebook_path, spec, limit, keep=self._keep)
        started_by = None  # of a session we join: who opened it
        if found is not None:
            session, created = found
            self._kernel_id, self._notebook = session.kernel_id, notebook_path
            if created:
                self._created = f"api/sessions/{quote(session.session_id, safe='')}"
            else:
                started_by = session.started_by
        elif self._keep:
            raise no_sessions(self.config.url)
        else:
            await api.require_kernelspec(spec)
            user = kernel_username(self.config)
            env = {KERNEL_WORKING_DIR: str(cwd), **({"KERNEL_USERNAME": user} if user else {})}
            self._kernel_id = await api.start_kernel(spec, env, limit)
            self._created = kernel_path(self._kernel_id)
        self._origin = KernelOrigin(
            attached=started_by is not None,
            started_by=started_by,
            kernel_id=self._kernel_id,
            server_url=self.config.url,
        )

    async def _adopt(self, api: ServerApi, channels: KernelChannels) -> None:
        """The kernel's epoch: its ledger's when we join it as one of ours left it."""
        notebook, ident = self._notebook, self._kernel_id
        if notebook is None or ident is None:
            return
        seen = None
        if self._created is None:  # joined: is it as the last of us left it?
            model = await api.kernel(ident) or {}
            seen = witness(model.get("last_activity"), channels.process)
        ledger, process = ServerLedger(self.config.url), channels.process
        self._epoch = ledger.adopt(notebook, ident, seen, uuid.uuid4().hex, process)
        self._origin = dataclasses.replace(self._origin, epoch=self._epoch)

    async def _connect(self, session: str) -> ClientConnection:
        from websockets.asyncio.client import connect
        from websockets.typing import Subprotocol

        assert self._kernel_id is not None
        base = urlsplit(self.config.url)
        secure, path = base.scheme == "https", base.path + kernel_path(self._kernel_id, "channels")
        url = urlunsplit(
            ("wss" if secure else "ws", base.netloc, path, f"session_id={quote(session)}", "")
        )
        with server_errors("opening the kernel's WebSocket", self.config.url, error=KernelError):
            return await connect(
                url,
                **websocket_options(self.config, url),
                subprotocols=[Subprotocol(p) for p in self._protocols] or None,
                open_timeout=self._handshake_timeout,
                max_size=MAX_MESSAGE_BYTES,
            )

    async def _kernel_gone(self) -> bool:
        api, ident = self._api, self._kernel_id
        model = None if api is None or ident is None else await api.kernel(ident)
        return model is None or model.get("execution_state") == "dead"

    async def is_alive(self) -> bool:
        """Whether the kernel we know runs: channels open (or reopening) and no report of
        its death (see the module docstring); while the WebSocket is being reopened, waits
        (bounded) for the outcome. At most every :data:`LIVENESS_INTERVAL` s it also asks the
        server (bounded by :data:`LIVENESS_TIMEOUT`): a kernel someone shut down through the
        server may leave our WebSocket open and silent."""
        channels = self._channels
        if channels is None or not await channels.settled():
            return False
        now = time.monotonic()
        if now - self._checked >= LIVENESS_INTERVAL:
            self._checked = now
            with anyio.move_on_after(LIVENESS_TIMEOUT):
                await channels.ask_server()  # unreachable: the WebSocket's reconnect decides
        return channels.usable

    async def _send_execute_request(self, content: dict[str, Any]) -> str:
        """Send it over the WebSocket.

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` also once the connection is lost;
                ``SERVER_UNREACHABLE`` while it is down.
        """
        channels = self._live()
        msg = new_message("execute_request", content, channels.session)
        self._interrupted = False
        await channels.send(msg)
        return str(msg["header"]["msg_id"])

    async def next_iopub(self, timeout: float) -> KernelMessage | None:
        """The next iopub message of our requests, or ``None`` after ``timeout`` seconds.

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` once shut down or lost (queued messages are
                handed out first).
        """
        return await self._live().receive("iopub", timeout)

    async def next_shell_reply(self, timeout: float) -> KernelMessage | None:
        """The next shell reply, or ``None`` after ``timeout`` seconds. A reply that ends in
        a ``KeyboardInterrupt`` we did not cause is handed out only once the kernel answered
        a probe (bounded by :data:`CONFIRM_TIMEOUT`): when it is gone, ``None``
        (:meth:`is_alive` is then false, and the request ends ``died``); see the module
        docstring.

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` once shut down or lost.
        """
        channels = self._live()
        reply = await channels.receive("shell", timeout)
        ename = ((reply or {}).get("content") or {}).get("ename")
        if ename == "KeyboardInterrupt" and not self._interrupted:
            with anyio.move_on_after(CONFIRM_TIMEOUT):
                with contextlib.suppress(KernelError):  # gone or lost: is_alive says so
                    await channels.probe()
            if not channels.usable:
                return None
        return reply

    async def shell_free(self, timeout: float) -> bool:
        """Whether the kernel's shell channel serves a ``kernel_info`` request (it runs no
        code) within ``timeout`` s (:class:`~jupyter_jcli.kernels._busy.ShellProbe`): the
        shell serves one request at a time, so a kernel still running another client's code
        answers only once that code ended; ``True`` as well when the kernel is gone (nothing
        runs on it). A late answer is skipped by the requests after it (not theirs).

        Raises:
            KernelError: ``SERVER_*`` when the probe cannot be sent.
        """
        channels = self._live()
        probe = new_message("kernel_info_request", {}, channels.session)
        try:
            await channels.send(probe)
        except KernelError as err:
            if err.code != ErrorCode.KERNEL_NOT_RUNNING:
                raise
            return True  # closed or gone
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0 and channels.usable:
            try:
                reply = await channels.receive("shell", min(left, LIVENESS_INTERVAL))
            except KernelError:  # closed or lost: nothing runs on it for us
                return True
            if reply is not None and parent_id(reply) == probe["header"]["msg_id"]:
                return True
            if reply is None and not await self.is_alive():
                return True
        return not channels.usable

    async def interrupt(self) -> None:
        """``POST api/kernels/{id}/interrupt`` (the server signals or messages the kernel as
        its kernelspec says).

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` when not started; ``SERVER_*``.
        """
        self._live()
        assert self._api is not None and self._kernel_id is not None
        self._interrupted = True
        await self._api.request(
            "POST", kernel_path(self._kernel_id, "interrupt"), "interrupting the kernel"
        )

    async def restart(self, *, timeout: float) -> None:
        """Restart the kernel in place (``POST api/kernels/{id}/restart``): same kernel id,
        new process, so every client (JupyterLab) stays on it; wait until the new process
        answers (see the module docstring: no fixed quiet time).

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` when not started, or when the kernel is gone
                before the new process answered; ``KERNEL_START_FAILED`` when it does not
                answer within ``timeout`` s; ``SERVER_*``.
        """
        channels = self._live()
        assert self._api is not None and self._kernel_id is not None
        channels.watching = False
        if self._notebook is not None:  # none of the recorded runs holds after the restart
            self._epoch = None
            ServerLedger(self.config.url).start_afresh(self._notebook)
        path = kernel_path(self._kernel_id, "restart")
        await self._api.request("POST", path, "restarting the kernel", timeout=timeout)
        try:
            await channels.wait_ready(timeout)
        except TimeoutError as exc:
            raise KernelError(
                ErrorCode.KERNEL_START_FAILED,
                f"the restarted kernel did not answer within {timeout:g} s",
                {"kernel_id": self._kernel_id, "server_url": self.config.url},
            ) from exc

    async def shutdown(self, *, now: bool, timeout: float) -> None:
        """Close the channels; delete the session or kernel this backend created (a joined
        kernel is left running, its ledger witnessed: :mod:`~jupyter_jcli.kernels._server_ledger`),
        bounded by ``timeout`` s; never raises."""
        channels, api, created = self._channels, self._api, self._created
        self._channels = self._api = self._created = None
        with anyio.CancelScope(shield=True):
            process = channels.process if channels is not None else None
            if channels is not None:
                await channels.close()
            if api is None:
                return
            await self._leave_ledger(api, process, deleting=created is not None)
            if created is not None:
                with anyio.move_on_after(max(timeout, 1.0) + 1.0):
                    with contextlib.suppress(KernelError):  # server or kernel already gone
                        await api.request(
                            "DELETE", created, "stopping the kernel", timeout=max(timeout, 1.0)
                        )
            await api.aclose()

    async def checkpoint(self) -> None:
        """Leave the ledger's witness and stay on the kernel (a batch of ours ended), so a
        process joining next trusts what ran (``jupyter-mcp`` and ``j-cli`` on one kernel);
        bounded, never raises."""
        api, channels = self._api, self._channels
        if api is not None and channels is not None:
            await self._leave_ledger(api, channels.process, deleting=False)

    async def _leave_ledger(self, api: ServerApi, process: str | None, *, deleting: bool) -> None:
        """Forget the notebook's ledger when we delete its kernel, else leave its witness
        (none after a restart of ours, or while the kernel is busy); bounded by
        :data:`LIVENESS_TIMEOUT`, never raises."""
        notebook, ident = self._notebook, self._kernel_id
        if notebook is None or ident is None:
            return
        ledger, bound = ServerLedger(self.config.url), anyio.move_on_after(LIVENESS_TIMEOUT)
        with anyio.CancelScope(shield=True), bound, contextlib.suppress(KernelError, OSError):
            if deleting:
                ledger.forget(notebook)
            else:
                model = await api.kernel(ident) or {}  # not while someone's cell runs:
                seen = witness(model.get("last_activity"), process)
                if self._epoch and seen and model.get("execution_state") != "busy":
                    ledger.leave(notebook, ident, self._epoch, seen)

    def _live(self) -> KernelChannels:
        if self._channels is None:
            raise KernelError(ErrorCode.KERNEL_NOT_RUNNING, "the server kernel is not started")
        return self._channels
