"""The operations of the ``jupyter-mcp`` tools: one workbench call each, and image lifting.

A tool's operation (its :attr:`~jupyter_jcli.mcp._workbench_tools.ToolSpec.run`) is made
by :func:`threaded` (a kernel-less workbench function, run in a worker thread so the event
loop keeps serving other requests and progress) or :func:`on_session` (a
:class:`~jupyter_jcli.workbench._session.Workbench` method); either way it is called with the
resolved notebook and the checked arguments as keyword arguments (the schema's property names
are the operation's parameter names), and its outcome's JSON document becomes the reply,
its lists of cells bounded as ``j-cli -j`` bounds them
(:mod:`jupyter_jcli.workbench._cell_lists`: at most 100 names, ``<key>_count`` beside, a
``notice`` naming :data:`OVERVIEW_PAGES` when one was cut), with :data:`CHANGED_BY_OTHERS`
when the person or another program changed the notebook since the session last saw it.

Images: wherever a document holds a list under ``images`` whose entries carry base64
``data`` of a raster MIME type (``read_cells``' condensed outputs, executions' outputs), the
bytes move into an MCP ``ImageContent`` block and the entry keeps its facts plus
``"delivered_as": "image_content"`` and ``"image"``: the image's position among the
result's images (0-based), so the base64 never travels twice; the image line of the
condensed text is renumbered to that position. An image this server already sent in the
session for the same notebook, cell, rev, output and bytes is not sent again: its entry says
``"delivered_as": "sent_before"`` and its image line says so, unless the call passes
``resend_images: true`` (:data:`RESEND_IMAGES`). The memory holds the last
:data:`SENT_IMAGES_REMEMBERED` images.
"""

from __future__ import annotations

import hashlib
import re
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from jupyter_jcli.condense import attached_as
from jupyter_jcli.errors import ErrorCode, JcliError, KernelError
from jupyter_jcli.mcp._registry import Call, Reply
from jupyter_jcli.mcp._results import IMAGE_DELIVERY, ImagePart
from jupyter_jcli.outputs import RASTER_MIME_TYPES
from jupyter_jcli.workbench import (
    CELLS_LISTED,
    MAX_WAIT_SECONDS,
    BackgroundBatch,
    bounded_cell_lists,
)

if TYPE_CHECKING:
    from jupyter_jcli.workbench import Workbench

__all__ = [
    "BACKGROUND",
    "CHANGED_BY_OTHERS",
    "OVERVIEW_PAGES",
    "RESEND_IMAGES",
    "RESEND_IMAGES_SCHEMA",
    "SENT_BEFORE",
    "SENT_IMAGES_REMEMBERED",
    "SentImages",
    "ToolHandler",
    "lift_images",
    "on_session",
    "run_status",
    "threaded",
]

BACKGROUND = "background"
"""The argument of the executing tools that answers at once with a run id (``run_status``)."""
CHANGED_BY_OTHERS = "changed_by_others"
"""The field of a result that names what others changed in the notebook since the last call."""
OVERVIEW_PAGES = f"notebook_overview start=0 limit={CELLS_LISTED}, then its next_call"
"""Where a result's notice sends the model for the cells a bounded list left out."""
RESEND_IMAGES = "resend_images"
"""The argument of the image-returning tools that sends every image again."""
RESEND_IMAGES_SCHEMA: dict[str, Any] = {
    "type": "boolean",
    "default": False,
    "description": "Resend images sent before.",
}
SENT_BEFORE = "sent_before"
"""Value of an image entry's ``delivered_as`` when the image was sent by an earlier result."""
SENT_IMAGES_REMEMBERED = 4096
"""Images a server remembers having sent (the oldest are forgotten first)."""
_HEAD = ("schema_version", "status")
"""The fields a result opens with, before :data:`CHANGED_BY_OTHERS`."""
_IMAGE_WORDS = re.compile(r"attached as image (\d+)\b")


class SentImages:
    """The images one server has sent in its session, by notebook, cell, rev, output, bytes."""

    def __init__(self, limit: int = SENT_IMAGES_REMEMBERED) -> None:
        self._seen: OrderedDict[tuple[str, ...], None] = OrderedDict()
        self._limit = limit

    def seen(self, key: tuple[str, ...]) -> bool:
        """Whether ``key`` was sent (and remember it as recent)."""
        if key in self._seen:
            self._seen.move_to_end(key)
            return True
        return False

    def add(self, key: tuple[str, ...]) -> None:
        """Remember ``key`` as sent."""
        self._seen[key] = None
        self._seen.move_to_end(key)
        while len(self._seen) > self._limit:
            self._seen.popitem(last=False)


_SENT: weakref.WeakKeyDictionary[Workbench, SentImages] = weakref.WeakKeyDictionary()


def _sent(workbench: Workbench) -> SentImages:
    memory = _SENT.get(workbench)
    if memory is None:
        memory = _SENT[workbench] = SentImages()
    return memory


ToolHandler = Callable[["Workbench", Call], Awaitable[Reply]]
"""A tool's operation before it is bound to the server's workbench."""


def threaded(function: Callable[..., Any]) -> ToolHandler:
    """The operation ``function(path, **arguments)``, run in a worker thread with the
    workbench's warm document cache active (``Workbench.warm``)."""

    async def run(workbench: Workbench, call: Call) -> Reply:
        def work() -> Any:
            with workbench.warm():
                return function(call.notebook, **call.arguments)

        outcome = await anyio.to_thread.run_sync(work)
        return lift_images(_bounded(outcome, workbench, call), _sent(workbench))

    return run


def on_session(
    method: Callable[..., Awaitable[Any]], *, reports_progress: bool = False
) -> ToolHandler:
    """The operation ``method(workbench, path, **arguments)``.

    Args:
        method: a :class:`~jupyter_jcli.workbench._session.Workbench` method.
        reports_progress: the method takes ``on_progress``: when the client asked for
            progress (and the call is not a ``dry_run``), it reports per cell and a heartbeat.
    """

    async def run(workbench: Workbench, call: Call) -> Reply:
        arguments = dict(call.arguments)
        resend = bool(arguments.pop(RESEND_IMAGES, False))
        background = bool(arguments.pop(BACKGROUND, False))
        if background and not arguments.get("dry_run"):
            return _start_background(method, workbench, call, arguments)
        try:
            if not reports_progress or call.progress is None or arguments.get("dry_run"):
                outcome = await method(workbench, call.notebook, **arguments)
            else:
                async with call.progress.heartbeat() as progress:
                    outcome = await method(
                        workbench, call.notebook, on_progress=progress.report, **arguments
                    )
        except KernelError as err:
            if err.code == ErrorCode.KERNEL_BUSY:  # held by a background batch: name it
                workbench.background.refuse_busy(_notebook(call), err)
            raise
        return lift_images(_bounded(outcome, workbench, call), _sent(workbench), resend=resend)

    return run


def _notebook(call: Call) -> Path:
    """The ``.ipynb`` of the call's notebook (a paired ``.py`` shares its kernel)."""
    return call.notebook.with_suffix(".ipynb")


def _start_background(
    method: Callable[..., Awaitable[Any]],
    workbench: Workbench,
    call: Call,
    arguments: dict[str, Any],
) -> Reply:
    """Start ``method`` as a background batch (:mod:`jupyter_jcli.workbench._background`);
    the reply names its run id."""

    async def work(job: BackgroundBatch) -> Any:
        return await method(
            workbench, call.notebook, on_progress=job.report, on_cell=job.add_cell, **arguments
        )

    job = workbench.background.start(call.tool, _notebook(call), work)
    document = {
        "schema_version": 1,
        "status": "ok",
        "operation": call.tool,
        "run_id": job.run_id,
        "state": job.state,
        "next_call": f"run_status run_id={job.run_id} wait_s=60",
    }
    return Reply(document=document)


async def run_status(workbench: Workbench, call: Call) -> Reply:
    """``run_status``: a background batch's progress and finished cells, or its final result
    (its outcome's document; its error as the error result, ``details.run_id`` added),
    after waiting up to ``wait_s`` for it to end.

    Raises:
        JcliError: ``RUN_NOT_FOUND``; the run's own error once it failed.
    """
    job = workbench.background.get(_notebook(call), str(call.arguments["run_id"]))
    wait_s = float(call.arguments.get("wait_s") or 0)
    if wait_s > 0:
        await job.wait(min(wait_s, MAX_WAIT_SECONDS))
    if job.error is not None:
        err = job.error
        if isinstance(err, JcliError):
            raise JcliError(err.code, err.message, {**err.details, "run_id": job.run_id}) from err
        raise err
    status = job.status()
    head = {"schema_version": 1, "status": "ok", "operation": "run_status"}
    if job.outcome is None:
        return Reply(document={**head, **status})
    final = _bounded(job.outcome, workbench, call)
    for key in ("schema_version", "status", "operation"):
        final.pop(key, None)
    keep = ("run_id", "tool", "state", "elapsed_s")
    document = {**head, **{key: status[key] for key in keep}, **final}
    return lift_images(document, _sent(workbench))


def _bounded(outcome: Any, workbench: Workbench, call: Call) -> dict[str, Any]:
    """The outcome's JSON document with its lists of cells bounded, the notice naming
    :data:`OVERVIEW_PAGES` (as ``j-cli -j`` bounds them), and, when someone else changed the
    notebook since the session's last call on it, ``changed_by_others`` (the line of
    ``Workbench.changed_by_others``) after ``status``."""
    document = bounded_cell_lists(outcome.to_dict(), OVERVIEW_PAGES)
    news = workbench.changed_by_others(call.notebook)
    if news is None:
        return document
    head: dict[str, Any] = {k: document.pop(k) for k in _HEAD if k in document}
    return {**head, CHANGED_BY_OTHERS: news, **document}


def lift_images(
    document: Mapping[str, Any], sent: SentImages | None = None, *, resend: bool = False
) -> Reply:
    """Move every raster image's base64 out of ``document`` into image parts (see above).

    Args:
        document: a JSON document (not modified).
        sent: the images the server sent before in this session (updated); None: send all.
        resend: send every image, also those in ``sent``.

    Returns:
        The :class:`Reply`: a copy of the document with image entries (and the image lines
        of their condensed text) rewritten, and the images in document order.
    """
    images: list[ImagePart] = []
    notebook = str(document.get("notebook_path") or document.get("path") or "")

    def walk(value: Any, cell: Mapping[str, Any] | None) -> Any:
        if isinstance(value, Mapping):
            if isinstance(value.get("images"), list):
                return _lift_outputs(value, images, _Where(notebook, cell, sent, resend))
            inner = value if "name" in value and "outputs" in value else cell
            return {k: walk(v, inner) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(item, cell) for item in value]
        return value

    lifted = walk(document, None)
    return Reply(document=lifted, images=tuple(images))


class _Where:
    """The cell an ``images`` list belongs to, and the session's memory of sent images."""

    def __init__(
        self,
        notebook: str,
        cell: Mapping[str, Any] | None,
        sent: SentImages | None,
        resend: bool,
    ) -> None:
        self.notebook = notebook
        self.cell = cell
        self.sent = sent
        self.resend = resend

    def key(self, entry: Mapping[str, Any]) -> tuple[str, ...] | None:
        if self.sent is None or self.cell is None:
            return None
        digest = hashlib.sha256(str(entry["data"]).encode("ascii", "replace")).hexdigest()
        name, rev = self.cell.get("name"), self.cell.get("rev")
        return (self.notebook, str(name), str(rev), str(entry.get("output_index")), digest)


def _lift_outputs(
    outputs: Mapping[str, Any], images: list[ImagePart], where: _Where
) -> dict[str, Any]:
    """Lift one condensed outputs' images; renumber their lines in its ``text``."""
    lifted: list[Any] = []
    words: dict[int, str] = {}
    for local, entry in enumerate(outputs["images"]):
        if not (
            isinstance(entry, Mapping)
            and isinstance(entry.get("data"), str)
            and entry.get("mime_type") in RASTER_MIME_TYPES
        ):
            lifted.append(entry)
            continue
        facts = {key: value for key, value in entry.items() if key != "data"}
        key = where.key(entry)
        if key is not None and where.sent is not None and where.sent.seen(key) and not where.resend:
            facts["delivered_as"] = SENT_BEFORE
            words[local] = f"sent before in this session ({RESEND_IMAGES}=true attaches it)"
        else:
            facts["delivered_as"] = IMAGE_DELIVERY
            facts["image"] = len(images)
            words[local] = attached_as(len(images))
            images.append(ImagePart(mime_type=str(entry["mime_type"]), data=str(entry["data"])))
            if key is not None and where.sent is not None:
                where.sent.add(key)
        lifted.append(facts)
    result = dict(outputs)
    result["images"] = lifted
    text = outputs.get("text")
    if isinstance(text, str) and words:

        def renumber(match: re.Match[str]) -> str:
            return words.get(int(match.group(1)), match.group(0))

        result["text"] = _IMAGE_WORDS.sub(renumber, text)
    return result
