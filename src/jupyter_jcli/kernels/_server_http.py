"""The kernel layer's REST calls of a Jupyter Server (kernelspecs, sessions, kernels), on
the one client of :mod:`jupyter_jcli.server` (its error boundary, raising
:class:`KernelError`).

:func:`start_refusals` narrows the boundary for the request that starts a kernel, made after
the token was accepted: an error status there is the server refusing that kernel
(``KERNEL_START_REFUSED``, with the server's reason), as Enterprise Gateway does (HTTP 403)
for a ``KERNEL_USERNAME`` in ``EG_UNAUTHORIZED_USERS`` or missing from a non-empty
``EG_AUTHORIZED_USERS``, or over a kernel limit.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, ClassVar
from urllib.parse import quote

from jupyter_jcli.errors import ErrorCode, JcliError, KernelError
from jupyter_jcli.server import ServerClient

__all__ = [
    "ServerApi",
    "kernel_path",
    "named_id",
    "no_sessions",
    "session_body",
    "start_refusals",
]


@contextmanager
def start_refusals(doing: str, server_url: str, kernel_username: str | None) -> Iterator[None]:
    """Around the request that starts a kernel (``POST api/kernels`` or ``api/sessions``),
    made after the server accepted the token: its HTTP error status becomes
    ``KERNEL_START_REFUSED`` (see the module docstring); every other error passes unchanged.

    Raises:
        KernelError: ``KERNEL_START_REFUSED``, details ``status``, ``path``, ``reason`` (the
            server's own words, when it gave them), ``server_url`` and ``kernel_username``
            (the ``KERNEL_USERNAME`` sent, when one was).
    """
    try:
        yield
    except KernelError as exc:
        status = exc.details.get("status")
        if exc.code not in (ErrorCode.SERVER_ERROR, ErrorCode.SERVER_AUTH_FAILED):
            raise
        if not isinstance(status, int) or status < 400:
            raise
        said = exc.details.get("reason")
        details = {**exc.details, "server_url": server_url}
        advice = ""
        if kernel_username is not None:
            details["kernel_username"] = kernel_username
            if status in (401, 403):
                advice = (
                    f"; a gateway may refuse the kernel's user (KERNEL_USERNAME "
                    f"{kernel_username!r}): pass one it authorizes with --kernel-username "
                    "or JUPYTER_JCLI_KERNEL_USERNAME"
                )
        raise KernelError(
            ErrorCode.KERNEL_START_REFUSED,
            f"{doing}: the server refused to start the kernel (HTTP {status}"
            + (f": {said})" if said else ")")
            + advice,
            details,
        ) from exc


class ServerApi(ServerClient):
    """The kernel layer's REST calls of one Jupyter Server (a
    :class:`~jupyter_jcli.server.ServerClient` raising :class:`KernelError`:
    ``SERVER_UNREACHABLE``, ``SERVER_AUTH_FAILED``, ``SERVER_ERROR``). Close it with
    :meth:`aclose`.
    """

    error: ClassVar[type[JcliError]] = KernelError

    async def kernelspecs(self) -> list[str]:
        """The kernelspec names the server can start, sorted."""
        answer = await self.request("GET", "api/kernelspecs", "listing the server's kernelspecs")
        specs = answer.get("kernelspecs") if isinstance(answer, dict) else None
        if not isinstance(specs, dict):
            raise KernelError(
                ErrorCode.SERVER_ERROR,
                "the Jupyter Server's kernelspec list has no 'kernelspecs' mapping",
                {"path": "api/kernelspecs"},
            )
        return sorted(specs)

    async def require_kernelspec(self, spec: str) -> None:
        """Check that the server can start kernelspec ``spec``.

        Raises:
            KernelError: ``KERNELSPEC_NOT_FOUND`` (details ``kernelspec``, ``installed``,
                ``server_url``); as the class says.
        """
        installed = await self.kernelspecs()
        if spec not in installed:
            raise KernelError(
                ErrorCode.KERNELSPEC_NOT_FOUND,
                f"the Jupyter Server has no kernelspec {spec!r}; set the notebook's "
                f"kernelspec to one of: {', '.join(installed) or '(none)'}",
                {"kernelspec": spec, "installed": installed, "server_url": self.config.url},
            )

    async def sessions(self) -> list[dict[str, Any]] | None:
        """The server's sessions; ``None`` when it has no sessions API to list (HTTP 404, or
        403 as Jupyter Kernel Gateway answers unless kernel listing is enabled).

        Jupyter Server answers 403 to a wrong or missing token too, so a 403 is taken for a
        gateway only when the server accepts the token for its kernelspecs, which every
        server and gateway lists.

        Raises:
            KernelError: ``SERVER_AUTH_FAILED`` when the token is refused; as the class says.
        """
        try:
            answer = await self.request("GET", "api/sessions", "listing sessions", missing_ok=True)
        except KernelError as exc:
            if exc.details.get("status") != 403:
                raise
            await self.kernelspecs()  # a refused token is refused here too: SERVER_AUTH_FAILED
            return None
        if answer is None:
            return None
        if not isinstance(answer, list):
            raise KernelError(
                ErrorCode.SERVER_ERROR,
                "the Jupyter Server's session list is not a JSON list",
                {"path": "api/sessions"},
            )
        return [item for item in answer if isinstance(item, dict)]

    async def create_session(
        self, body: Mapping[str, Any], timeout: float
    ) -> tuple[str, dict[str, Any]]:
        """``POST api/sessions`` (a :func:`session_body`), bounded by ``timeout`` s: the new
        session's id and model (its kernel's id: :func:`named_id` of ``model.get("kernel")``).

        Raises:
            KernelError: ``KERNEL_START_REFUSED`` (:func:`start_refusals`); as the class says.
        """
        doing = "creating the notebook's session"
        with start_refusals(doing, self.config.url, None):
            model = await self.request("POST", "api/sessions", doing, body=body, timeout=timeout)
        return named_id(model, doing), model

    async def start_kernel(self, spec: str, env: Mapping[str, str], timeout: float) -> str:
        """``POST api/kernels`` of kernelspec ``spec`` with ``env`` (a gateway passes its
        ``KERNEL_*`` variables to the kernel), bounded by ``timeout`` s: the kernel's id.

        Raises:
            KernelError: ``KERNEL_START_REFUSED`` (:func:`start_refusals`); as the class says.
        """
        doing, body = "starting a kernel", {"name": spec, "env": dict(env)}
        with start_refusals(doing, self.config.url, env.get("KERNEL_USERNAME")):
            model = await self.request("POST", "api/kernels", doing, body=body, timeout=timeout)
        return named_id(model, doing)

    async def kernel(self, kernel_id: str) -> dict[str, Any] | None:
        """The kernel's model, or ``None`` when the server has no such kernel (404)."""
        answer = await self.request(
            "GET", kernel_path(kernel_id), "checking the kernel", missing_ok=True
        )
        return answer if isinstance(answer, dict) else None


def kernel_path(kernel_id: str, action: str | None = None) -> str:
    """``api/kernels/{id}`` (or ``.../{action}``), the id URL-escaped."""
    path = f"api/kernels/{quote(kernel_id, safe='')}"
    return f"{path}/{action}" if action else path


def session_body(path: str, name: str, spec: str) -> dict[str, Any]:
    """The ``POST api/sessions`` body of a notebook (server ``path``, file ``name``) on
    kernelspec ``spec``: ``type: notebook``, as JupyterLab creates it."""
    return {"path": path, "type": "notebook", "name": name, "kernel": {"name": spec}}


def no_sessions(server_url: str) -> KernelError:
    """``KERNEL_START_FAILED`` for a kernel meant to outlive us on a server without sessions."""
    return KernelError(
        ErrorCode.KERNEL_START_FAILED,
        "this server keeps no sessions (a kernel gateway): its kernels live only as long as "
        "the command that starts them",
        {"server_url": server_url, "reason": "no sessions API"},
    )


def named_id(model: object, doing: str) -> str:
    """The ``id`` of a kernel or session model the server answered with.

    Raises:
        KernelError: ``SERVER_ERROR`` when it names none.
    """
    ident = model.get("id") if isinstance(model, dict) else None
    if not isinstance(ident, str) or not ident:
        raise KernelError(
            ErrorCode.SERVER_ERROR,
            f"{doing}: the Jupyter Server's answer names no kernel id",
            {"reason": "no kernel id"},
        )
    return ident
