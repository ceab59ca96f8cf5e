"""Fake kernel backends for tests: a kernel with no process and no ZMQ, in this process.

As ``httpx`` ships ``MockTransport``, this module ships :class:`FakeBackend`, a
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
      from jupyter_jcli.kernels.testing import python_backend

      # jupyter_jcli.workbench.Workbench, in a test (this module never imports it)
      async with Workbench(pool=KernelPool(backend_factory=python_backend)) as wb:
          ...

A kernel someone else started (a person's JupyterLab session a Jupyter Server backend
joins) is faked with ``origin``: ``python_backend(origin=KernelOrigin(attached=True,
started_by=...), python=shared)`` with one :class:`InProcessPython` for every join, so each
join finds the variables the person (or an earlier join) left.

The fake runs the code it is given with the test process's privileges: it is a test double,
not a sandbox. Only the standard library and :mod:`anyio` are imported.
"""

from __future__ import annotations

import ast
import builtins
import io
import math
import os
import time
import traceback
import uuid
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels._types import LOCAL_ORIGIN, KernelMessage, KernelOrigin

__all__ = [
    "FAKE_KERNELSPECS",
    "FakeBackend",
    "FakeRequest",
    "InProcessPython",
    "Reaction",
    "StdinNotImplementedError",
    "message",
    "one_after_another",
    "prints",
    "python_backend",
]

Reaction = Callable[["FakeBackend", str, str], None]
"""What the fake kernel does with an execute request: ``react(backend, msg_id, code)``."""


def message(kind: str, parent: str, **content: Any) -> dict[str, Any]:
    """A kernel message of type ``kind`` answering the request ``parent``."""
    return {
        "header": {"msg_type": kind, "msg_id": uuid.uuid4().hex},
        "parent_header": {"msg_id": parent},
        "content": content,
    }


@dataclass(frozen=True)
class FakeRequest:
    """One execute request the fake kernel received."""

    msg_id: str
    code: str
    silent: bool
    store_history: bool
    user_expressions: Mapping[str, str] = field(default_factory=dict)


class FakeBackend:
    """A :class:`~jupyter_jcli.kernels.KernelBackend` whose kernel answers each execute request
    as ``react`` says (see the module docstring).

    Args:
        react: called with ``(backend, msg_id, code)`` for every execute request.
        fail_start: :meth:`start` raises ``KERNEL_START_FAILED``.
        kernelspecs: the kernelspec names this fake "has installed"; another name fails to
            start with ``KERNELSPEC_NOT_FOUND`` (details ``kernelspec``, ``installed``), as
            the local backend does. ``None`` accepts every name.
        origin: what :attr:`origin` reports once started (default: a kernel this process
            started); e.g. ``KernelOrigin(attached=True, started_by="JupyterLab session s1")``
            makes the fake a kernel someone else started and we joined, as a Jupyter Server
            backend reports a session a person has open. Before :meth:`start` it is the local
            default.

    Attributes a test may read or set: ``alive``; ``requests`` (every :class:`FakeRequest`);
    ``interrupts`` (how many); ``shutdowns`` (the ``now`` flag of each); ``count`` (the
    execution count); ``started_with`` (kernelspec and cwd of the start); ``on_interrupt``
    (called on each interrupt); ``react`` (may be swapped between requests);
    ``joined_origin`` (the ``origin`` argument).
    """

    def __init__(
        self,
        react: Reaction,
        *,
        fail_start: bool = False,
        kernelspecs: Collection[str] | None = None,
        origin: KernelOrigin = LOCAL_ORIGIN,
    ) -> None:
        self.react = react
        self.joined_origin = origin
        self.fail_start = fail_start
        self.kernelspecs = None if kernelspecs is None else sorted(kernelspecs)
        self.alive = False
        self.closed = False
        self.interrupts = 0
        self.shutdowns: list[bool] = []
        self.count = 0
        self.requests: list[FakeRequest] = []
        self.started_with: tuple[str, Path] | None = None
        self.on_interrupt: Callable[[], None] | None = None
        self._iopub_in, self._iopub_out = anyio.create_memory_object_stream[KernelMessage](math.inf)
        self._shell_in, self._shell_out = anyio.create_memory_object_stream[KernelMessage](math.inf)

    @property
    def sent(self) -> int:
        """How many execute requests were sent."""
        return len(self.requests)

    @property
    def pid(self) -> int | None:
        return None

    @property
    def origin(self) -> KernelOrigin:
        return LOCAL_ORIGIN if self.started_with is None else self.joined_origin

    async def start(
        self, *, kernelspec_name: str, cwd: Path, startup_timeout: float, notebook_path: Path
    ) -> None:
        if self.kernelspecs is not None and kernelspec_name not in self.kernelspecs:
            raise KernelError(
                ErrorCode.KERNELSPEC_NOT_FOUND,
                f"kernelspec {kernelspec_name!r} is not installed in the fake",
                {"kernelspec": kernelspec_name, "installed": list(self.kernelspecs)},
            )
        if self.fail_start:
            raise KernelError(ErrorCode.KERNEL_START_FAILED, "the fake kernel was told to fail")
        self.started_with = (kernelspec_name, cwd)
        self.alive = True

    async def is_alive(self) -> bool:
        return self.alive

    async def send_execute(
        self, code: str, *, silent: bool, store_history: bool, user_expressions: Mapping[str, str]
    ) -> str:
        self._check_open()
        msg_id = f"req-{self.sent + 1}"
        self.requests.append(
            FakeRequest(msg_id, code, silent, store_history, dict(user_expressions))
        )
        self.react(self, msg_id, code)
        return msg_id

    def emit(self, msg: KernelMessage) -> None:
        """Publish one iopub message (also after a death: late words, as ipykernel's I/O
        thread sends them)."""
        self._iopub_in.send_nowait(msg)

    def finish(
        self, msg_id: str, *, reply: bool = True, status: str = "ok", **content: Any
    ) -> None:
        """End a request: its ``execute_reply`` (unless ``reply`` is false; ``content`` adds
        fields such as ``user_expressions``), then the ``idle`` status. The execution count
        goes up unless the request is silent or keeps no history (as in ipykernel)."""
        request = self.current
        if request is not None and request.store_history and not request.silent:
            self.count += 1
        if reply:
            self._shell_in.send_nowait(
                message(
                    "execute_reply", msg_id, status=status, execution_count=self.count, **content
                )
            )
        self.emit(message("status", msg_id, execution_state="idle"))

    def die(self) -> None:
        """The kernel process ends: :meth:`is_alive` is false from now on."""
        self.alive = False

    @property
    def current(self) -> FakeRequest | None:
        """The latest request, if any."""
        return self.requests[-1] if self.requests else None

    async def next_iopub(self, timeout: float) -> KernelMessage | None:
        self._check_open()
        with anyio.move_on_after(timeout):
            return await self._iopub_out.receive()
        return None

    async def next_shell_reply(self, timeout: float) -> KernelMessage | None:
        self._check_open()
        with anyio.move_on_after(timeout):
            return await self._shell_out.receive()
        return None

    async def interrupt(self) -> None:
        self.interrupts += 1
        if self.on_interrupt is not None and self.alive:
            self.on_interrupt()

    async def shutdown(self, *, now: bool, timeout: float) -> None:
        self.shutdowns.append(now)
        self.alive = False
        self.closed = True

    def _check_open(self) -> None:
        if self.started_with is None or self.closed:
            raise KernelError(ErrorCode.KERNEL_NOT_RUNNING, "the fake kernel is not running")


def one_after_another(*backends: FakeBackend) -> Callable[[], FakeBackend]:
    """A backend factory handing out ``backends`` in order, one per kernel life; one more
    start than there are backends fails with ``KERNEL_START_FAILED``."""
    queue = list(backends)

    def factory() -> FakeBackend:
        if not queue:
            return FakeBackend(prints(""), fail_start=True)
        return queue.pop(0)

    return factory


def prints(text: str) -> Reaction:
    """A reaction: a stray stream of another request first, then ``text`` on stdout, then the
    request ends ``ok``."""

    def react(backend: FakeBackend, msg_id: str, code: str) -> None:
        backend.emit(message("stream", "someone-else", name="stdout", text="stale\n"))
        backend.emit(message("stream", msg_id, name="stdout", text=text))
        backend.finish(msg_id)

    return react


class StdinNotImplementedError(RuntimeError):
    """What ``input()`` raises in the fake, as in ipykernel when stdin is not allowed."""


class _Death(BaseException):
    """``os._exit`` in the fake: the kernel ends mid-request."""


class _Hang(BaseException):
    """``time.sleep`` in the fake: the request runs until it is interrupted."""


class _Shim:
    """A module seen by fake-kernel code: ``overrides`` first, the real module otherwise."""

    def __init__(self, module: Any, **overrides: Any) -> None:
        self._module = module
        self._overrides = overrides

    def __getattr__(self, name: str) -> Any:
        if name in self._overrides:
            return self._overrides[name]
        return getattr(self._module, name)


class _Namespace:
    def __init__(self, **members: Any) -> None:
        self.__dict__.update(members)


def _exit(status: int = 0) -> None:
    raise _Death


def _sleep(seconds: float) -> None:
    if seconds > 0:
        raise _Hang


_SHIMS = {"os": _Shim(os, _exit=_exit), "time": _Shim(time, sleep=_sleep)}


class _DisplayHandle:
    def __init__(self, publish: Callable[[str, Any, str], None], display_id: str) -> None:
        self._publish = publish
        self.display_id = display_id

    def update(self, obj: Any) -> None:
        self._publish("update_display_data", obj, self.display_id)


class InProcessPython:
    """A reaction that executes each request's code with :func:`exec` in one namespace (one
    instance per kernel life) and answers as ipykernel does; see the module docstring.

    ``namespace`` is the kernel's user namespace; tests may read it.
    """

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {"__name__": "__main__"}
        self._backend: FakeBackend | None = None
        self._msg_id = ""
        overrides = {
            "print": self._print,
            "input": self._input,
            "display": self._display,
            "__import__": self._import,
        }
        self.namespace["__builtins__"] = {**vars(builtins), **overrides}

    def __call__(self, backend: FakeBackend, msg_id: str, code: str) -> None:
        self._backend, self._msg_id = backend, msg_id
        request = backend.current
        silent = request is not None and request.silent
        if not silent:
            backend.emit(
                message("execute_input", msg_id, code=code, execution_count=backend.count + 1)
            )
        try:
            value = self._run(code)
        except _Death:
            backend.die()
            return
        except _Hang:
            backend.on_interrupt = self._interrupted
            return
        except Exception as err:
            self._fail(err)
            return
        if value is not None and not silent:
            data = {"text/plain": repr(value)}
            backend.emit(
                message(
                    "execute_result",
                    msg_id,
                    data=data,
                    metadata={},
                    execution_count=backend.count + 1,
                )
            )
        expressions = request.user_expressions if request is not None else {}
        backend.finish(msg_id, user_expressions=self._expressions(expressions))

    def _run(self, code: str) -> Any:
        tree = ast.parse(code, "<cell>", "exec")
        last = tree.body[-1] if tree.body else None
        if isinstance(last, ast.Expr):
            tree.body.pop()
            exec(compile(tree, "<cell>", "exec"), self.namespace)
            return eval(compile(ast.Expression(last.value), "<cell>", "eval"), self.namespace)
        exec(compile(tree, "<cell>", "exec"), self.namespace)
        return None

    def _fail(self, err: BaseException) -> None:
        backend = self._backend
        assert backend is not None
        ename, evalue = type(err).__name__, str(err)
        lines = traceback.format_exception(type(err), err, err.__traceback__)
        backend.emit(message("error", self._msg_id, ename=ename, evalue=evalue, traceback=lines))
        backend.finish(self._msg_id, status="error", ename=ename, evalue=evalue, traceback=lines)

    def _interrupted(self) -> None:
        backend = self._backend
        assert backend is not None
        backend.on_interrupt = None
        self._fail(KeyboardInterrupt())

    def _expressions(self, expressions: Mapping[str, str]) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for name, expression in expressions.items():
            try:
                value = eval(expression, self.namespace)
            except Exception as err:
                values[name] = {
                    "status": "error",
                    "ename": type(err).__name__,
                    "evalue": str(err),
                    "traceback": [],
                }
            else:
                values[name] = {"status": "ok", "data": {"text/plain": repr(value)}, "metadata": {}}
        return values

    def _print(self, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("file") is not None:
            print(*args, **kwargs)
            return
        buffer = io.StringIO()
        print(*args, file=buffer, sep=kwargs.get("sep", " "), end=kwargs.get("end", "\n"))
        assert self._backend is not None
        self._backend.emit(message("stream", self._msg_id, name="stdout", text=buffer.getvalue()))

    def _input(self, prompt: str = "") -> str:
        raise StdinNotImplementedError(
            "raw_input was called, but this frontend does not support input requests."
        )

    def _display(self, obj: Any, *, display_id: str | bool | None = None) -> _DisplayHandle | None:
        if display_id is None or display_id is False:
            self._publish("display_data", obj, None)
            return None
        ident = uuid.uuid4().hex if display_id is True else str(display_id)
        self._publish("display_data", obj, ident)
        return _DisplayHandle(self._publish, ident)

    def _publish(self, kind: str, obj: Any, display_id: str | None) -> None:
        content: dict[str, Any] = {"data": {"text/plain": repr(obj)}, "metadata": {}}
        if display_id is not None:
            content["transient"] = {"display_id": display_id}
        assert self._backend is not None
        self._backend.emit(message(kind, self._msg_id, **content))

    def _import(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if name in _SHIMS:
            return _SHIMS[name]
        if name == "IPython.display":  # the fake's own display, IPython is never imported
            return _Namespace(display=self._display)
        return builtins.__import__(name, *args, **kwargs)


FAKE_KERNELSPECS = ("python3",)
"""The kernelspecs :func:`python_backend`'s kernels "have installed"."""


def python_backend(
    *, origin: KernelOrigin = LOCAL_ORIGIN, python: InProcessPython | None = None
) -> FakeBackend:
    """A fresh fake kernel life answering with :class:`InProcessPython`, which starts for the
    kernelspecs of :data:`FAKE_KERNELSPECS` only (a :data:`~jupyter_jcli.kernels.BackendFactory`:
    pass it to ``KernelPool(backend_factory=...)`` or ``NotebookKernel``).

    Args:
        origin: what the started kernel reports (see :class:`FakeBackend`).
        python: the kernel's namespace to answer with (default: a new one per life). Pass the
            same :class:`InProcessPython` to every life, with ``attached`` in ``origin``, to
            fake a kernel a person keeps running on a server: each join sees the variables
            earlier ones left (``functools.partial(python_backend, origin=..., python=...)``
            is a backend factory).
    """
    return FakeBackend(
        python if python is not None else InProcessPython(),
        kernelspecs=FAKE_KERNELSPECS,
        origin=origin,
    )
