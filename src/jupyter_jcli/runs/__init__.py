"""Saved runs: the saved results of runs that have no notebook, and their retention.

Inline code (``j-cli exec``) and plain scripts (``j-cli run script.py``) have no notebook to
hold their outputs. Their results are answered inline when they are short text only
(:func:`stays_inline`: no rich output, at most 4,000 characters and 20 items); otherwise
:func:`save_run` saves them under the command's working directory,
``<cwd>/.j-cli/outputs/<run-id>/``: a ``manifest.json`` (outputs in nbformat
shape, our ``managed_by`` marker, ``status``, ``created``) and each raster as a real file.
They are read back through the saved-output protocol by
:func:`jupyter_jcli.outputs.manifest.open_manifest` (``j-cli output show``).

:func:`clean_runs` applies retention (``j-cli output clean``, and after each saved run):
complete, recognized runs older than 7 days or beyond the newest 50 are deleted
(``JCLI_OUTPUT_RETENTION_DAYS``, ``JCLI_OUTPUT_MAX_RUNS``); anything uncertain is kept and
reported. A symlinked ``.j-cli`` is refused (``RUN_FOLDER_UNSAFE``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jupyter_jcli import lazy_exports

if TYPE_CHECKING:
    from jupyter_jcli.runs._folders import OUTPUTS_NAME, ROOT_NAME, outputs_folder
    from jupyter_jcli.runs._inline import (
        INLINE_ITEM_LIMIT,
        INLINE_TEXT_LIMIT,
        stays_inline,
        text_size,
    )
    from jupyter_jcli.runs._retention import (
        DEFAULT_MAX_RUNS,
        DEFAULT_RETENTION_DAYS,
        MAX_RUNS_ENV,
        RETENTION_DAYS_ENV,
        CleanReport,
        KeptEntry,
        clean_runs,
        retention_settings,
    )
    from jupyter_jcli.runs._store import SavedRun, new_run_id, save_run


_PUBLIC = {
    "_folders": "OUTPUTS_NAME ROOT_NAME outputs_folder",
    "_retention": (
        "DEFAULT_MAX_RUNS DEFAULT_RETENTION_DAYS MAX_RUNS_ENV RETENTION_DAYS_ENV CleanReport "
        "KeptEntry clean_runs retention_settings"
    ),
    "_inline": "INLINE_ITEM_LIMIT INLINE_TEXT_LIMIT stays_inline text_size",
    "_store": "SavedRun new_run_id save_run",
}
"""Per submodule, the public names it gives; each is imported on first access (PEP 562), so
a run whose outputs stay inline loads neither the saving nor the retention code."""

if not TYPE_CHECKING:  # mypy reads the imports above, with no __getattr__ to hide a typo
    __getattr__, __dir__, __all__ = lazy_exports(globals(), _PUBLIC)
