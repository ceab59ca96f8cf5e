"""Trusted roots and path safety, shared by the MCP servers.

An MCP server only touches files inside its trusted roots: folders given on its command line
(``--root``), its working directory (the workbench server's default), or the roots the client
announces through MCP ``roots/list`` (https://modelcontextprotocol.io/specification/2025-11-25/client/roots;
a root is a ``file://`` URI naming a folder, or a single file).

Rules (every function here applies them the same way):

- A path is resolved with symlinks followed (``Path.resolve``), after ``..`` is applied; the
  *resolved* path must equal a root or lie below one, else ``PATH_NOT_ALLOWED``. A symlink
  inside a root that points outside is therefore refused, and ``..`` cannot escape.
- A relative path is tried against every folder root. Exactly one existing file inside the
  roots must match (the same file reached through two nested roots counts once); several is
  ``PATH_AMBIGUOUS``, none is ``FILE_NOT_FOUND`` (or ``PATH_NOT_ALLOWED`` when the candidates
  lie outside every root, so a refusal never reveals whether an outside file exists).
- No roots at all is ``ROOTS_REQUIRED``.
- A path no file can have is refused before any file system call: a NUL byte is
  ``USAGE_ERROR`` (as on the command line), an empty path or a name the system finds too long
  is ``FILE_NOT_FOUND``.

Where files are opened: the checks above run on the requested path, before any work; the
same roots then confine every file the call opens (:func:`confined_to`, the notebook layer's
``_open`` helper): both halves of a jupytext pair, snapshots restored by undo, temporary files
and renames of atomic writes. There the resolved path is walked from ``/`` one component at a
time without following links, so a folder swapped for a symlink during the call is refused,
never followed (``PATH_NOT_ALLOWED`` or a re-resolution), whatever the earlier check saw.

The errors are :class:`~jupyter_jcli.errors.JcliError` with those codes; ``details`` name the
requested path and the roots, never anything found outside them. Nothing here writes; the
functions stat and resolve paths, and :func:`ensure_pair_inside_roots` reads the ``.py``
header through jupytext to find its paired notebook.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from urllib.parse import urlsplit
from urllib.request import url2pathname

from jupyter_jcli.errors import ErrorCode, JcliError, UsageError
from jupyter_jcli.notebook import Confinement, confined

__all__ = [
    "confined_to",
    "ensure_inside_roots",
    "ensure_pair_inside_roots",
    "find_root",
    "resolve_in_roots",
    "resolve_notebook",
    "roots_from_paths",
    "roots_from_uris",
]

_LOCAL_HOSTS = frozenset({"", "localhost"})


def _dedupe(paths: Iterable[Path]) -> tuple[Path, ...]:
    return tuple(dict.fromkeys(paths))


def _root_list(roots: Sequence[Path]) -> list[str]:
    return [str(root) for root in roots]


def roots_from_paths(paths: Iterable[str | os.PathLike[str]]) -> tuple[Path, ...]:
    """Trusted roots from local paths (``--root`` options, a working directory).

    Args:
        paths: existing folders or files; relative ones resolve against the current directory.

    Returns:
        The resolved roots (symlinks followed), in the order given, duplicates removed.

    Raises:
        JcliError: ``FILE_NOT_FOUND`` for a path that does not exist (details ``root``).
    """
    resolved: list[Path] = []
    for path in paths:
        root = Path(path).expanduser().resolve()
        if not root.exists():
            raise JcliError(
                ErrorCode.FILE_NOT_FOUND,
                f"Root {os.fspath(path)} does not exist.",
                {"root": os.fspath(path)},
            )
        resolved.append(root)
    return _dedupe(resolved)


def roots_from_uris(uris: Iterable[str]) -> tuple[Path, ...]:
    """Trusted roots from the ``uri`` values of an MCP ``roots/list`` result.

    Only local ``file://`` URIs are used (host empty or ``localhost``, percent-escapes
    decoded); other schemes and remote hosts are skipped, since no local path can lie in
    them. Roots that do not exist are kept: nothing can be found inside them.

    Args:
        uris: root URIs as the client sent them.

    Returns:
        The resolved roots in the order given, duplicates removed (possibly empty).
    """
    resolved: list[Path] = []
    for uri in uris:
        parts = urlsplit(uri)
        if parts.scheme.lower() != "file" or parts.netloc.lower() not in _LOCAL_HOSTS:
            continue
        local = url2pathname(parts.path)
        if not local or "\0" in local:  # a NUL byte (``%00``): no folder can have that name
            continue
        resolved.append(Path(local).resolve())
    return _dedupe(resolved)


def confined_to(roots: Sequence[Path]) -> AbstractContextManager[Confinement]:
    """Confine every file the notebook layer opens in the block (and the worker threads and
    tasks it starts) to ``roots``: reads, pairs, writes, undo (``notebook._open``).

    Args:
        roots: resolved trusted roots.
    """
    return confined(Confinement.to_roots(roots))


def find_root(path: Path, roots: Sequence[Path]) -> Path | None:
    """The first root that ``path`` equals or lies below, lexically (no resolution).

    Args:
        path: an absolute, already resolved path.
        roots: resolved roots.

    Returns:
        That root, or None.
    """
    for root in roots:
        if path == root or root in path.parents:
            return root
    return None


def _check_path_text(text: str) -> None:
    """Refuse a path no file can have, before the OS is asked (``os.stat`` raises ValueError)."""
    if not text:
        raise JcliError(ErrorCode.FILE_NOT_FOUND, "The path is empty.", {"path": text})
    if "\0" in text:
        raise UsageError(
            "The path contains a NUL byte, which no file name can hold.", {"path": repr(text)}
        )


def _exists(candidate: Path) -> bool:
    """Whether ``candidate`` exists; a name the OS refuses (too long, ...) does not."""
    try:
        return candidate.exists()
    except (OSError, ValueError):
        return False


def _require_roots(roots: Sequence[Path]) -> None:
    if not roots:
        raise JcliError(
            ErrorCode.ROOTS_REQUIRED,
            "No trusted roots: start the server with --root PATH, or use a client that "
            "supplies roots (MCP roots/list).",
        )


def _not_allowed(path: str | os.PathLike[str], roots: Sequence[Path], what: str) -> JcliError:
    return JcliError(
        ErrorCode.PATH_NOT_ALLOWED,
        f"The {what} {os.fspath(path)} lies outside the trusted roots (symlinks resolved).",
        {"path": os.fspath(path), "roots": _root_list(roots)},
    )


def ensure_inside_roots(
    path: str | os.PathLike[str], roots: Sequence[Path], *, what: str = "path"
) -> Path:
    """Resolve an absolute path (symlinks followed) and check it lies inside a root.

    The path need not exist (a file about to be created is checked the same way).

    Args:
        path: an absolute path, or a relative one taken against the current directory.
        roots: resolved trusted roots (see :func:`roots_from_paths`, :func:`roots_from_uris`).
        what: how the message names the path (``"path"``, ``"paired notebook"``, ...).

    Returns:
        The resolved path.

    Raises:
        JcliError: ``ROOTS_REQUIRED`` (no roots), ``PATH_NOT_ALLOWED`` (outside every root),
            ``USAGE_ERROR`` (a NUL byte in the path), ``FILE_NOT_FOUND`` (an empty path).
    """
    _require_roots(roots)
    _check_path_text(os.fspath(path))
    resolved = Path(path).resolve()
    if find_root(resolved, roots) is None:
        raise _not_allowed(path, roots, what)
    return resolved


def resolve_in_roots(
    path: str | os.PathLike[str], roots: Sequence[Path], *, must_exist: bool = True
) -> Path:
    """Resolve a requested path against the trusted roots.

    An absolute path is resolved and checked (:func:`ensure_inside_roots`); its existence is
    left to the reader (which reports ``FILE_NOT_FOUND``). A relative path is joined to every
    folder root and must match exactly one existing file inside the roots.

    Args:
        path: the path as the client sent it.
        roots: resolved trusted roots.
        must_exist: for a relative path that matches no existing file: False returns the
            candidate under the only folder root (for a file about to be created); with
            several folder roots that is ``PATH_AMBIGUOUS``.

    Returns:
        The resolved path, inside a root.

    Raises:
        JcliError: ``ROOTS_REQUIRED``; ``PATH_NOT_ALLOWED`` (resolves outside every root);
            ``PATH_AMBIGUOUS`` (a relative path matching several files; details ``matches``);
            ``FILE_NOT_FOUND`` (a relative path matching none, with ``must_exist``; an empty
            path); ``USAGE_ERROR`` (a NUL byte in the path).
    """
    _require_roots(roots)
    text = os.fspath(path)
    _check_path_text(text)
    requested = Path(text)
    if requested.is_absolute():
        return ensure_inside_roots(requested, roots)
    inside: list[Path] = []
    outside = False
    for root in roots:
        if not root.is_dir():
            continue
        candidate = (root / requested).resolve()
        if find_root(candidate, roots) is None:
            outside = True
        else:
            inside.append(candidate)
    candidates = _dedupe(inside)
    matches = [candidate for candidate in candidates if _exists(candidate)]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise JcliError(
            ErrorCode.PATH_AMBIGUOUS,
            f"{text} matches {len(matches)} files under the trusted roots; pass an absolute path.",
            {
                "path": text,
                "matches": [str(match) for match in matches],
                "roots": _root_list(roots),
            },
        )
    if not candidates and outside:
        raise _not_allowed(text, roots, "path")
    if not must_exist and len(candidates) == 1:
        return candidates[0]
    if not must_exist and len(candidates) > 1:
        raise JcliError(
            ErrorCode.PATH_AMBIGUOUS,
            f"{text} could be created under {len(candidates)} roots; pass an absolute path.",
            {"path": text, "candidates": [str(c) for c in candidates], "roots": _root_list(roots)},
        )
    raise JcliError(
        ErrorCode.FILE_NOT_FOUND,
        f"No file {text} under the trusted roots.",
        {"path": text, "roots": _root_list(roots)},
    )


def ensure_pair_inside_roots(py_path: Path, roots: Sequence[Path]) -> Path:
    """Find the notebook paired with a ``.py`` file and check it lies inside a root.

    The pair is found by jupytext's rules
    (:func:`jupyter_jcli.notebook.pairing.find_paired_notebook`), which may look in nearby
    folders; a pair found outside the roots is refused rather than read.

    Args:
        py_path: the ``.py`` file, already resolved and checked.
        roots: resolved trusted roots.

    Returns:
        The resolved notebook path.

    Raises:
        JcliError: ``PATH_NOT_ALLOWED`` (the pair lies outside every root), and the codes of
            ``find_paired_notebook`` (``NOTEBOOK_PAIR_NOT_FOUND``, ``FILE_NOT_FOUND``,
            ``NOTEBOOK_READ_FAILED``).
    """
    from jupyter_jcli.notebook.pairing import find_paired_notebook

    notebook = find_paired_notebook(py_path).resolve()
    if find_root(notebook, roots) is None:
        raise JcliError(
            ErrorCode.PATH_NOT_ALLOWED,
            f"The notebook paired with {py_path} lies outside the trusted roots.",
            {"path": str(py_path), "roots": _root_list(roots)},
        )
    return notebook


def resolve_notebook(path: str, roots: Sequence[Path], *, must_exist: bool = True) -> Path:
    """The one resolver of a tool's notebook: ``path`` inside the roots, and a paired ``.py``'s
    notebook inside them too (every file the operation reads or writes).

    Blocking (file system): call it from a worker thread.

    Args:
        path: the path as the client sent it (relative to a root, or absolute).
        roots: resolved trusted roots.
        must_exist: false for a file the operation creates.

    Returns:
        The resolved path.

    Raises:
        JcliError: the codes of :func:`resolve_in_roots` and of
            :func:`ensure_pair_inside_roots`.
    """
    resolved = resolve_in_roots(path, roots, must_exist=must_exist)
    if resolved.suffix.lower() == ".py" and resolved.is_file():
        ensure_pair_inside_roots(resolved, roots)
    return resolved
