"""The kernel of one notebook: lazy start, epochs, one execution at a time, bounded waits."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels._backend import (
    BackendFactory,
    InPlaceRestart,
    KernelBackend,
    KernelspecCatalogue,
)
from jupyter_jcli.kernels._busy import ShellProbe, busy_record, check_leftover, take_exec
from jupyter_jcli.kernels._config import (
    DEFAULT_BUSY_WAIT,
    DEFAULT_KERNELSPEC,
    DEFAULT_STARTUP_TIMEOUT,
    SHUTDOWN_TIMEOUT,
    execute_timeout,
)
from jupyter_jcli.kernels._entry import process_name
from jupyter_jcli.kernels._flock import ExecLock
from jupyter_jcli.kernels._hold import KernelHold
from jupyter_jcli.kernels._local import LocalBackend, installed_kernelspecs, require_kernelspec
from jupyter_jcli.kernels._records import RecordsFolder, asked_stop
from jupyter_jcli.kernels._request import RequestOptions, RequestOutcome, request_execution
from jupyter_jcli.kernels._results import EvaluationResult, evaluation_result, execution_result
from jupyter_jcli.kernels._translate import DisplayRegistry, OutputCollector
from jupyter_jcli.kernels._types import (
    LOCAL_ORIGIN,
    AskedStop,
    ExecutionResult,
    InterruptReason,
    KernelInfo,
    KernelState,
    MessageCallback,
    Output,
    OutputCallback,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from jupyter_jcli.kernels._records import KernelRecords
    from jupyter_jcli.kernels._registry import KernelRegistry

__all__ = ["NotebookKernel"]


class NotebookKernel:
    """The kernel of one notebook, started lazily on the first :meth:`execute`: a transport
    (``backend_factory``: a local kernel, one joined through the registry's connection file,
    a Jupyter Server's WebSocket) and, for a kernel other processes of ours share, its
    ``records`` and ``locks``.

    The kernel runs in the notebook's folder. Each start and restart mints a new epoch (a
    random hex id): results are stamped with it and freshness is judged against it (see
    :func:`jupyter_jcli.analysis.fresh_cells`). Executions never overlap: each holds the kernel
    (an ``anyio`` lock); a second request waits up to ``busy_wait`` seconds, then fails with
    ``KERNEL_BUSY``. Use :meth:`hold` to keep the kernel for a batch of cells.

    A restart or shutdown never closes the kernel under a running execution: it first asks
    the execution to stop (it ends ``interrupted`` with its outputs so far, see
    :data:`~jupyter_jcli.kernels.InterruptReason`), waits up to
    :data:`~jupyter_jcli.kernels.STOP_WAIT` s for the holder to let the kernel go, then
    takes the kernel itself. While a stop is pending, :attr:`stop_requested` names it, so a
    holder running a batch stops before its next cell.

    Args:
        notebook_path: the notebook; resolved to an absolute path.
        kernelspec_name: the kernelspec to start (see
            :func:`~jupyter_jcli.kernels.kernelspec_name_from_metadata`). Changing the
            attribute later takes effect at the next start or restart.
        backend_factory: makes one backend per kernel life (default: :class:`LocalBackend`).
        startup_timeout: seconds a start may take.
        records: what every process on the kernel shares
            (:class:`~jupyter_jcli.kernels.KernelRecords`): a stop another process recorded
            there ends a running execution ``interrupted``, naming who asked. ``None``: a
            kernel of this process alone.
        locks: the registry whose execution lock (``<key>.exec``) every :meth:`hold` also
            takes, so two of our processes never execute on the notebook's kernel at once
            (the second waits, then gets ``KERNEL_BUSY``:
            :func:`~jupyter_jcli.kernels._busy.take_exec`). ``None``: no lock
            across processes.

    With records kept in files (the registry's, a Jupyter Server's ledger: a
    :class:`~jupyter_jcli.kernels._records.RecordsFolder`), what this object runs is recorded
    there while it runs (``busy``), and a hold that finds there the record of a command killed
    while its code ran refuses to queue behind that code
    (:func:`~jupyter_jcli.kernels._busy.check_leftover`: ``KERNEL_BUSY``, ``busy_gone``).
    """

    def __init__(
        self,
        notebook_path: str | Path,
        *,
        kernelspec_name: str = DEFAULT_KERNELSPEC,
        backend_factory: BackendFactory = LocalBackend,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        records: KernelRecords | None = None,
        locks: KernelRegistry | None = None,
    ) -> None:
        self.notebook_path = Path(notebook_path).resolve()
        self.cwd = self.notebook_path.parent
        self.kernelspec_name = kernelspec_name
        self._factory = backend_factory
        self._startup_timeout = startup_timeout
        self._backend: KernelBackend | None = None
        self._running_spec = kernelspec_name
        self._epoch: str | None = None
        self._dead = False
        self._hold = KernelHold(self.notebook_path)
        self._life_lock = anyio.Lock()
        self._registry = DisplayRegistry()
        self._restarts = 0
        self._replaced_epoch: str | None = None
        self.records = records
        self._locks = locks
        self._exec = ExecLock(locks.path(self.notebook_path, ".exec")) if locks else None
        self._keep = False
        """Whether a kernel this object starts outlives the process (a kept registry kernel:
        a result that replaced a dead kernel says ``replacement_kept``)."""
        self._starts_here = backend_factory is LocalBackend
        """Whether a start launches the kernel on this machine (its kernelspecs are then
        this machine's, :meth:`require_kernelspec`); else a stopped kernel's start decides."""
        self.listeners: list[OutputCallback] = []
        """Also given every output of every execution, as it arrives (a front end's live
        view of a run: ``j-cli run`` on a terminal)."""
        self.process_wait = 0.0
        """Seconds a hold waits for another process executing on the kernel (at least the
        hold's own ``busy_wait``) before ``KERNEL_BUSY``."""
        self._leftover_wait = 0.0  # the running hold's wait, for a check after a start

    @property
    def epoch(self) -> str | None:
        """The live kernel's epoch; ``None`` when not started, shut down or known dead."""
        return None if self._dead else self._epoch

    @property
    def stop_requested(self) -> InterruptReason | None:
        """The restart or shutdown waiting for the kernel, if any: the holder of the kernel
        should run nothing more and let it go."""
        return self._hold.stop_requested

    async def is_alive(self) -> bool:
        """Whether a kernel is running (a dead one is noted: the next execute replaces it)."""
        backend = self._backend
        if backend is None or self._dead:
            return False
        if await backend.is_alive():
            return True
        if backend is self._backend:
            self._dead = True
        return False

    async def info(self) -> KernelInfo:
        """The kernel's state, epoch, kernelspec and pid (checks that the process lives)."""
        state: KernelState
        alive = await self.is_alive()
        if self._dead:
            state = "dead"
        elif not alive:
            state = "not_started"
        else:
            state = "busy" if self._hold.locked() else "idle"
        backend = self._backend
        return KernelInfo(
            notebook_path=self.notebook_path,
            state=state,
            epoch=self.epoch if alive else None,
            kernelspec_name=self._running_spec if alive else self.kernelspec_name,
            pid=backend.pid if alive and backend is not None else None,
            cwd=self.cwd,
            running_cell=self._hold.running_cell if state == "busy" else None,
            origin=backend.origin if alive and backend is not None else LOCAL_ORIGIN,
        )

    @asynccontextmanager
    async def hold(self, *, busy_wait: float = DEFAULT_BUSY_WAIT) -> AsyncIterator[None]:
        """Hold the kernel for several executions by this task (re-entrant within the task).

        Args:
            busy_wait: seconds to wait for another holder to finish; 0 refuses at once.

        With ``locks``, the hold also takes the notebook's execution lock across processes
        (held for the whole batch; released when the hold ends or the process dies).

        Raises:
            KernelError: ``KERNEL_BUSY`` (details: ``notebook_path``, ``running_cell``,
                ``busy_for_s``, ``busy_wait_s``) when the kernel stays held; across
                processes, those of :func:`~jupyter_jcli.kernels._busy.busy_error`.
        """
        exec_lock, nested = self._exec, self._hold.owned()  # nested: the outer hold took it
        async with self._hold.hold(busy_wait=busy_wait):
            if exec_lock is None or self._locks is None or nested:
                yield
                return
            wait = max(busy_wait, self.process_wait)
            await take_exec(exec_lock, self._locks, self.notebook_path, wait, self._busy_records())
            try:
                self._leftover_wait = wait
                await self._enter_exec(wait)
                yield
            finally:
                records, epoch = self._busy_records(), self._epoch
                if records is not None and epoch is not None:
                    with anyio.CancelScope(shield=True), contextlib.suppress(KernelError):
                        records.set_busy(self.notebook_path, epoch, None)
                checkpoint = getattr(self._backend, "checkpoint", None)
                if self.records is not None and checkpoint is not None:
                    with anyio.CancelScope(shield=True):
                        await checkpoint()  # a server kernel: what ran counts for the next
                exec_lock.release()

    def _busy_records(self) -> RecordsFolder[Any] | None:
        """The records that keep what runs on the kernel (``busy``), ``None`` for none."""
        return self.records if isinstance(self.records, RecordsFolder) else None

    async def _enter_exec(self, busy_wait: float) -> None:
        """Once the execution lock is taken: check the live kernel for code a killed command
        left running (:meth:`_check_leftover`)."""
        await self._check_leftover(busy_wait)

    async def _check_leftover(self, busy_wait: float) -> None:
        """:func:`~jupyter_jcli.kernels._busy.check_leftover` on the live kernel, when its
        records keep ``busy`` and its backend can probe its shell.

        Raises:
            KernelError: ``KERNEL_BUSY`` (``busy_gone``).
        """
        records, backend, epoch = self._busy_records(), self._backend, self.epoch
        if records is not None and isinstance(backend, ShellProbe) and epoch is not None:
            await check_leftover(records, self.notebook_path, epoch, backend, busy_wait)

    async def execute(
        self,
        code: str,
        *,
        cell_key: str | None = None,
        timeout: float | None = None,
        on_output: OutputCallback | None = None,
        busy_wait: float = DEFAULT_BUSY_WAIT,
        prepare: Callable[[], Awaitable[object]] | None = None,
        on_message: MessageCallback | None = None,
    ) -> ExecutionResult:
        """Run ``code`` as a notebook cell (history kept, execution count bumped).

        Starts the kernel first if none runs (a dead one is replaced: ``kernel_restarted``).
        stdin is not offered: ``input()`` raises at once in the kernel (ipykernel:
        ``StdinNotImplementedError``) and shows as an error output.

        Args:
            code: the cell source.
            cell_key: the cell's name: its outputs' display ids are recorded so later
                ``update_display_data`` reach them (:attr:`ExecutionResult.display_updates`);
                its earlier ones are forgotten. ``None`` for code that is not a cell.
            timeout: seconds before the run is interrupted and reported ``timeout``; ``None``
                uses ``JUPYTER_JCLI_EXECUTE_TIMEOUT`` or 600 s. Then the kernel gets up to
                10 s to go idle, else it is shut down (the next execute starts a new one).
            on_output: called with each output as it arrives (progress), after
                :attr:`listeners`.
            on_message: called with each iopub message of the run as it arrives, before
                it is translated (a live document's sink: :data:`MessageCallback`).
            busy_wait: seconds to wait while another execution holds the kernel.
            prepare: awaited once the kernel runs (started first if need be), under the same
                hold, right before ``code`` is sent: e.g. a silent :meth:`evaluate` that
                sets the shell up for this one execution. What it raises ends the call
                before ``code`` runs.

        Returns:
            The :class:`ExecutionResult`; ``status`` ``died`` when the kernel process ended
            (the caller reports ``KERNEL_DIED`` naming the cell); ``interrupted`` when an
            interrupt, restart or shutdown stopped it (``interrupted_by``);
            ``kernel_killed`` when the kernel would not stop on interrupt and was killed;
            ``replacement_kept`` when it replaced a dead kernel with a kept one.

        Raises:
            KernelError: ``KERNEL_BUSY`` (also when a restart or shutdown is waiting for the
                kernel: details ``stop_requested``), ``KERNELSPEC_NOT_FOUND``,
                ``KERNEL_START_FAILED``.
            UsageError: ``USAGE_ERROR`` for an invalid timeout.
        """
        limit = execute_timeout(timeout)
        on_output = _fan_out([*self.listeners, *([on_output] if on_output else [])])
        async with self.hold(busy_wait=busy_wait):
            self._hold.refuse_if_stopping()
            restarted = await self._ensure_started()
            self._hold.refuse_if_stopping()
            if prepare is not None:
                await prepare()
                self._hold.refuse_if_stopping()
            backend, epoch = self._live()
            self._hold.running_cell = cell_key
            collector = OutputCollector(self._registry, cell_key)
            try:
                outcome = await self._request(
                    backend,
                    code,
                    collector=collector,
                    timeout=limit,
                    on_output=on_output,
                    on_message=on_message,
                )
            finally:
                collector.finish()
            killed = await self._after_request(
                backend, alive=outcome.alive, settled=outcome.settled
            )
            return execution_result(
                outcome, collector, epoch, restarted=restarted, killed=killed,
                replaced_epoch=self._replaced_epoch, kept=self._keep,
            )  # fmt: skip

    async def evaluate(
        self,
        code: str,
        *,
        user_expressions: Mapping[str, str] | None = None,
        timeout: float | None = None,
        busy_wait: float = DEFAULT_BUSY_WAIT,
    ) -> EvaluationResult:
        """Run ``code`` silently for inspection: ``silent: true, store_history: false``.

        The execution count does not move, nothing enters the history (``_``, ``Out``, ``In``
        unchanged) and no ``execute_result`` is displayed. Variables the code assigns do land
        in the user namespace: prefer ``user_expressions`` (evaluated after the code, each
        returned as a MIME bundle) and underscore-prefixed helpers you delete afterwards.
        Never starts a kernel.

        Args:
            code: statements to run first (may be ``""``).
            user_expressions: ``{name: expression}``.
            timeout: as for :meth:`execute`.
            busy_wait: as for :meth:`execute`.

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` when no live kernel exists; ``KERNEL_BUSY``.
            UsageError: ``USAGE_ERROR`` for an invalid timeout.
        """
        limit = execute_timeout(timeout)
        async with self.hold(busy_wait=busy_wait):
            if not await self.is_alive():
                raise KernelError(
                    ErrorCode.KERNEL_NOT_RUNNING,
                    "no live kernel for this notebook; execute a cell first",
                    {"notebook_path": str(self.notebook_path), "state": (await self.info()).state},
                )
            self._hold.refuse_if_stopping()
            backend, epoch = self._live()
            collector = OutputCollector()
            outcome = await self._request(
                backend,
                code,
                collector=collector,
                timeout=limit,
                silent=True,
                user_expressions=dict(user_expressions or {}),
            )
            await self._after_request(backend, alive=outcome.alive, settled=outcome.settled)
        return evaluation_result(outcome, collector.outputs, epoch)

    async def interrupt(self) -> None:
        """Interrupt the running execution: it ends ``interrupted`` (``kernel_interrupted``,
        with the ``KeyboardInterrupt`` error output) unless it catches the interrupt. The
        interrupt is recorded in :attr:`records` first, so another process running a cell
        on a shared kernel reports it ``interrupted``, not ``error``.

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` when no live kernel exists.
        """
        backend = self._backend if await self.is_alive() else None  # is_alive may join
        if backend is None:
            raise KernelError(
                ErrorCode.KERNEL_NOT_RUNNING,
                "no live kernel to interrupt",
                {"notebook_path": str(self.notebook_path)},
            )
        self._record_stop(self._epoch, "kernel_interrupted")
        self._hold.note_interrupt()
        await backend.interrupt()

    def _record_stop(self, epoch: str | None, reason: InterruptReason) -> None:
        """Note in :attr:`records` (before asking the kernel) that this process stops the
        kernel of ``epoch``, so another process running a cell on it ends that cell
        ``interrupted``, naming who asked; best effort."""
        if epoch is not None and self.records is not None:
            with contextlib.suppress(KernelError):
                self.records.record_interrupt(self.notebook_path, epoch, process_name(), reason)

    async def require_kernelspec(self, name: str | None = None) -> None:
        """Check that kernelspec ``name`` (default :attr:`kernelspec_name`) can be started
        where this kernel runs: the live backend's :class:`~jupyter_jcli.kernels.
        KernelspecCatalogue` when it has one, else this machine's kernelspecs for a local
        kernel; a backend that cannot tell before it starts passes (its start decides).
        Nothing is stopped or started.

        Raises:
            KernelError: ``KERNELSPEC_NOT_FOUND`` (details ``kernelspec``, ``installed``); a
                server backend's ``SERVER_*`` codes.
        """
        spec = self.kernelspec_name if name is None else name
        backend = self._backend
        installed = None
        if isinstance(backend, KernelspecCatalogue) and not self._dead:
            installed = await backend.installed_kernelspecs()
        elif self._starts_here:
            installed = await anyio.to_thread.run_sync(installed_kernelspecs)
        if installed is not None:
            require_kernelspec(spec, installed)

    async def _require_switch(self) -> None:
        """Before a restart stops a live kernel: the kernelspec it would start instead must be
        installed (``KERNELSPEC_NOT_FOUND``, nothing stopped); the running one is."""
        if self.epoch is not None and self.kernelspec_name != self._running_spec:
            await self.require_kernelspec()

    async def restart(self) -> str:
        """Shut the kernel down (if any) and start a new one; returns the new epoch. A live
        kernel whose backend is an :class:`~jupyter_jcli.kernels.InPlaceRestart` is restarted
        in place instead (a shared server kernel: its other clients stay on it).

        A running execution is stopped first: it ends ``interrupted`` (``kernel_restarted``)
        with its outputs so far, and its holder lets the kernel go (see the class docstring).
        Restarts that overlap are one: a restart that finished while this one waited for the
        kernel already gave a kernel started after this call, and its epoch is returned.

        A kernelspec that is not installed (a switch to another one, :attr:`kernelspec_name`)
        is refused before the live kernel is touched.

        Raises:
            KernelError: ``KERNEL_BUSY`` when the holder does not let the kernel go within
                :data:`~jupyter_jcli.kernels.STOP_WAIT` s (nothing was restarted);
                ``KERNELSPEC_NOT_FOUND`` (the live kernel kept), ``KERNEL_START_FAILED``.
        """
        await self._require_switch()
        seen = self._restarts
        async with self._hold.stopping("kernel_restarted"), self._life_lock:
            if self._restarts == seen or self.epoch is None:
                if not await self._restart_in_place():
                    await self._stop(now=False)
                    await self._start()
                self._restarts += 1
            assert self._epoch is not None
            return self._epoch

    async def shutdown(self, *, now: bool = False) -> None:
        """Stop the kernel (graceful for up to 5 s unless ``now``, then killed). Idempotent.

        A running execution is stopped first, as for :meth:`restart`; if its holder does not
        let the kernel go within :data:`~jupyter_jcli.kernels.STOP_WAIT` s the kernel is
        killed anyway (the execution then ends ``interrupted``, ``kernel_shutdown``).
        """
        with anyio.CancelScope(shield=True):
            try:
                async with self._hold.stopping("kernel_shutdown"):
                    async with self._life_lock:
                        await self._stop(now=now)
                    return
            except KernelError:
                pass  # the holder kept the kernel: kill it under the execution, bounded
            async with self._life_lock:
                await self._stop(now=True)

    async def _request(
        self, backend: KernelBackend, code: str, **options: Unpack[RequestOptions]
    ) -> RequestOutcome:
        """:func:`request_execution` with a fresh :class:`StopSignal` that :meth:`interrupt`,
        :meth:`restart` and :meth:`shutdown` reach while it runs."""
        records, cell = self._busy_records(), self._hold.running_cell
        if records is not None and self._epoch is not None:  # what runs, for other processes
            with contextlib.suppress(KernelError):
                records.set_busy(self.notebook_path, self._epoch, busy_record(cell))
        with self._hold.request() as signal:
            epoch = self._epoch
            if epoch is not None:
                since = time.time()
                signal.elsewhere = lambda: self._asked_elsewhere(epoch, since)
            return await request_execution(backend, code, signal=signal, **options)

    def _asked_elsewhere(self, epoch: str, since: float) -> AskedStop | None:
        """The stop another process asked of the kernel of ``epoch`` at or after ``since``
        (Unix time, s), as its :attr:`records` say: none for a kernel of this process alone."""
        records = self.records
        return asked_stop(
            records.interrupt_since(self.notebook_path, epoch, since) if records else None
        )

    async def _ensure_started(self) -> bool:
        """Start a kernel if none is alive; ``True`` when it replaces one that died."""
        async with self._life_lock:
            if self._backend is not None and await self.is_alive():
                return False
            replaced = self._backend is not None or self._dead
            self._replaced_epoch = self._epoch if replaced else None
            await self._stop(now=True)
            await self._start()
        if self._exec is not None and self._exec.held:  # joined under a hold: what runs?
            await self._check_leftover(self._leftover_wait)
        return replaced

    async def _restart_in_place(self) -> bool:
        """Restart the live kernel through its backend's :class:`InPlaceRestart`; ``False``
        when it has none, no live kernel, or the kernelspec to run changed. A failed restart
        leaves the kernel dead."""
        backend = self._backend
        if not isinstance(backend, InPlaceRestart) or self.kernelspec_name != self._running_spec:
            return False
        if not await self.is_alive():
            return False
        self._epoch = None
        self._registry.clear()
        try:
            await backend.restart(timeout=self._startup_timeout)
        except BaseException:
            self._dead = True
            raise
        self._epoch = uuid.uuid4().hex
        return True

    async def _start(self) -> None:
        backend = self._factory()
        spec = self.kernelspec_name
        await backend.start(
            kernelspec_name=spec,
            cwd=self.cwd,
            startup_timeout=self._startup_timeout,
            notebook_path=self.notebook_path,
        )
        self._backend = backend
        self._running_spec = spec
        self._epoch = backend.origin.epoch or uuid.uuid4().hex
        self._dead = False
        self._registry.clear()

    async def _stop(self, *, now: bool) -> None:
        backend = self._backend
        self._backend = None
        self._epoch = None
        self._dead = False
        self._registry.clear()
        if backend is not None:
            await backend.shutdown(now=now, timeout=SHUTDOWN_TIMEOUT)

    def _live(self) -> tuple[KernelBackend, str]:
        backend, epoch = self._backend, self._epoch
        if backend is None or epoch is None:
            raise KernelError(ErrorCode.KERNEL_NOT_RUNNING, "the kernel is not started")
        return backend, epoch

    async def _after_request(self, backend: KernelBackend, *, alive: bool, settled: bool) -> bool:
        """Mark the kernel dead when it died, or kill it when it would not settle; ``True``
        when it was alive and had to be killed (its state is gone)."""
        if backend is not self._backend:
            return alive and not settled
        if not alive or not settled:
            self._dead = True
            await backend.shutdown(now=True, timeout=SHUTDOWN_TIMEOUT)
        return alive and not settled


def _fan_out(callbacks: list[OutputCallback]) -> OutputCallback | None:
    """One callback giving each output to every one of ``callbacks`` in turn (``None`` for
    none)."""
    if len(callbacks) < 2:
        return callbacks[0] if callbacks else None

    async def each(output: Output) -> None:
        for callback in callbacks:
            result = callback(output)
            if result is not None:
                await result

    return each
