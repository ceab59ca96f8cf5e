"""A Jupyter Server kernel that outlives the command that started it (``j-cli run
--server-url URL --keep``).

:class:`KeptServerBackend` makes sure the server has a session for the notebook
(:func:`~jupyter_jcli.kernels.start_session`, as JupyterLab creates one), then joins it as
:class:`~jupyter_jcli.kernels.ServerBackend` joins any session, so its shutdown leaves the
session, and its kernel, on the server: later commands, ``j-cli kernel list``, ``stop`` and
JupyterLab find it there. A session it created is reported as ours (not ``attached``: its
whole history is this command's); one that was already there is joined as usual.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import anyio

from jupyter_jcli.kernels._server import ServerBackend
from jupyter_jcli.kernels._server_sessions import start_session, stop_session
from jupyter_jcli.kernels._types import KernelOrigin

__all__ = ["KeptServerBackend"]


class KeptServerBackend(ServerBackend):
    """:class:`~jupyter_jcli.kernels.ServerBackend` on the notebook's session, created when
    the server has none and left running at shutdown (see the module docstring)."""

    _made = False

    @property
    def origin(self) -> KernelOrigin:
        origin = super().origin
        if self._made and origin.attached:
            return dataclasses.replace(origin, attached=False, started_by=None)
        return origin

    async def start(
        self, *, kernelspec_name: str, cwd: Path, startup_timeout: float, notebook_path: Path
    ) -> None:
        """Create the notebook's session if the server has none, then join it.

        Raises:
            KernelError: the codes of :func:`~jupyter_jcli.kernels.start_session` (also
                ``KERNEL_START_FAILED`` for a server that keeps no sessions) and of
                :meth:`ServerBackend.start`; a session this call created is deleted again.
        """
        session, made = await start_session(
            self.config, notebook_path, kernelspec=kernelspec_name, timeout=startup_timeout
        )
        self._made = made
        try:
            await super().start(
                kernelspec_name=kernelspec_name,
                cwd=cwd,
                startup_timeout=startup_timeout,
                notebook_path=notebook_path,
            )
        except BaseException:
            if made:
                with anyio.CancelScope(shield=True), anyio.move_on_after(5.0):
                    await stop_session(self.config, session)
            raise
