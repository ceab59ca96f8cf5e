"""The saved-output protocol over the active store: :func:`saved_outputs`.

``j-cli notebook cells|outputs|output|show`` and the ``read_notebook_output`` tool read a
notebook's saved outputs through :func:`jupyter_jcli.outputs.notebook.open_notebook` (a file
on this machine). When the front end was asked through a server store (``--store``, or
``auto`` resolving to ``collab`` or ``contents``: ``notebook.stores``), the same reads answer
from the document that store holds (the live cells of a collaborative room), so the agent
reads what the person sees.
"""

from __future__ import annotations

import os
from pathlib import Path

from jupyter_jcli.notebook.stores import active_choice
from jupyter_jcli.outputs.notebook import NotebookOutputs
from jupyter_jcli.outputs.notebook import open_notebook as open_file

__all__ = ["saved_outputs"]


def saved_outputs(file_path: str | os.PathLike[str]) -> NotebookOutputs:
    """The saved outputs of the notebook ``file_path`` names, in the active store.

    Without an active choice, or when it opens the path as a local file, this is
    :func:`jupyter_jcli.outputs.notebook.open_notebook` (unchanged). Otherwise the document
    of the store's ref (``kind: "ipynb"``; ``path`` and ``notebook_path`` are the
    notebook's path in the store).

    Raises:
        JcliError: the codes of ``outputs.notebook.open_notebook``; for a store, its read
            codes (``FILE_NOT_FOUND``, ...).
    """
    choice = active_choice()
    if choice is None or choice.local_only:
        return open_file(file_path)
    store, ref = choice.ref_for(file_path)
    if store.kind == "local":
        return open_file(file_path)
    from jupyter_jcli.notebook.store import open_notebook  # ~12 ms: not on a local read

    notebook = open_notebook(ref, store=store).notebook_dict()
    metadata = notebook.get("metadata")
    return NotebookOutputs(
        kind="ipynb",
        path=Path(ref.path),
        cells=notebook["cells"],
        notebook_path=Path(ref.path),
        metadata=metadata if isinstance(metadata, dict) else {},
    )
