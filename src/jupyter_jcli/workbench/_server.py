"""Kernels on a Jupyter Server, and the rules for a kernel shared with someone else.

A :class:`~jupyter_jcli.workbench.Workbench` built for a server (``Workbench(server=...)``)
takes its kernels from :func:`jupyter_jcli.kernels.backend_factory` for that
:class:`~jupyter_jcli.kernels.ServerConfig`. Such a backend may join a kernel that someone
else started (a notebook a person has open in JupyterLab): its
:class:`~jupyter_jcli.kernels.KernelOrigin` is ``attached``. Its history is unknown to us, so:

- **freshness**: joining mints a new epoch (an attached kernel brings none), so no run
  recorded before counts and every code cell reads ``never_run`` (not run *by us* on this
  kernel; the person may have run it) until it runs on that kernel; the file's outputs and
  execution counts never make a cell fresh (:mod:`jupyter_jcli.workbench._execution_log`);
- **restart**: wiping the person's variables needs an explicit ``force``
  (:func:`refuse_shared_restart`: ``KERNEL_SHARED``);
- **joining** runs nothing (:func:`join`), so in server mode ``inspect_variable`` and
  ``restart_kernel`` join the notebook's kernel when none is live instead of failing with
  ``KERNEL_NOT_RUNNING``; reads (the overview) never start or join anything.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from jupyter_jcli import kernels
from jupyter_jcli.errors import ErrorCode, KernelError, UsageError
from jupyter_jcli.kernels import (
    SERVER_TOKEN_ENV,
    KernelInfo,
    KernelPool,
    NotebookKernel,
    ServerConfig,
)
from jupyter_jcli.notebook.store import NotebookStore
from jupyter_jcli.notebook.stores import SERVER_STORES, StoreChoice, store_kind

__all__ = [
    "join",
    "refuse_shared_restart",
    "server_from_options",
    "server_pool",
    "store_choice_of",
    "stores_from_options",
]

_PLACEHOLDER = re.compile(
    r"\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}"  # Claude Code
    r"|\{env:[A-Za-z_][A-Za-z0-9_]*\}"  # OpenCode
)
"""A host's reference to an environment variable (``${VAR}``, ``${VAR:-x}``, ``{env:VAR}``)."""


def server_from_options(
    url: str | None,
    token: str | None,
    server_root: str | os.PathLike[str] | None,
    *,
    kernel_username: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> ServerConfig | None:
    """The server a front end's ``--server-url``/``--token``/``--server-root`` and
    ``--kernel-username`` (or the ``JUPYTER_JCLI_*`` variables) name:
    :func:`jupyter_jcli.kernels.server_config`,
    plus one check for the way hosts pass the token (``j-cli setup`` writes a reference to
    ``JUPYTER_JCLI_SERVER_TOKEN``, never its value): a token that is still such a reference
    means the host did not expand it, and sending it would only fail later as a wrong token.

    Raises:
        UsageError: ``USAGE_ERROR`` for a bad URL, a root without a URL, or an
            unexpanded token reference (details ``option``; the token is never echoed).
    """
    server = kernels.server_config(
        url, token, server_root, kernel_username=kernel_username, environ=environ
    )
    if server is not None and server.token and _PLACEHOLDER.fullmatch(server.token.strip()):
        raise UsageError(
            "the server token is an unexpanded reference to an environment variable: the "
            f"host did not substitute it. Export {SERVER_TOKEN_ENV} in the environment the "
            "host starts its servers from.",
            {"option": "token", "variable": SERVER_TOKEN_ENV},
        )
    return server


def store_choice_of(store: NotebookStore | StoreChoice | None) -> StoreChoice | None:
    """``store`` as a :class:`~jupyter_jcli.notebook.stores.StoreChoice` (a store: every
    notebook in it; ``None`` stays ``None``: local files)."""
    if store is None or isinstance(store, StoreChoice):
        return store
    return StoreChoice.of(store)


def server_of_store(choice: StoreChoice | None) -> ServerConfig | None:
    """The server a store choice's kernels run on (``NotebookStore.kernel_place``: a
    ``collab`` or ``contents`` store's notebook is the server's, so is its kernel), else
    ``None`` (``local``, ``auto`` or a fixed store: the kernels the caller's ``server``
    names)."""
    if choice is None or choice.kind not in SERVER_STORES or not choice.server_url:
        return None
    url = choice.server_url if choice.server_url.endswith("/") else choice.server_url + "/"
    return ServerConfig(url, choice.token, server_root=choice.server_root)


def stores_from_options(
    store: str | None,
    server: ServerConfig | None,
    *,
    environ: Mapping[str, str] | None = None,
) -> StoreChoice:
    """The store choice a front end's ``--store`` (or ``$JUPYTER_JCLI_STORE``) and its
    server (:func:`server_from_options`) name; local paths of a server store are taken
    relative to the root the kernel layer maps notebooks with (``--server-root``, the
    server's own ``root_dir``, else the current folder), so a notebook and its kernel's
    session agree.

    Raises:
        UsageError: ``USAGE_ERROR``: an unknown store; ``collab`` or ``contents`` without a
            server URL; the kernel layer's refusal of a ``--server-root`` that is not the
            server's.
    """
    kind = store_kind(store, environ=environ)
    if server is None or kind == "local":
        return StoreChoice(kind, environ=environ)
    return StoreChoice(
        kind,
        server_url=server.url,
        token=server.token,
        server_root=server.server_root,
        path_root=kernels.server_root(server),
        environ=environ,
    )


def server_pool(server: ServerConfig) -> KernelPool:
    """A pool whose kernels live on ``server`` (:func:`jupyter_jcli.kernels.backend_factory`),
    each execution holding the notebook's cross-process execution lock (``locks``: the
    registry's): two of our processes never run cells on one notebook's server kernel at
    once (the second gets ``KERNEL_BUSY``); its records are the server's
    :class:`~jupyter_jcli.kernels.ServerLedger`.

    Raises:
        KernelError: the codes of ``backend_factory`` (``SERVER_UNREACHABLE`` in a build
            without the Jupyter Server backend).
    """
    factory = kernels.backend_factory(server)
    return KernelPool(
        backend_factory=factory,
        records=kernels.ServerLedger(server.url),
        locks=kernels.KernelRegistry(),
    )


async def join(kernel: NotebookKernel) -> KernelInfo:
    """Start the notebook's kernel, or join the one its backend finds (a server session),
    without sending it any request (a request would queue behind a cell the person is
    running, and a timeout would interrupt their cell); returns the kernel's state.

    Raises:
        KernelError: ``KERNELSPEC_NOT_FOUND``, ``KERNEL_START_FAILED``, the backend's
            ``SERVER_*`` codes (the start is bounded by the pool's startup timeout).
    """
    # The kernel layer's own start path (under its life lock, a live kernel kept): the same
    # step execute() takes first, without the execution.
    await kernel._ensure_started()
    return await kernel.info()


async def join_to_plan(kernel: NotebookKernel, server: ServerConfig | None) -> bool:
    """On a server, join the notebook's kernel (or start it) before a plan of what to run
    is made: a server kernel is joined lazily, and before the join its epoch is unknown, so
    every cell would read not fresh and be run again, whatever its ledger
    (:class:`~jupyter_jcli.kernels.ServerLedger`) says ran on it. Call it holding the kernel
    (the plan and the run see one state); nothing with local kernels (the registry's are
    joined by ``is_alive``). Returns whether it started a new kernel (not one it joined): the
    call's ``kernel_started``, which the run can no longer see.

    Raises:
        KernelError: as :func:`join`.
    """
    if server is None or kernel.epoch is not None:
        return False
    was_alive = await kernel.is_alive()
    info = await join(kernel)
    return not was_alive and info.epoch is not None and not info.origin.attached


def refuse_shared_restart(info: KernelInfo, *, force: bool, notebook_path: Path) -> None:
    """Refuse to restart a kernel someone else started unless ``force``.

    Raises:
        KernelError: ``KERNEL_SHARED`` (details ``notebook_path``, ``started_by``,
            ``kernel_id``, ``server_url``) when ``info`` says ``attached`` and not ``force``.
    """
    origin = info.origin
    if not origin.attached or force:
        return
    who = origin.started_by or "someone else"
    raise KernelError(
        ErrorCode.KERNEL_SHARED,
        f"this notebook's kernel is shared (started by {who}): a restart would wipe their "
        "variables too. Pass force (the restart_kernel argument force: true) to restart it anyway.",
        {
            "notebook_path": str(notebook_path),
            "started_by": origin.started_by,
            "kernel_id": origin.kernel_id,
            "server_url": origin.server_url,
        },
    )
