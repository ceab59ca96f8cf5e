"""Kernels: one persistent kernel per notebook behind a transport-neutral async interface.

- :class:`KernelPool`: one :class:`NotebookKernel` per resolved notebook path, started lazily
  on its first execution, in the notebook's folder, with the notebook's kernelspec
  (:func:`kernelspec_name_from_metadata`); :meth:`KernelPool.shutdown_all` at exit.
- :class:`NotebookKernel`: :meth:`~NotebookKernel.execute` (bounded by a timeout, never two at
  once, stdin refused, death detected) -> :class:`ExecutionResult`;
  :meth:`~NotebookKernel.evaluate` (silent, for inspection) -> :class:`EvaluationResult`;
  ``interrupt``, ``restart`` (new epoch), ``shutdown``, ``info`` -> :class:`KernelInfo`
  (an interrupt, restart or shutdown ends the running execution ``interrupted``, with its
  reason, :data:`InterruptReason`, and its outputs so far; a restart or shutdown stops it
  before it closes the kernel);
  ``hold()`` keeps the kernel for a batch of cells so no other caller runs in between.
  Each start and restart mints a new epoch, the stamp freshness is judged against
  (:func:`jupyter_jcli.analysis.fresh_cells`).
- :class:`KernelBackend`: the transport: :class:`LocalBackend` on ``jupyter_client``, or
  :class:`ServerBackend`, a kernel of a Jupyter Server (JupyterLab, JupyterHub, Kernel or
  Enterprise Gateway) over REST and its WebSocket, joining the session a person has open for
  the notebook (:class:`KernelOrigin` ``attached``); :func:`backend_factory` picks one for a
  :class:`ServerConfig` (:func:`server_config`: options and ``JUPYTER_JCLI_SERVER_*``; both
  are :mod:`jupyter_jcli.server`'s, the Jupyter Server client, named here too).
  Any backend factory fits, so tests run everything above the backend on a fake one
  without a kernel process (``tests/kernel_fakes``): ``KernelPool(backend_factory=...)``.
- :class:`KernelRecords`: what the processes of ours on one kernel share (runs, changes,
  stops asked): :class:`KernelRegistry`'s files, :class:`ServerLedger`, or a
  test's in memory; ``KernelPool(records=...,
  locks=...)`` makes its kernels share them and take one cross-process execution lock.
- :class:`KernelRegistry`: the live kernels of this machine, one per notebook, shared by every
  process of ours (entry, locks, execution log; :class:`KernelEntry`); :class:`RegistryKernelPool` /
  :class:`RegistryKernel` / :class:`RegistryBackend` join a notebook's registered kernel
  or start one through a supervisor process (:func:`start_registered`, which also stops it
  after :data:`DEFAULT_IDLE_TIMEOUT` s idle; :func:`stop_registered`,
  :func:`stop_for_everyone`, :func:`interrupt_registered`).
- :class:`OutputCollector`, :class:`DisplayRegistry`: the pure translation of iopub messages
  into nbformat v4 outputs (streams, ``\\r``, ``clear_output``, display updates).

Errors: :class:`~jupyter_jcli.errors.KernelError` with ``KERNELSPEC_NOT_FOUND``,
``KERNEL_START_FAILED``, ``KERNEL_BUSY``, ``KERNEL_NOT_RUNNING`` (callers report a ``died``
result as ``KERNEL_DIED``); from a server also ``SERVER_UNREACHABLE``, ``SERVER_AUTH_FAILED``,
``SERVER_ERROR``, ``SERVER_PATH_OUTSIDE_ROOT``. ``jupyter_client``, ``zmq``, ``httpx`` and
``websockets`` are imported only when a kernel starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jupyter_jcli import lazy_exports

if TYPE_CHECKING:
    from jupyter_jcli.kernels._backend import (
        BackendFactory,
        InPlaceRestart,
        KernelBackend,
        KernelspecCatalogue,
        backend_factory,
    )
    from jupyter_jcli.kernels._busy import (
        busy_facts,
        command_words,
        leftover_cause,
        running_words,
        stop_words,
    )
    from jupyter_jcli.kernels._config import (
        DEFAULT_BUSY_WAIT,
        DEFAULT_EXECUTE_TIMEOUT,
        DEFAULT_KERNELSPEC,
        DEFAULT_STARTUP_TIMEOUT,
        EXECUTE_TIMEOUT_ENV,
        POLL_INTERVAL,
        SETTLE_TIMEOUT,
        SHUTDOWN_TIMEOUT,
        STOP_GRACE,
        STOP_WAIT,
        execute_timeout,
        kernelspec_name_from_metadata,
    )
    from jupyter_jcli.kernels._errors import kernel_died
    from jupyter_jcli.kernels._kernel import NotebookKernel
    from jupyter_jcli.kernels._local import LocalBackend, installed_kernelspecs
    from jupyter_jcli.kernels._pool import KernelPool
    from jupyter_jcli.kernels._records import KernelRecords
    from jupyter_jcli.kernels._registry import (
        DEFAULT_IDLE_TIMEOUT,
        IDLE_TIMEOUT_ENV,
        RUNTIME_DIR_ENV,
        KernelEntry,
        KernelRegistry,
        idle_timeout,
        process_name,
        registry_dir,
    )
    from jupyter_jcli.kernels._registry_backend import RegistryBackend
    from jupyter_jcli.kernels._registry_kernel import RegistryKernel, RegistryKernelPool
    from jupyter_jcli.kernels._results import EvaluationResult, ExpressionValue
    from jupyter_jcli.kernels._server import KERNEL_WORKING_DIR, ServerBackend
    from jupyter_jcli.kernels._server_ledger import ServerLedger, SessionFacts
    from jupyter_jcli.kernels._server_sessions import (
        ServerSession,
        interrupt_session,
        notebook_session,
        notebook_sessions,
        require_session_kernelspec,
        restart_session,
        start_session,
        stop_session,
    )
    from jupyter_jcli.kernels._supervisor import (
        interrupt_registered,
        start_registered,
        stop_for_everyone,
        stop_registered,
    )
    from jupyter_jcli.kernels._translate import DisplayRegistry, OutputCollector, message_type
    from jupyter_jcli.kernels._types import (
        AskedStop,
        DisplayUpdate,
        ExecutionResult,
        ExecutionStatus,
        InterruptReason,
        KernelInfo,
        KernelMessage,
        KernelOrigin,
        KernelState,
        MessageCallback,
        Output,
        OutputCallback,
    )
    from jupyter_jcli.server import (
        SERVER_ROOT_ENV,
        SERVER_TOKEN_ENV,
        SERVER_URL_ENV,
        ServerConfig,
        server_config,
        server_root,
    )


_PUBLIC = {
    "_backend": "BackendFactory InPlaceRestart KernelBackend KernelspecCatalogue backend_factory",
    "_results": "EvaluationResult ExpressionValue",
    "_config": (
        "DEFAULT_BUSY_WAIT DEFAULT_EXECUTE_TIMEOUT DEFAULT_KERNELSPEC DEFAULT_STARTUP_TIMEOUT "
        "EXECUTE_TIMEOUT_ENV POLL_INTERVAL SETTLE_TIMEOUT SHUTDOWN_TIMEOUT STOP_GRACE STOP_WAIT "
        "execute_timeout kernelspec_name_from_metadata"
    ),
    "_errors": "kernel_died",
    "_kernel": "NotebookKernel",
    "_local": "LocalBackend installed_kernelspecs",
    "_records": "KernelRecords",
    "_pool": "KernelPool",
    "_registry": (
        "DEFAULT_IDLE_TIMEOUT IDLE_TIMEOUT_ENV RUNTIME_DIR_ENV KernelEntry KernelRegistry "
        "idle_timeout process_name registry_dir"
    ),
    "_server": "KERNEL_WORKING_DIR ServerBackend",
    "_server_ledger": "ServerLedger SessionFacts",
    "_server_sessions": (
        "ServerSession interrupt_session notebook_session notebook_sessions "
        "require_session_kernelspec restart_session start_session stop_session"
    ),
    "_registry_kernel": "RegistryKernelPool RegistryKernel",
    "_registry_backend": "RegistryBackend",
    "_busy": "busy_facts command_words leftover_cause running_words stop_words",
    "_supervisor": "interrupt_registered start_registered stop_for_everyone stop_registered",
    "_translate": "DisplayRegistry OutputCollector message_type",
    "_types": (
        "AskedStop DisplayUpdate ExecutionResult ExecutionStatus InterruptReason KernelInfo "
        "KernelMessage KernelOrigin KernelState MessageCallback Output OutputCallback"
    ),
    # Where a server is: jupyter_jcli.server's, named here too for the kernel layer's callers.
    "jupyter_jcli.server": (
        "SERVER_ROOT_ENV SERVER_TOKEN_ENV SERVER_URL_ENV ServerConfig server_config server_root"
    ),
}
"""Per submodule, the public names it gives; each is imported on first access (PEP 562), so
joining a live kernel loads neither the Jupyter Server backend nor ``jupyter_client``."""

if not TYPE_CHECKING:  # mypy reads the imports above, with no __getattr__ to hide a typo
    __getattr__, __dir__, __all__ = lazy_exports(globals(), _PUBLIC)
