"""Finding the ``.ipynb`` paired with a text file, through jupytext's pairing rules.

Order (the first rule that yields an existing notebook wins):

1. the ``jupytext.formats`` recorded in the text file's own header, expanded with
   ``jupytext.paired_paths.paired_paths`` (this is how jupytext itself pairs);
2. the same-stem ``.ipynb`` beside the text file (jupytext's default pairing);
3. a bounded search of nearby folders for ``<stem>.ipynb`` notebooks whose own
   ``metadata.jupytext.formats``, expanded the same way, contains the text file (under an
   active confinement, ``notebook._open``, only folders inside it are searched, and every
   candidate is read through the confined opener).

jupytext is imported lazily; nothing here writes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jupyter_jcli.errors import ErrorCode, JcliError, NotebookError
from jupyter_jcli.notebook.io import NOTEBOOK_SUFFIX, read_notebook, value_at

__all__ = ["find_pair", "notebook_formats"]

_SEARCH_LEVELS_UP = 2
"""How many parent folders above the text file's folder are search roots."""
_SEARCH_DEPTH = 2
"""How many folder levels below each search root are searched."""
_SEARCH_MAX_ENTRIES = 5000
"""Upper bound on directory entries visited by one search."""
_SEARCH_MAX_CANDIDATES = 50
"""Upper bound on candidate notebooks opened by one search."""
_SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "site-packages"})


def notebook_formats(metadata: object) -> str | list[Any] | None:
    """``metadata.jupytext.formats`` of a notebook (or text header), or None when absent."""
    formats = value_at(metadata, "jupytext", "formats")
    if isinstance(formats, (str, list)) and formats:
        return formats
    return None


def _paired_paths(path: Path, formats: str | list[Any]) -> list[tuple[Path, str]] | None:
    """Every file paired with ``path`` under ``formats`` as (path, extension), ``path`` included.

    None when ``formats`` is invalid or does not cover ``path``.
    """
    from jupytext.formats import long_form_multiple_formats
    from jupytext.paired_paths import find_base_path_and_format, paired_paths

    try:
        long_formats = long_form_multiple_formats(formats)
        _, fmt = find_base_path_and_format(str(path), long_formats)
        pairs = paired_paths(str(path), fmt, long_formats)
    except (ValueError, TypeError, KeyError, AttributeError):
        # jupytext's InconsistentPath and JupytextFormatError are ValueErrors; malformed
        # format entries surface as the others.
        return None
    return [(Path(p), str(f.get("extension", ""))) for p, f in pairs]


def _walk(root: Path, depth: int, budget: list[int]) -> Iterator[Path]:
    """Folders under ``root`` down to ``depth`` levels, skipping hidden and vendored ones."""
    yield root
    if depth == 0:
        return
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        budget[0] -= 1
        if budget[0] < 0:
            return
        if entry.name.startswith(".") or entry.name in _SKIPPED_DIRS:
            continue
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if is_dir:
            yield from _walk(Path(entry.path), depth - 1, budget)


def _nearby_notebooks(text_path: Path) -> list[Path]:
    stems = {text_path.stem}
    if "." in text_path.stem:  # x.pct.py pairs with x.ipynb under a ".pct" suffix
        stems.add(text_path.stem.split(".", 1)[0])
    from jupyter_jcli.notebook._open import active

    confinement = active()  # under the MCP roots, folders outside them are never listed
    roots = [text_path.parent, *list(text_path.parent.parents)[:_SEARCH_LEVELS_UP]]
    roots = [root for root in roots if confinement.allows(Path(os.path.realpath(root)))]
    budget = [_SEARCH_MAX_ENTRIES]
    seen: dict[Path, None] = {}
    for root in roots:
        for folder in _walk(root, _SEARCH_DEPTH, budget):
            for stem in sorted(stems):
                candidate = folder / f"{stem}{NOTEBOOK_SUFFIX}"
                if candidate.is_file():
                    seen.setdefault(candidate.resolve(), None)
                if len(seen) >= _SEARCH_MAX_CANDIDATES:
                    return list(seen)
    return list(seen)


def find_pair(text_path: Path, text_metadata: dict[str, Any]) -> Path:
    """The notebook paired with ``text_path`` (absolute, resolved).

    Args:
        text_path: the text file (``.py``), absolute and resolved.
        text_metadata: the notebook metadata jupytext read from the text file's header.

    Returns:
        The path of the paired ``.ipynb``.

    Raises:
        NotebookError: ``NOTEBOOK_PAIR_NOT_FOUND`` when no rule finds a notebook, or when the
            search finds several notebooks that each claim this file (``candidates``).
    """
    header_formats = notebook_formats(text_metadata)
    if header_formats is not None:
        for candidate, extension in _paired_paths(text_path, header_formats) or []:
            if extension == NOTEBOOK_SUFFIX and candidate.is_file():
                return candidate.resolve()

    beside = text_path.with_suffix(NOTEBOOK_SUFFIX)
    if beside.is_file():
        return beside.resolve()

    claiming: list[Path] = []
    for candidate in _nearby_notebooks(text_path):
        try:
            formats = notebook_formats(read_notebook(candidate).get("metadata"))
        except JcliError:
            continue
        if formats is None:
            continue
        pairs = _paired_paths(candidate, formats) or []
        if text_path in {path.resolve() for path, _ in pairs}:
            claiming.append(candidate)
    if len(claiming) == 1:
        return claiming[0]
    details: dict[str, Any] = {"path": str(text_path), "same_stem_notebook": str(beside)}
    if header_formats is not None:
        details["formats"] = header_formats
    if claiming:
        details["candidates"] = [str(p) for p in claiming]
        raise NotebookError(
            ErrorCode.NOTEBOOK_PAIR_NOT_FOUND,
            f"Several notebooks pair with {text_path}; cannot tell which one to read.",
            details,
        )
    raise NotebookError(
        ErrorCode.NOTEBOOK_PAIR_NOT_FOUND,
        f"No notebook paired with {text_path}: no {beside.name} beside it and no jupytext "
        "pairing (jupytext.formats) that points at it.",
        details,
    )
