"""The saved-output protocol: list and read the stored outputs of one notebook cell.

This package is the single source of truth for output indexing, MIME selection, text paging
and transport limits; every front end calls it. The functions here are pure: they take a
cell's ``outputs`` value as parsed from the notebook JSON (nbformat v4 output shapes) and a
``source`` provenance mapping, and return JSON-ready dicts. They never execute, write or
cache anything. File-level entry points live in ``jupyter_jcli.outputs.notebook``.

The response shapes are those of the reference jupyter-jcli 0.9.7 (its ``outputs`` package),
so adapters written for it work unchanged; the fields marked *ours* only add information.
The deliberate differences are listed in ``docs/reference/compatibility.md``.

Success responses (schema version 1). Every one is
``{"schema_version": 1, "status": "ok", "source": {...}, ...}``, where ``source`` is a copy
of the caller's provenance (reads add ``output_index``). The file-level functions give
``{"kind": "notebook", "path", "cell_index", "requested_path", "requested_cell_index",
"mapping", "cell_id"?, "execution_count"?, "source_start_line"?, "source_end_line"?}`` plus
*ours* ``cell_type`` and ``cell_name``; see ``jupyter_jcli.outputs.notebook.CellProvenance``.

``list_outputs`` adds ``output_count`` (*ours*) and ``outputs``, one entry per physical
output, in order::

    {"output_index": 0, "output_type": "stream", "available_mime_types": [], "metadata": {},
     "name": "stdout", "total_characters": 120}
    {"output_index": 1, "output_type": "error", ..., "ename": "ValueError",
     "evalue": "bad", "traceback_lines": 4}
    {"output_index": 2, "output_type": "execute_result",
     "available_mime_types": ["text/plain", "text/html"], "metadata": {},
     "execution_count": 3, "mime_bytes": {"text/plain": 51, "text/html": 800}}

``available_mime_types`` lists a bundle's ``data`` keys in stored order (``[]`` for streams
and errors). *Ours*: ``metadata`` on every entry, ``total_characters``, ``traceback_lines``
and ``mime_bytes``, which gives, per type, the UTF-8 size of the stored value (text joined;
JSON values compactly serialised, ``null`` if they cannot be): a guide to the cost of a read.
A malformed output (not an object, ``data`` not an object, ``text`` of a wrong type, a
missing ``ename``, an unknown ``output_type``, ``metadata`` nested too deeply...) does not
break the listing: its entry carries ``"problem": {"code", "message"}`` (``output_type`` is
``null`` when not a string) and omits the per-type fields; reading it fails with that code.
A bundle whose outputs are sound but one of whose values has the wrong type (an
``image/png`` or ``text/*`` value that is not a string or a list of strings, a JSON value
nested more than ``MAX_JSON_DEPTH`` levels) keeps its other fields and carries
``"mime_problems": {mime_type: {"code", "message"}}`` with ``mime_bytes`` ``null`` for those
types; reading such a type, explicitly or by automatic selection, fails with that code. The
listing and the read share these checks, so they never disagree on structure.

``read_output`` adds ``output_type``, ``available_mime_types`` and ``metadata``, then:

- ``stream``: ``"stream": {"name", <text-window fields>}``.
- ``error``: ``"error": {"ename", "evalue", "traceback"}`` (the stored list of strings).
- ``display_data``/``execute_result`` (plus ``execution_count``): ``selected`` =
  ``{"mime_type", "encoding", "bytes", "data", ...}`` where ``encoding`` is

  - ``"base64"`` for ``image/png``, ``image/jpeg``, ``image/webp``, ``image/gif``: ``data`` is
    canonical base64 (no whitespace), ``bytes`` the decoded size, plus (*ours*) ``width`` and
    ``height`` in pixels when the header gives them;
  - ``"json"`` for ``application/json``, ``*+json`` and ``application/*json``: ``data`` is the
    structured value, ``bytes`` its compact serialised size; never truncated;
  - ``"utf-8"`` for ``text/*`` (HTML, Markdown, plain text, CSV...) and SVG: the text-window
    fields, inside ``selected``.

Text-window fields: ``offset``, ``returned_characters``, ``total_characters``,
``truncated`` (true when the page is not the whole text: ``offset > 0`` or text remains
after it), ``next_offset`` (only when text remains), ``bytes`` (UTF-8 size of the page) and
``data``. Offsets and limits count Unicode code points; a list-of-strings value is joined
first; lone surrogates come back as U+FFFD. ``limit=None`` returns everything from
``offset``, still bounded by the transport limit.

Rules:

- Automatic selection order: ``image/png``, ``image/jpeg``, ``image/webp``, ``image/gif``,
  ``text/html``, ``text/markdown``, ``text/plain``, ``application/json``, the other JSON
  types sorted lexically, ``image/svg+xml``. Other types are never picked automatically; an
  explicit request returns ``text/*`` and JSON types, and any other type (``application/pdf``,
  ``application/octet-stream``...) is ``MIME_NOT_SUPPORTED``: listed, never returned.
- An explicit type absent from the bundle is ``MIME_NOT_FOUND``. ``supported_mime_types``
  filters a bundle's automatic and explicit selection alike, without fallback: an explicit
  type outside it, or no candidate left, is ``MIME_NOT_SUPPORTED`` (details list
  ``available_mime_types``). It does not apply to streams and errors, which are read
  normally; ``mime_type`` on a stream or error is ``MIME_NOT_APPLICABLE``.
- Rasters are decoded strictly (alphabet and padding; whitespace and line breaks inside and
  list-of-strings values are accepted) and must carry their format's signature (PNG magic,
  JPEG ``FF D8 FF``, ``RIFF....WEBP``, ``GIF87a``/``GIF89a``), else ``OUTPUT_DATA_INVALID``.
- ``offset == total`` gives an empty page; ``offset > total``, a negative offset, a limit
  below 1 or a non-int (``bool`` included) is ``INVALID_WINDOW``. A window asked for
  (``offset != 0``, or a ``limit`` other than ``DEFAULT_TEXT_LIMIT`` and None) on an image, a
  JSON value or an error is ``WINDOW_NOT_SUPPORTED``.
- JSON values: at most ``MAX_JSON_DEPTH`` (128) nested containers, checked by an iterative
  walk (nothing recurses on user data without a bound). NaN and infinities are serialised as
  ``null`` and come back as ``None``; integers of any size are serialised exactly and
  ``bytes`` counts that text (a notebook file is read with the standard library, which keeps
  them exact too: see ``jupyter_jcli.notebook.io``).
- Serialisation: one canonical form, the standard library's compact JSON
  (``json.dumps(value, separators=(",", ":"), ensure_ascii=False)``, UTF-8), in every
  process and front end, so that a size (``bytes``, the transport bound, a suggested
  ``limit``) never depends on which process serves the call.
- Transport: the compact serialised response (canonical form, UTF-8) must be at most
  ``max_transport_bytes``, else ``OUTPUT_TOO_LARGE`` with details ``bytes`` and
  ``max_transport_bytes`` (and, for text, a suggested smaller ``limit``). A bound below 1 or
  above ``MAX_TRANSPORT_BYTES`` is ``INVALID_TRANSPORT_LIMIT``.
- An ``output_index`` that is not an int, negative or out of range is ``OUTPUT_NOT_FOUND``
  with details ``output_count``. An ``outputs`` value that is not a list is
  ``OUTPUT_DATA_INVALID``.

Errors are :class:`OutputProtocolError` (``jupyter_jcli.errors``) with JSON-serialisable
details. Options of the wrong Python type (``source`` not a Mapping, ``mime_type`` not a
``str``) are programming errors and raise ``TypeError``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jupyter_jcli import lazy_exports

if TYPE_CHECKING:
    from jupyter_jcli.errors import SCHEMA_VERSION, OutputProtocolError
    from jupyter_jcli.outputs._directory import list_outputs
    from jupyter_jcli.outputs._jsonsafe import MAX_JSON_DEPTH, replace_surrogates, serialize_json
    from jupyter_jcli.outputs._limits import DEFAULT_TEXT_LIMIT, MAX_TRANSPORT_BYTES
    from jupyter_jcli.outputs._mime import TEXT_ENCODING, select_mime_type
    from jupyter_jcli.outputs._raster import RASTER_MIME_TYPES, Raster, decode_raster
    from jupyter_jcli.outputs._read import read_output


_PUBLIC = {
    "jupyter_jcli.errors": "SCHEMA_VERSION OutputProtocolError",
    "_directory": "list_outputs",
    "_jsonsafe": "MAX_JSON_DEPTH replace_surrogates serialize_json",
    "_limits": "DEFAULT_TEXT_LIMIT MAX_TRANSPORT_BYTES",
    "_mime": "TEXT_ENCODING select_mime_type",
    "_raster": "RASTER_MIME_TYPES Raster decode_raster",
    "_read": "read_output",
}
"""Per submodule, the public names it gives; each is imported on first access (PEP 562), so
a process that only writes JSON (``serialize_json``: the ``j-cli exec`` lane) loads neither
the reads nor the rasters."""

if not TYPE_CHECKING:  # mypy reads the imports above, with no __getattr__ to hide a typo
    __getattr__, __dir__, __all__ = lazy_exports(globals(), _PUBLIC)
