"""The one error catalogue of jupyter-jcli.

Every failure a caller can act on carries a code from :class:`ErrorCode`. Library code raises
a subclass of :class:`JcliError`; front ends render it as the error JSON
``{"schema_version": 1, "status": "error", "code": ..., "message": ..., "details": ...}``
(see :meth:`JcliError.to_dict`).

Exception tree::

    JcliError                 code, message, details
    ├── OutputProtocolError   the saved-output protocol (``jupyter_jcli.outputs``)
    ├── NotebookError         reading, pairing and writing notebook documents
    ├── AnalysisError         static cell analysis
    ├── KernelError           starting, running and talking to kernels (``jupyter_jcli.kernels``)
    └── UsageError            a front end was called with bad arguments

A lower layer's exception is translated into the caller's branch at one boundary, raised
``from`` the original, keeping the same code.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from enum import Enum
from typing import Any

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # pragma: no cover - exercised only on Python 3.10

    class StrEnum(str, Enum):
        """``enum.StrEnum`` for Python 3.10: members are their own string values."""

        def __str__(self) -> str:
            return str(self.value)


__all__ = [
    "CELL_TYPES",
    "EXIT_TERMINATED",
    "SCHEMA_VERSION",
    "AnalysisError",
    "ErrorCode",
    "JcliError",
    "KernelError",
    "NotebookError",
    "OutputProtocolError",
    "Terminated",
    "UsageError",
    "cancelled",
    "ok_document",
    "raise_terminated",
    "terminate_as_cancel",
]

SCHEMA_VERSION = 1
"""Version of every JSON document jupyter-jcli emits (success and error)."""
CELL_TYPES: tuple[str, ...] = ("code", "markdown", "raw")
"""The nbformat cell types, in nbformat's order: the allowed values named in the ``details`` of
every cell-type error. Defined here, beside the catalogue, because ``analysis`` and ``notebook``
both check them and may import nothing but this module."""


class ErrorCode(StrEnum):
    """Every error code jupyter-jcli can report. Values equal names."""

    # Files and notebooks
    FILE_NOT_FOUND = "FILE_NOT_FOUND"
    FILE_TYPE_UNSUPPORTED = "FILE_TYPE_UNSUPPORTED"
    NOTEBOOK_PAIR_NOT_FOUND = "NOTEBOOK_PAIR_NOT_FOUND"
    NOTEBOOK_READ_FAILED = "NOTEBOOK_READ_FAILED"
    NOTEBOOK_WRITE_FAILED = "NOTEBOOK_WRITE_FAILED"
    # Cells
    CELL_NOT_FOUND = "CELL_NOT_FOUND"
    CELL_MAPPING_UNRELIABLE = "CELL_MAPPING_UNRELIABLE"
    # The saved-output protocol
    OUTPUT_NOT_FOUND = "OUTPUT_NOT_FOUND"
    """No such output: an index out of range, or a run whose ``manifest.json`` is missing
    (never saved there, or removed by retention), as in the reference jupyter-jcli 0.9.7."""
    OUTPUT_TYPE_UNSUPPORTED = "OUTPUT_TYPE_UNSUPPORTED"
    OUTPUT_DATA_INVALID = "OUTPUT_DATA_INVALID"
    MIME_NOT_FOUND = "MIME_NOT_FOUND"
    MIME_NOT_SUPPORTED = "MIME_NOT_SUPPORTED"
    MIME_NOT_APPLICABLE = "MIME_NOT_APPLICABLE"
    INVALID_WINDOW = "INVALID_WINDOW"
    WINDOW_NOT_SUPPORTED = "WINDOW_NOT_SUPPORTED"
    INVALID_TRANSPORT_LIMIT = "INVALID_TRANSPORT_LIMIT"
    OUTPUT_TOO_LARGE = "OUTPUT_TOO_LARGE"
    # The document model
    REV_MISMATCH = "REV_MISMATCH"
    NAME_CONFLICT = "NAME_CONFLICT"
    INVALID_NAME = "INVALID_NAME"
    INVALID_CELL_TYPE = "INVALID_CELL_TYPE"
    UNDO_EMPTY = "UNDO_EMPTY"
    UNDO_CONFLICT = "UNDO_CONFLICT"
    INVALID_SOURCE = "INVALID_SOURCE"
    PAIR_OUT_OF_SYNC = "PAIR_OUT_OF_SYNC"
    # edit_cell_source: old_string occurs zero or several times (details: count)
    OLD_STRING_COUNT = "OLD_STRING_COUNT"
    # another program kept saving the file between a write's last re-read and its replace
    WRITE_CONFLICT = "WRITE_CONFLICT"
    # Kernels
    KERNELSPEC_NOT_FOUND = "KERNELSPEC_NOT_FOUND"
    KERNELSPEC_MISMATCH = "KERNELSPEC_MISMATCH"
    """A kernelspec was named for a notebook whose live kernel runs another one: nothing ran
    and nothing was remembered. Restart the kernel with that kernelspec to switch, or run
    without naming one."""
    KERNEL_START_FAILED = "KERNEL_START_FAILED"
    KERNEL_START_REFUSED = "KERNEL_START_REFUSED"
    """A Jupyter Server or gateway that accepted the token answered the request to start a
    kernel with an HTTP error (``details``: ``status``, the server's ``reason``, the
    ``kernel_username`` sent): Enterprise Gateway refusing the user (``EG_UNAUTHORIZED_USERS``,
    ``root`` by default; ``EG_AUTHORIZED_USERS``), its kernel limit, a failed launch."""
    KERNEL_BUSY = "KERNEL_BUSY"
    KERNEL_DIED = "KERNEL_DIED"
    KERNEL_KILLED = "KERNEL_KILLED"
    """A cell did not stop on interrupt after its timeout: the kernel was killed (state gone)."""
    KERNEL_RESTARTED = "KERNEL_RESTARTED"
    """The kernel was restarted while a call ran on it: the running cell was interrupted."""
    KERNEL_NOT_RUNNING = "KERNEL_NOT_RUNNING"
    VARIABLE_NOT_FOUND = "VARIABLE_NOT_FOUND"
    KERNEL_SHARED = "KERNEL_SHARED"
    """The kernel is shared with someone else (a joined Jupyter Server session): restarting
    it needs an explicit ``force``."""
    RUN_NOT_FOUND = "RUN_NOT_FOUND"
    """No background run of that id on this notebook in this server (never started, or
    forgotten among the oldest finished runs: ``details.expired`` true)."""
    # Jupyter Server backend
    SERVER_UNREACHABLE = "SERVER_UNREACHABLE"
    """The Jupyter Server could not be reached, or the connection to it was lost."""
    SERVER_AUTH_FAILED = "SERVER_AUTH_FAILED"
    """The Jupyter Server refused the token (HTTP 401 or 403)."""
    SERVER_ERROR = "SERVER_ERROR"
    """The Jupyter Server answered a request with an unexpected status or document."""
    SERVER_PATH_OUTSIDE_ROOT = "SERVER_PATH_OUTSIDE_ROOT"
    """The notebook is not under the Jupyter Server's root folder, so it has no server path."""
    COLLAB_UNAVAILABLE = "COLLAB_UNAVAILABLE"
    """The Jupyter Server has no real-time collaboration (``PUT /api/collaboration/session``
    is not served: jupyter-collaboration is not installed or is disabled), so the notebook's
    live document cannot be opened: use the local or contents store, or install
    jupyter-collaboration on the server."""
    COLLAB_VERSION_MISMATCH = "COLLAB_VERSION_MISMATCH"
    """The server's collaborative document is not of the jupyter-ydoc schema this
    jupyter-jcli speaks (details ``expected``, ``found``): another jupyter-ydoc major on the
    server. Nothing was read or written: install a jupyter-jcli whose jupyter-ydoc major
    matches the server's."""
    # Run outputs (``.j-cli/outputs/<run-id>/``)
    RUN_MANIFEST_INVALID = "RUN_MANIFEST_INVALID"
    """The file is not a run manifest of ours (not JSON, no ``managed_by`` marker, a bad
    shape), so its outputs cannot be listed or read."""
    OUTPUT_CLEAN_CONFIG_INVALID = "OUTPUT_CLEAN_CONFIG_INVALID"
    """A retention setting from the environment (``JCLI_OUTPUT_RETENTION_DAYS``,
    ``JCLI_OUTPUT_MAX_RUNS``) is not a non-negative number: nothing is cleaned (the
    reference jupyter-jcli 0.9.7's code)."""
    RUN_FOLDER_UNSAFE = "RUN_FOLDER_UNSAFE"
    """A ``.j-cli`` (or ``.j-cli/outputs``) folder is a symlink or not a folder: run outputs
    are neither written nor cleaned through it."""
    # Front ends
    USAGE_ERROR = "USAGE_ERROR"
    FILE_EXISTS = "FILE_EXISTS"
    FILE_WRITE_FAILED = "FILE_WRITE_FAILED"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    CANCELLED = "CANCELLED"
    """A second Ctrl-C (SIGINT, exit status 130), SIGTERM (143) or SIGHUP (129) cancelled the
    command before it answered: the kernel had been asked to interrupt the running code;
    what it printed since was not kept, and a cell being run keeps its saved outputs."""
    # Trusted roots of the MCP servers
    ROOTS_REQUIRED = "ROOTS_REQUIRED"
    PATH_NOT_ALLOWED = "PATH_NOT_ALLOWED"
    PATH_AMBIGUOUS = "PATH_AMBIGUOUS"
    # Host setup (j-cli setup)
    CONFIG_INVALID = "CONFIG_INVALID"
    CONFIG_CONFLICT = "CONFIG_CONFLICT"
    CONFIG_CHANGED = "CONFIG_CHANGED"


class JcliError(Exception):
    """Base of every jupyter-jcli error.

    Args:
        code: the catalogue code.
        message: one human sentence saying what failed and, where possible, what to do.
        details: JSON-serialisable facts a caller can act on (available MIME types, current
            rev, valid range, ...).
    """

    def __init__(
        self, code: ErrorCode, message: str, details: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.code = ErrorCode(code)
        self.message = message
        self.details: dict[str, Any] = dict(details or {})

    def to_dict(self) -> dict[str, Any]:
        """The error JSON document: schema_version, status "error", code, message, details
        (always an object, ``{}`` when the error has nothing to add)."""
        return {
            "schema_version": SCHEMA_VERSION,
            "status": "error",
            "code": str(self.code),
            "message": self.message,
            "details": dict(self.details),
        }

    @classmethod
    def unexpected(cls, exc: BaseException) -> JcliError:
        """``INTERNAL_ERROR`` for an exception no code covers (details ``exception``: its
        type's name): what a front end's error boundary reports."""
        return cls(
            ErrorCode.INTERNAL_ERROR,
            f"Unexpected {type(exc).__name__}: {exc}",
            {"exception": type(exc).__name__},
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!s}, {self.message!r})"


class OutputProtocolError(JcliError):
    """A saved-output protocol request failed (``jupyter_jcli.outputs``)."""


class NotebookError(JcliError):
    """A notebook document could not be read, paired, mapped or written."""


class AnalysisError(JcliError):
    """Static analysis could not be performed."""


class KernelError(JcliError):
    """A kernel could not be found, started, reached, or it died (``jupyter_jcli.kernels``)."""


class UsageError(JcliError):
    """A front end received invalid arguments. Exit status 2 on the command line."""

    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(ErrorCode.USAGE_ERROR, message, details)


def cancelled(*, terminated: bool = False, signal_name: str = "SIGTERM") -> JcliError:
    """``CANCELLED``: what a command stopped by a second Ctrl-C (or by SIGTERM or SIGHUP:
    ``terminated``, ``signal_name``) answers with ``-j`` (the kernel was asked to interrupt
    the code; the command gave up waiting for it)."""
    what = signal_name if terminated else "a second Ctrl-C"
    return JcliError(
        ErrorCode.CANCELLED,
        f"Cancelled by {what}: the kernel was asked to interrupt the code. A run's cells "
        "that finished were saved with their outputs as it went; the interrupted code's "
        "output was not kept (a cell keeps the outputs it had saved before).",
    )


class Terminated(KeyboardInterrupt):
    """SIGTERM, or SIGHUP (a closed terminal, a dropped SSH session: treated as SIGTERM),
    ended the command: it unwinds as a second Ctrl-C does (the kernel interrupted and let
    go, ``CANCELLED`` under ``-j``), and the command exits with status 128 + the signal's
    number (143, 129).

    Args:
        signum: the signal (``signal.SIGTERM`` or ``signal.SIGHUP``).
    """

    def __init__(self, signum: int = 15) -> None:
        super().__init__()
        self.signum = signum

    @property
    def exit_status(self) -> int:
        """128 + the signal's number, as the shell reports a command the signal ended."""
        return 128 + self.signum

    @property
    def signal_name(self) -> str:
        """``SIGTERM`` or ``SIGHUP``."""
        return "SIGHUP" if self.signum == TERMINATING_SIGNALS[1] else "SIGTERM"


EXIT_TERMINATED = 143
"""The exit status of a command ended by SIGTERM (128 + 15, as the shell reports it)."""
TERMINATING_SIGNALS = (15, 1)
"""SIGTERM and SIGHUP (their numbers on every POSIX system): both end a command as
:class:`Terminated`."""


def raise_terminated(signum: int, frame: object) -> None:
    """A SIGTERM or SIGHUP handler: raise :class:`Terminated` in the main thread."""
    raise Terminated(signum)


def terminate_as_cancel() -> None:
    """From now on, SIGTERM and SIGHUP raise :class:`Terminated` in this process (each unless
    someone set another handler than the default one, or ignores it: ``nohup``)."""
    import signal

    for signum in TERMINATING_SIGNALS:
        if signal.getsignal(signum) is signal.SIG_DFL:
            signal.signal(signum, raise_terminated)


def ok_document(**fields: Any) -> dict[str, Any]:
    """A success document: ``{"schema_version": 1, "status": "ok", **fields}``, in that order
    (the counterpart of :meth:`JcliError.to_dict`; every front end's answers start so)."""
    return {"schema_version": SCHEMA_VERSION, "status": "ok", **fields}
