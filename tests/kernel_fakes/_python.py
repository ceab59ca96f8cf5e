"""The in-process Python fake kernel of :mod:`kernel_fakes` (which documents
and re-exports it): :class:`InProcessPython` and :func:`python_backend`."""

from __future__ import annotations

import ast
import builtins
import io
import os
import time
import traceback
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from jupyter_jcli.kernels import KernelOrigin
from kernel_fakes._backend import LOCAL_ORIGIN, FakeBackend, message


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
    instance per kernel life) and answers as ipykernel does; see
    :mod:`kernel_fakes`.

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
