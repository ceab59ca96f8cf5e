"""The tool registry both MCP servers serve: a tool is its definition plus one operation.

As in the MCP python-sdk's tool manager, a :class:`RegisteredTool` holds what ``tools/list``
shows (the MCP ``Tool``: name, description, input and output schemas, annotations) and the
one operation that answers ``tools/call``. The dispatcher
(:func:`jupyter_jcli.mcp._server.build_server`) does the rest the same way for every tool:
check the arguments (:attr:`RegisteredTool.check`), resolve the notebook the call names inside
the trusted roots with :func:`jupyter_jcli.mcp._roots.resolve_notebook` (its pair included),
run the operation with every file it opens confined to the roots, render the :class:`Reply`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mcp_types as types

from jupyter_jcli.errors import UsageError
from jupyter_jcli.mcp._model_text import model_view
from jupyter_jcli.mcp._results import ImagePart, json_result, protocol_result

if TYPE_CHECKING:
    from jupyter_jcli.mcp._progress import ProgressReporter

__all__ = ["Call", "Check", "Operation", "RegisteredTool", "Reply"]


@dataclass(frozen=True)
class Call:
    """One tool call, ready to run.

    Attributes:
        tool: the tool name.
        path: the notebook the call names, resolved inside the roots (pair checked too);
            ``None`` for a call that names none (a tool whose schema does not require it:
            ``list_kernels``, ``stop_kernel`` with ``all``).
        arguments: the other arguments, checked by the tool's :attr:`RegisteredTool.check`
            (for the workbench tools: against the input schema, defaults filled in); the
            names are the operation's keyword arguments.
        roots: the server's trusted roots for this call.
        progress: where to report progress (``None``: the client asked for none).
    """

    tool: str
    path: Path | None
    arguments: Mapping[str, Any]
    roots: tuple[Path, ...]
    progress: ProgressReporter | None = None

    @property
    def notebook(self) -> Path:
        """:attr:`path`, for the operation of a tool that requires one.

        Raises:
            UsageError: ``USAGE_ERROR`` when the call names none.
        """
        if self.path is None:
            raise UsageError(f"{self.tool} needs a notebook path.", {"tool": self.tool})
        return self.path


@dataclass(frozen=True)
class Reply:
    """A successful tool result: the JSON document and the images that go with it."""

    document: dict[str, Any]
    images: tuple[ImagePart, ...] = ()


Operation = Callable[[Call], Awaitable[Reply]]
"""What answers a call: checked arguments in, the result document out (errors raise)."""

Check = Callable[[Mapping[str, Any] | None], dict[str, Any]]
"""Checks a call's raw arguments; returns them ready for the operation (``USAGE_ERROR``)."""


@dataclass(frozen=True)
class RegisteredTool:
    """One tool of a server.

    Attributes:
        definition: the MCP ``Tool`` that ``tools/list`` shows.
        operation: answers a call.
        check: checks the raw arguments.
        path_argument: the argument naming the notebook the operation reads or writes
            (a tool may leave it out of its required arguments: a call without it names no
            notebook).
        must_exist: whether that file must exist already (false for a tool that creates it).
        protocol: the document is a saved-output protocol document: render it with
            :func:`~jupyter_jcli.mcp._results.protocol_result` (a raster read's bytes become
            one ``ImageContent``; the text is the document) instead of
            :func:`~jupyter_jcli.mcp._results.json_result` with the model's view
            (:func:`~jupyter_jcli.mcp._model_text.model_view`) as the text.
    """

    definition: types.Tool
    operation: Operation
    check: Check
    path_argument: str = "path"
    must_exist: bool = True
    protocol: bool = False

    @property
    def name(self) -> str:
        """The tool name."""
        return self.definition.name

    def render(self, reply: Reply) -> types.CallToolResult:
        """The ``CallToolResult`` of a successful call."""
        if self.protocol:
            return protocol_result(reply.document)
        return json_result(reply.document, images=reply.images, view=model_view)
