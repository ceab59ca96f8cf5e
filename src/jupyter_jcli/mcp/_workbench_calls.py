"""Answering ``jupyter-mcp`` tool calls: checked arguments in, one workbench operation, a reply.

A handler takes a :class:`Call` (the tool's checked arguments, the server's roots and its
workbench) and returns a :class:`Reply` (the operation's JSON document and the images lifted
out of it). Blocking, kernel-less operations run in a worker thread
(``anyio.to_thread.run_sync``) so the event loop keeps serving other requests and progress.

Images: wherever a document holds a list under ``images`` whose entries carry base64
``data`` of a raster MIME type (``read_cells``' condensed outputs, executions' outputs), the
bytes move into an MCP ``ImageContent`` block and the entry keeps its facts plus
``"delivered_as": "image_content"`` and ``"image"``: the image's position among the
result's images (0-based), so the base64 never travels twice.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from jupyter_jcli.mcp._results import IMAGE_DELIVERY, ImagePart
from jupyter_jcli.mcp._roots import ensure_pair_inside_roots, resolve_in_roots
from jupyter_jcli.outputs import RASTER_MIME_TYPES

if TYPE_CHECKING:
    from jupyter_jcli.mcp._progress import ProgressReporter
    from jupyter_jcli.workbench._session import Workbench

__all__ = [
    "DOCUMENT_HANDLERS",
    "Call",
    "Handler",
    "Reply",
    "lift_images",
    "notebook_path",
    "resolve_notebook",
]


@dataclass(frozen=True)
class Call:
    """One tool call, ready to run.

    Attributes:
        tool: the tool name.
        arguments: the arguments, checked against the input schema, defaults filled in.
        roots: the server's resolved trusted roots.
        workbench: the server's kernel-attached workbench (kernels, run log, statuses).
        progress: where to report progress (``None``: the client asked for none).
    """

    tool: str
    arguments: Mapping[str, Any]
    roots: tuple[Path, ...]
    workbench: Workbench
    progress: ProgressReporter | None = None


@dataclass(frozen=True)
class Reply:
    """A successful tool result: the JSON document and the images that go with it."""

    document: dict[str, Any]
    images: tuple[ImagePart, ...] = ()


Handler = Callable[[Call], Awaitable[Reply]]


def resolve_notebook(path: str, roots: Sequence[Path], *, must_exist: bool = True) -> Path:
    """Resolve a tool's ``path`` inside the roots; a paired ``.py``'s notebook must be inside too.

    Blocking (file system): call it from a worker thread.

    Raises:
        JcliError: ``PATH_NOT_ALLOWED``, ``PATH_AMBIGUOUS``, ``FILE_NOT_FOUND`` (see
            :func:`jupyter_jcli.mcp._roots.resolve_in_roots`) and the pairing codes.
    """
    resolved = resolve_in_roots(path, roots, must_exist=must_exist)
    if resolved.suffix.lower() == ".py" and resolved.is_file():
        ensure_pair_inside_roots(resolved, roots)
    return resolved


async def notebook_path(call: Call, *, must_exist: bool = True) -> Path:
    """The call's ``path`` resolved inside the roots (in a worker thread)."""
    return await anyio.to_thread.run_sync(
        partial(resolve_notebook, str(call.arguments["path"]), call.roots, must_exist=must_exist)
    )


def lift_images(document: Mapping[str, Any]) -> Reply:
    """Move every raster image's base64 out of ``document`` into image parts (see above).

    Args:
        document: a JSON document (not modified).

    Returns:
        The :class:`Reply`: a copy of the document with image entries rewritten, and the
        images in document order.
    """
    images: list[ImagePart] = []

    def walk(value: Any, key: str | None) -> Any:
        if isinstance(value, Mapping):
            return {k: walk(v, str(k)) for k, v in value.items()}
        if isinstance(value, list):
            if key == "images":
                return [_lift(item, images) for item in value]
            return [walk(item, None) for item in value]
        return value

    lifted = walk(document, None)
    return Reply(document=lifted, images=tuple(images))


def _lift(entry: Any, images: list[ImagePart]) -> Any:
    if not (
        isinstance(entry, Mapping)
        and isinstance(entry.get("data"), str)
        and entry.get("mime_type") in RASTER_MIME_TYPES
    ):
        return entry
    facts = {key: value for key, value in entry.items() if key != "data"}
    facts["delivered_as"] = IMAGE_DELIVERY
    facts["image"] = len(images)
    images.append(ImagePart(mime_type=str(entry["mime_type"]), data=str(entry["data"])))
    return facts


def _given(arguments: Mapping[str, Any], *names: str) -> dict[str, Any]:
    """The named arguments that are present (absent ones keep the operation's defaults)."""
    return {name: arguments[name] for name in names if name in arguments}


async def _in_thread(call: Call, operation: Callable[..., Any], **kwargs: Any) -> Reply:
    """Resolve the path, run a sync workbench operation in a worker thread, lift images."""

    def run() -> Any:
        path = resolve_notebook(str(call.arguments["path"]), call.roots)
        return operation(path, **kwargs)

    outcome = await anyio.to_thread.run_sync(run)
    return lift_images(outcome.to_dict())


async def _read_cells(call: Call) -> Reply:
    args = call.arguments
    options = _given(args, "names", "start", "stop", "budget", "include_images")
    path = await notebook_path(call)
    return lift_images((await call.workbench.read_cells(path, **options)).to_dict())


async def _overview(call: Call) -> Reply:
    path = await notebook_path(call)
    return Reply((await call.workbench.notebook_overview(path)).to_dict())


async def _create(call: Call) -> Reply:
    from jupyter_jcli.workbench import create_notebook

    args = call.arguments

    def run() -> Any:
        path = resolve_notebook(str(args["path"]), call.roots, must_exist=False)
        return create_notebook(
            path, cells=list(args["cells"]), kernelspec_name=str(args["kernelspec_name"])
        )

    return Reply((await anyio.to_thread.run_sync(run)).to_dict())


async def _add(call: Call) -> Reply:
    from jupyter_jcli.workbench import add_cell

    args = call.arguments
    options = _given(args, "cell_type", "name", "before", "after", "position", "expected_rev")
    return await _in_thread(call, add_cell, source=args["source"], **options)


async def _update(call: Call) -> Reply:
    from jupyter_jcli.workbench import update_cell

    args = call.arguments
    options = _given(args, "source", "cell_type", "new_name")
    return await _in_thread(
        call, update_cell, name=args["name"], expected_rev=args["expected_rev"], **options
    )


async def _remove(call: Call) -> Reply:
    from jupyter_jcli.workbench import remove_cell

    args = call.arguments
    return await _in_thread(call, remove_cell, name=args["name"], expected_rev=args["expected_rev"])


async def _move(call: Call) -> Reply:
    from jupyter_jcli.workbench import move_cell

    args = call.arguments
    options = _given(args, "before", "after", "position")
    return await _in_thread(
        call, move_cell, name=args["name"], expected_rev=args["expected_rev"], **options
    )


async def _undo(call: Call) -> Reply:
    from jupyter_jcli.workbench import undo_last

    return await _in_thread(call, undo_last, force=bool(call.arguments["force"]))


async def _search(call: Call) -> Reply:
    from jupyter_jcli.workbench import search_cells

    args = call.arguments
    options = _given(args, "regex", "fields", "max_results", "context_chars")
    return await _in_thread(call, search_cells, query=args["query"], **options)


async def _summarize(call: Call) -> Reply:
    from jupyter_jcli.workbench import summarize_cells

    return await _in_thread(call, summarize_cells, **_given(call.arguments, "names", "model"))


DOCUMENT_HANDLERS: dict[str, Handler] = {
    "create_notebook": _create,
    "notebook_overview": _overview,
    "read_cells": _read_cells,
    "add_cell": _add,
    "update_cell": _update,
    "remove_cell": _remove,
    "move_cell": _move,
    "undo_last": _undo,
    "search_cells": _search,
    "summarize_cells": _summarize,
}
"""Handlers of the document tools (see :data:`jupyter_jcli.mcp._workbench_tools.DOCUMENT_TOOLS`)."""
