"""The scripted fake kernel backend of :mod:`kernel_fakes` (which documents
and re-exports it): :class:`FakeBackend`, its messages and the simplest reactions."""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels import KernelMessage, KernelOrigin

LOCAL_ORIGIN = KernelOrigin()

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
    as ``react`` says (see :mod:`kernel_fakes`).

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

    async def installed_kernelspecs(self) -> list[str] | None:
        """``kernelspecs`` (``None``: every name starts)."""
        return None if self.kernelspecs is None else list(self.kernelspecs)

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
