"""The operations of the ``jupyter-mcp`` tools: one workbench call each, and image lifting.

A tool's operation (its :attr:`~jupyter_jcli.mcp._workbench_tools.ToolSpec.run`) is made
by :func:`threaded` (a kernel-less workbench function, run in a worker thread so the event
loop keeps serving other requests and progress) or :func:`on_session` (a
:class:`~jupyter_jcli.workbench._session.Workbench` method); either way it is called with the
resolved notebook and the checked arguments as keyword arguments (the schema's property names
are the operation's parameter names), and its outcome's JSON document becomes the reply.

Images: wherever a document holds a list under ``images`` whose entries carry base64
``data`` of a raster MIME type (``read_cells``' condensed outputs, executions' outputs), the
bytes move into an MCP ``ImageContent`` block and the entry keeps its facts plus
``"delivered_as": "image_content"`` and ``"image"``: the image's position among the
result's images (0-based), so the base64 never travels twice.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from jupyter_jcli.mcp._registry import Call, Reply
from jupyter_jcli.mcp._results import IMAGE_DELIVERY, ImagePart
from jupyter_jcli.outputs import RASTER_MIME_TYPES

if TYPE_CHECKING:
    from jupyter_jcli.workbench._session import Workbench

__all__ = ["WorkbenchRun", "lift_images", "on_session", "threaded"]

WorkbenchRun = Callable[["Workbench", Call], Awaitable[Reply]]
"""A tool's operation before it is bound to the server's workbench."""


def threaded(function: Callable[..., Any]) -> WorkbenchRun:
    """The operation ``function(path, **arguments)``, run in a worker thread with the
    workbench's warm document cache active (``Workbench.warm``)."""

    async def run(workbench: Workbench, call: Call) -> Reply:
        def work() -> Any:
            with workbench.warm():
                return function(call.path, **call.arguments)

        outcome = await anyio.to_thread.run_sync(work)
        return lift_images(outcome.to_dict())

    return run


def on_session(
    method: Callable[..., Awaitable[Any]], *, reports_progress: bool = False
) -> WorkbenchRun:
    """The operation ``method(workbench, path, **arguments)``.

    Args:
        method: a :class:`~jupyter_jcli.workbench._session.Workbench` method.
        reports_progress: the method takes ``on_progress``: when the client asked for
            progress (and the call is not a ``dry_run``), it reports per cell and a heartbeat.
    """

    async def run(workbench: Workbench, call: Call) -> Reply:
        arguments = dict(call.arguments)
        if not reports_progress or call.progress is None or arguments.get("dry_run"):
            outcome = await method(workbench, call.path, **arguments)
        else:
            async with call.progress.heartbeat() as progress:
                outcome = await method(
                    workbench, call.path, on_progress=progress.report, **arguments
                )
        return lift_images(outcome.to_dict())

    return run


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
