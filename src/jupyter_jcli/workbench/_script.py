"""What ``j-cli run script.py`` runs: a notebook script cell by cell, or a plain script whole.

A ``.py`` file is a *notebook script* when it is paired with a notebook (jupytext's pairing
rules, :func:`jupyter_jcli.notebook.pairing.find_paired_notebook`), carries a jupytext header
(``jupytext.formats``), or has the cell markers of a jupytext format other than the
marker-less "light" default (py:percent ``# %%``, hydrogen, sphinx...) or light's own
``# +`` markers, as jupytext's own format guess tells (the document model pairs py:percent
only, so an unpaired script of another format is ``FILE_TYPE_UNSUPPORTED``). Its cells run
in order and their outputs are written into the paired notebook, created from the script
when absent (where the header's ``jupytext.formats`` put it, else beside the script, paired by
``jupytext.formats: "ipynb,py:percent"`` in the new notebook's metadata: :data:`PAIR_FORMATS`;
the script itself is not rewritten). Any
other ``.py`` is a *plain script*: it runs as one unit on a scratch kernel and no notebook
is written.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook.io import NOTEBOOK_SUFFIX, create_file, read_text_file
from jupyter_jcli.notebook.pairing import find_paired_notebook, jupytext_failed, read_py

__all__ = ["PAIR_FORMATS", "ScriptPlan", "prepare_script"]

_LIGHT_MARKER = re.compile(r"^# [+-]\s*(\{.*\})?\s*$", re.MULTILINE)


@dataclass(frozen=True)
class ScriptPlan:
    """How a ``.py`` file runs.

    Attributes:
        kind: ``"notebook"`` (cell by cell, outputs into ``notebook_path``) or ``"plain"``
            (one unit, no notebook).
        path: the script, absolute and resolved.
        notebook_path: the paired notebook (``"notebook"`` only).
        created: the paired notebook was created from the script by this call.
        formats: the ``jupytext.formats`` this call set in the created notebook's metadata
            (:data:`PAIR_FORMATS`), ``None`` when it set none (the script's header pairs).
    """

    kind: Literal["notebook", "plain"]
    path: Path
    notebook_path: Path | None = None
    created: bool = False
    formats: str | None = None

    def created_dict(self) -> dict[str, str | None]:
        """The ``created_notebook`` field of a run's document: the notebook created for the
        script (``path``), the script it is paired with (``paired_with``) and the
        ``jupytext.formats`` set in it (``formats``, ``null`` when the script's header
        pairs them)."""
        return {
            "path": str(self.notebook_path),
            "paired_with": str(self.path),
            "formats": self.formats,
        }


def _format_name(text: str, header: dict[str, object]) -> str | None:
    """jupytext's format of a script with cells (``"percent"``, ``"hydrogen"``...), or None
    for a plain script: light without ``# +`` markers and without a ``jupytext.formats``
    header (jupytext reports every marker-less script as light)."""
    from jupytext.formats import guess_format

    from jupyter_jcli.notebook import notebook_formats

    name, _options = guess_format(text, ".py")
    if name == "light" and notebook_formats(header) is None and not _LIGHT_MARKER.search(text):
        return None
    return str(name)


def _target(path: Path, header: dict[str, object]) -> Path:
    """Where the paired notebook of a script goes: by its header's formats, else beside it."""
    from jupyter_jcli.notebook import notebook_formats

    formats = notebook_formats(header)
    if formats is not None:
        from jupytext.formats import long_form_multiple_formats
        from jupytext.paired_paths import find_base_path_and_format, paired_paths

        try:
            long = long_form_multiple_formats(formats)
            _base, fmt = find_base_path_and_format(str(path), long)
            for candidate, candidate_fmt in paired_paths(str(path), fmt, long):
                if candidate_fmt.get("extension") == NOTEBOOK_SUFFIX:
                    return Path(candidate)
        except Exception:  # jupytext raises several kinds on formats that do not fit
            pass
    return path.with_suffix(NOTEBOOK_SUFFIX)


PAIR_FORMATS = "ipynb,py:percent"
"""The ``jupytext.formats`` set in a notebook created for a script whose header names none:
the two files are then a jupytext pair (``jupytext --sync``, Jupyter with jupytext and
jupyter-jcli keep both in step), the script's own format kept, its file left as it is."""


def _create_pair(path: Path, text: str, header: dict[str, object]) -> tuple[Path, str | None]:
    """Create the notebook of a py:percent script; returns its path and the formats set in
    its metadata (``None`` when the script's header names the pairing already)."""
    import jupytext

    from jupyter_jcli.notebook import notebook_formats

    target = _target(path, header)
    formats = None if notebook_formats(header) is not None else PAIR_FORMATS
    try:
        notebook = jupytext.reads(text, fmt="py")
        if formats is not None:  # pair it from the notebook's side; the script is not touched
            notebook.metadata.setdefault("jupytext", {})["formats"] = formats
        raw = jupytext.writes(notebook, fmt="ipynb").encode("utf-8")
    except Exception as err:  # jupytext raises many kinds on malformed scripts
        raise jupytext_failed(f"convert {path} to a notebook", path, err) from err
    with contextlib.suppress(FileExistsError):  # made meanwhile by someone else: the pair
        create_file(target, raw)
    return target.resolve(), formats


def prepare_script(path: str | Path) -> ScriptPlan:
    """Decide how the ``.py`` at ``path`` runs; create its paired notebook when it is a
    notebook script without one (nothing else is written).

    Raises:
        NotebookError: the codes of :func:`~jupyter_jcli.notebook.pairing.read_py`;
            ``NOTEBOOK_PAIR_NOT_FOUND`` (several notebooks claim the script),
            ``NOTEBOOK_WRITE_FAILED`` and ``NOTEBOOK_READ_FAILED`` (the pair cannot be made).
    """
    script = read_py(path)
    try:
        return ScriptPlan("notebook", script.path, find_paired_notebook(script.path))
    except NotebookError as err:
        if err.code != ErrorCode.NOTEBOOK_PAIR_NOT_FOUND or err.details.get("candidates"):
            raise
    text = read_text_file(script.path)
    format_name = _format_name(text, script.metadata)
    if format_name is None:
        return ScriptPlan("plain", script.path)
    if format_name != "percent":  # the document model pairs py:percent only
        raise NotebookError(
            ErrorCode.FILE_TYPE_UNSUPPORTED,
            f"{script.path} is a {format_name} script; only py:percent scripts run cell by "
            "cell (convert it: jupytext --to py:percent).",
            {"path": str(script.path), "format_name": format_name},
        )
    created, formats = _create_pair(script.path, text, script.metadata)
    return ScriptPlan("notebook", script.path, created, True, formats)
