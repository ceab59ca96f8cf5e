"""Fake kernel backends for tests: a kernel with no process and no ZMQ, in this process.

Test support only (no code of the package uses it): :class:`FakeBackend`, a
:class:`~jupyter_jcli.kernels.KernelBackend` whose kernel lives in memory, so everything above
the backend (:class:`~jupyter_jcli.kernels.NotebookKernel`, the workbench, the MCP servers)
can be driven end to end without ipykernel. Two ways to say what the kernel does:

- **Scripted**: ``FakeBackend(react)`` calls ``react(backend, msg_id, code)`` for each
  execute request; the reaction emits iopub messages (:meth:`FakeBackend.emit`,
  :func:`message`), finishes the request (:meth:`FakeBackend.finish`: the shell reply and
  the ``idle`` status), or does neither (a hang), or kills the kernel
  (:meth:`FakeBackend.die`). ``on_interrupt`` says what an interrupt does. :func:`prints` is
  the simplest reaction.
- **Python**: :func:`python_backend` answers with :class:`InProcessPython`, which executes
  each request's code with :func:`exec` in one namespace per kernel life and reports it as
  ipykernel does (``execute_input``, streams from ``print``, ``execute_result`` for a last
  expression, ``error`` with ``ename``/``evalue``/``traceback``, ``display``/``update``
  through ``display(obj, display_id=...)`` (also ``from IPython.display import display``;
  IPython is not imported), ``user_expressions``). ``input()`` is refused with
  ``StdinNotImplementedError``, ``os._exit()`` kills the fake kernel and ``time.sleep()`` hangs
  the request until it is interrupted (time never passes in the fake). ``sys.stdout`` writes
  are not captured, only ``print``. Use it as the pool's factory::

      from jupyter_jcli.kernels import KernelPool
      from kernel_fakes import python_backend

      # jupyter_jcli.workbench.Workbench, in a test (this module never imports it)
      async with Workbench(pool=KernelPool(backend_factory=python_backend)) as wb:
          ...

Records shared between processes (:class:`~jupyter_jcli.kernels.KernelRecords`) are faked
with :class:`MemoryRecords`: ``KernelPool(backend_factory=..., records=MemoryRecords())``;
two pools on one ``MemoryRecords`` (and a fake kernel of one ``origin.epoch``) stand for two
processes on one shared kernel: one's runs count in the other's run log, and a stop one
records ends the other's running cell ``interrupted``.

A kernel someone else started (a person's JupyterLab session a Jupyter Server backend
joins) is faked with ``origin``: ``python_backend(origin=KernelOrigin(attached=True,
started_by=...), python=shared)`` with one :class:`InProcessPython` for every join, so each
join finds the variables the person (or an earlier join) left.

The fake runs the code it is given with the test process's privileges: it is a test double,
not a sandbox. Only the standard library and :mod:`anyio` are imported.
"""

from __future__ import annotations

from kernel_fakes._backend import (
    FakeBackend,
    FakeRequest,
    Reaction,
    message,
    one_after_another,
    prints,
)
from kernel_fakes._python import (
    FAKE_KERNELSPECS,
    InProcessPython,
    StdinNotImplementedError,
    python_backend,
)
from kernel_fakes._records import MemoryEntry, MemoryRecords

__all__ = [
    "FAKE_KERNELSPECS",
    "FakeBackend",
    "FakeRequest",
    "InProcessPython",
    "MemoryEntry",
    "MemoryRecords",
    "Reaction",
    "StdinNotImplementedError",
    "message",
    "one_after_another",
    "prints",
    "python_backend",
]
