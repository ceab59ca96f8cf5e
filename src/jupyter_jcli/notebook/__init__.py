"""The notebook document: tolerant reading and ``.py`` pairing.

Submodules (imported on demand, so this package stays cheap to import):

- :mod:`jupyter_jcli.notebook.io`: read ``.ipynb`` files (nbformat 4.x as stored, v3 upgraded).
- :mod:`jupyter_jcli.notebook.pairing`: find the notebook paired with a ``.py`` file and map
  a ``.py`` cell to its notebook cell (jupytext, imported lazily).
- :mod:`jupyter_jcli.notebook.store`: the store seam: where a notebook lives (``NotebookRef``,
  the ``NotebookStore`` protocol over cell operations, ``LocalStore`` for files on this
  machine, ``open_notebook``), and how a collaborative room and the contents API map onto it.
- :mod:`jupyter_jcli.notebook.stores`: which store a notebook opens in (``--store``,
  ``$JUPYTER_JCLI_STORE``: ``StoreChoice``, ``open_store``, ``resolve_ref``, ``using_store``).
- :mod:`jupyter_jcli.notebook.live`: ``LiveOutputs``, the optional sink a store offers for
  the outputs of a running cell.
- :mod:`jupyter_jcli.notebook.testing`: ``MemoryStore``, an in-memory store for tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jupyter_jcli import lazy_exports

if TYPE_CHECKING:
    from jupyter_jcli.notebook._atomic import atomic_write_bytes
    from jupyter_jcli.notebook._descriptors import file_kind
    from jupyter_jcli.notebook._edits import AddOptions, MoveOptions, UpdateOptions
    from jupyter_jcli.notebook._loaded import LoadedNotebook
    from jupyter_jcli.notebook._open import Confinement, confined
    from jupyter_jcli.notebook._pair_search import notebook_formats
    from jupyter_jcli.notebook._views import address_fields
    from jupyter_jcli.notebook._warm import DocumentCache, tune_collector, warm
    from jupyter_jcli.notebook.io import cell_source, parse_notebook, read_notebook

_PUBLIC = {
    "_atomic": "atomic_write_bytes",
    "_descriptors": "file_kind",
    "_edits": "AddOptions MoveOptions UpdateOptions",
    "_loaded": "LoadedNotebook",
    "_open": "Confinement confined",
    "_pair_search": "notebook_formats",
    "_views": "address_fields",
    "_warm": "DocumentCache tune_collector warm",
    "io": "cell_source parse_notebook read_notebook",
}
"""Per module, the names other packages use beside the public modules above; each is
imported on first access (PEP 562)."""

if not TYPE_CHECKING:  # mypy reads the imports above, with no __getattr__ to hide a typo
    __getattr__, __dir__, __all__ = lazy_exports(globals(), _PUBLIC)
