"""Condensed outputs: a cell's saved outputs rendered for a model's context.

Pure: works on nbformat output dicts (``cell["outputs"]``), reads no file, starts no kernel.

What a model gets (:func:`condense_outputs`):

- one text, never longer than the character budget, made of one part per output, each
  introduced by a ``[output K: ...]`` line;
- streams of the same name merged in order (stdout and stderr apart, in order of first
  appearance), rendered as a terminal would show them (``\\r`` progress bars end as their
  final line, backspaces applied, every control sequence removed);
- long text cut head and tail with a marker giving the omitted size and the exact
  ``read_notebook_output cell_index=C output_index=K offset=N limit=L`` call that reads it;
- HTML tables as CSV (uniform) or JSON rows (spans, multi-level headers), rows cut from the
  middle with a count; never the ``text/plain`` repr as well;
- errors as ``ename: evalue`` and the frames that matter, control sequences removed;
- PNG/JPEG (and GIF/WebP) as images downscaled to fit a pixel and a byte cap; SVG, Plotly,
  Vega/Vega-Lite and widget outputs described in one line.

The budget is split max-min fair: outputs that need little get all they need, the rest share
what remains equally, so one huge output cannot starve the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jupyter_jcli import lazy_exports

if TYPE_CHECKING:
    from jupyter_jcli.condense._budget import UNBOUNDED, allocate
    from jupyter_jcli.condense._condense import (
        DEFAULT_BUDGET,
        DEFAULT_MAX_IMAGES,
        condense_outputs,
    )
    from jupyter_jcli.condense._images import DEFAULT_IMAGE_MAX_BYTES, DEFAULT_IMAGE_MAX_PIXELS
    from jupyter_jcli.condense._model import (
        CondensedImage,
        CondensedImageDict,
        CondensedOutputs,
        CondensedOutputsDict,
        CondensedPart,
        CondensedPartDict,
        PartKind,
        ReadHint,
    )
    from jupyter_jcli.condense._rasters import attached_as

_PUBLIC = {
    "_budget": "UNBOUNDED allocate",
    "_condense": "DEFAULT_BUDGET DEFAULT_MAX_IMAGES condense_outputs",
    "_images": "DEFAULT_IMAGE_MAX_BYTES DEFAULT_IMAGE_MAX_PIXELS",
    "_model": (
        "CondensedImage CondensedImageDict CondensedOutputs CondensedOutputsDict CondensedPart "
        "CondensedPartDict PartKind ReadHint"
    ),
    "_rasters": "attached_as",
}
"""Per submodule, the public names it gives; each is imported on first access (PEP 562), so
a process loads the condensing code only when it condenses."""

if not TYPE_CHECKING:  # mypy reads the imports above, with no __getattr__ to hide a typo
    __getattr__, __dir__, __all__ = lazy_exports(globals(), _PUBLIC)
