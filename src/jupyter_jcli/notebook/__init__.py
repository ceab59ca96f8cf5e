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

from jupyter_jcli.notebook.io import cell_source, parse_notebook, read_notebook

__all__ = ["cell_source", "parse_notebook", "read_notebook"]
