"""Cell names: the stable, human-readable identity of a notebook cell.

A name is kebab-case ASCII (:data:`NAME_PATTERN`: a lowercase letter, then lowercase letters,
digits and single hyphens; at most :data:`MAX_NAME_LENGTH` characters), unique in its notebook,
and stored at ``cell.metadata.jupyter_mcp.name``. It starts with a letter so that it can never
be mistaken for a cell index.

Naming rules, applied in document order by :func:`assign_names`:

1. A cell whose stored name is valid keeps it. A name belongs to the cell that had it: a
   stored name is *bound* to the nbformat ``id`` of the cell it was given to
   (``metadata.jupyter_mcp.cell_id``, written with the name). When several cells store the same
   name (JupyterLab's copy and paste copies the metadata, name and binding included, and
   gives the copy a new ``id``), the cell the name is bound to keeps it wherever it is; when
   none of them is (names stored before bindings were, or a notebook without ids), the first
   in document order does. The others are named by rule 2 from the stored name
   (``setup`` -> ``setup-2``).
2. Any other cell gets a base name from :func:`derive_base_name`, made unique with a numeric
   suffix ``-2``, ``-3``, ... (names already stored anywhere in the notebook are reserved
   first, so a derived name never steals a stored one).

:func:`derive_base_name` tries, in order:

- an invalid stored name, slugified (``"My Cell"`` -> ``my-cell``);
- Markdown: the first ATX heading (``# Title``) or setext heading (``Title`` over ``===``),
  else the first non-blank line that gives a slug (of the first three);
- raw: the first non-blank line that gives a slug (of the first three);
- code: the leading comment (comment lines before the first statement; shebangs, ``# %%``
  markers and tool pragmas such as ``# noqa`` are skipped); else the first statement:

  ============================================  ==========================
  first statement                               name
  ============================================  ==========================
  ``import numpy as np``                        ``import-numpy``
  ``import matplotlib.pyplot as plt``           ``import-matplotlib-pyplot``
  ``from sklearn.svm import SVC``               ``import-svc``
  ``from pylab import *``                       ``import-pylab``
  ``df = pd.read_csv(...)``, ``df: T = ...``    ``df``
  ``x, y = ...``                                ``x-y``
  ``df["z"] = ...``, ``df.z = ...``, ``x += 1``  ``df``, ``df-z``, ``x``
  ``def fit_model(...)`` / ``class Model``      ``def-fit-model`` / ``class-model``
  ``np.sort(x)``, ``print(L)``                  ``np-sort-x``, ``print-l``
  ``%matplotlib inline``, ``!pip install x``    ``matplotlib-inline``, ``pip-install-x``
  ``%%time`` / ``%%capture`` + body             the body's name
  anything else (``for``, ``with``, ...)        the first line, slugified
  ============================================  ==========================

  When neither gives a slug (``1 / 0``, ``(2 + 2) * 10``), the first later statement that
  names something (an assignment, a ``def``, a call: ``1 / 0`` then ``df = load()`` ->
  ``df``), else ``expr-`` and the first line's words and digits (``expr-1-0``);

- finally the cell type (``code`` for an empty code cell, ``markdown``, ``raw``).

Slugs are ASCII: text is NFKD-normalised, accents are dropped (``é`` -> ``e``) and other
non-ASCII characters separate words, so a heading in a non-Latin script falls through to the
next rule. Leading digits are dropped (``## 2. Data`` ->
``data``) and base names are cut to :data:`MAX_BASE_LENGTH` characters at a hyphen.

Names are computed on every read; they are written to the file (every cell's, each bound to
its cell's ``id``) when a caller mutates the notebook or a run writes outputs into it (see
:mod:`jupyter_jcli.notebook.document`). Once stored, a name survives edits and moves of its
cell, and no cell inserted or pasted anywhere takes it. Until then a derived name depends on
the cells above (a cell inserted above one named ``x`` by rule 2 may take ``x``): the
overview says which names are stored (``name_stored``).
"""

from __future__ import annotations

import ast
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
from typing import Any

from jupyter_jcli.errors import CELL_TYPES, ErrorCode, NotebookError
from jupyter_jcli.notebook.io import cell_source, value_at

__all__ = [
    "BINDING_KEY",
    "FIRST_NAME_KEY",
    "MAX_BASE_LENGTH",
    "MAX_NAME_LENGTH",
    "METADATA_KEY",
    "NAME_PATTERN",
    "assign_names",
    "bound_here",
    "derive_base_name",
    "dotted_name",
    "first_name",
    "is_valid_name",
    "rename_stored",
    "set_stored_name",
    "slugify",
    "stored_name",
    "unique_name",
    "validate_name",
]

METADATA_KEY = "jupyter_mcp"
"""Cell metadata key under which the name is stored (``metadata.jupyter_mcp.name``)."""

BINDING_KEY = "cell_id"
"""Key beside the name (``metadata.jupyter_mcp.cell_id``): the nbformat ``id`` of the cell the
name was given to (rule 1 of the module docstring)."""

FIRST_NAME_KEY = "first_name"
"""Key beside the name of a cell without an nbformat ``id`` that was renamed
(``metadata.jupyter_mcp.first_name``): the name it had before its first rename, which its
runs are recorded by (a cell with an ``id`` is recorded by its ``id``), so that a rename
keeps its run status."""

MAX_NAME_LENGTH = 64
"""Longest accepted name, in characters."""

MAX_BASE_LENGTH = 40
"""Longest derived base name, before a uniqueness suffix, in characters."""

NAME_PATTERN = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
"""A valid name matches this pattern in full (and is at most :data:`MAX_NAME_LENGTH` long)."""

_SKIPPED_COMMENT = re.compile(
    r"#\s*(?:!|%%|-\*-|noqa|type:|pylint|fmt:|ruff:|mypy:|pragma|isort:|In\[)", re.IGNORECASE
)
_ATX_HEADING = re.compile(r"\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_SETEXT_UNDERLINE = re.compile(r"\s{0,3}(?:=+|-+)\s*$")
_TRANSPARENT_CELL_MAGICS = ("time", "capture", "timeit", "prun")
_NOT_SLUG = re.compile(r"[^a-z0-9]+")
_LEADING_NUMBERS = re.compile(r"^(?:[0-9]+(?:-|$))+")


def is_valid_name(name: object) -> bool:
    """Whether ``name`` is a valid cell name (see :data:`NAME_PATTERN`)."""
    return (
        isinstance(name, str)
        and len(name) <= MAX_NAME_LENGTH
        and NAME_PATTERN.fullmatch(name) is not None
    )


def validate_name(name: object) -> str:
    """Return ``name`` if it is a valid cell name.

    Raises:
        NotebookError: ``INVALID_NAME`` (details ``name``, ``pattern``, ``max_length``).
    """
    if not is_valid_name(name):
        raise NotebookError(
            ErrorCode.INVALID_NAME,
            f"{name!r} is not a valid cell name: use kebab-case (lowercase letters, digits and "
            f"single hyphens, starting with a letter, at most {MAX_NAME_LENGTH} characters).",
            {"name": repr(name), "pattern": NAME_PATTERN.pattern, "max_length": MAX_NAME_LENGTH},
        )
    assert isinstance(name, str)
    return name


def slugify(text: str, *, max_length: int = MAX_BASE_LENGTH) -> str:
    """Turn free text into a kebab-case slug, or ``""`` when nothing usable remains.

    ``"## 2. Fast Sorting: np.sort"`` -> ``"fast-sorting-np-sort"``. Longer slugs are cut at
    the last hyphen within ``max_length`` characters (hard cut if that leaves under half).
    """
    ascii_text = text  # ASCII is its own NFKD form: only other text is decomposed
    if not text.isascii():
        ascii_text = "".join(
            char if char.isascii() else ("" if unicodedata.combining(char) else " ")
            for char in unicodedata.normalize("NFKD", text)
        )
    slug = _NOT_SLUG.sub("-", ascii_text.lower()).strip("-")
    slug = _LEADING_NUMBERS.sub("", slug).lstrip("0123456789")
    if len(slug) > max_length:
        cut = slug.rfind("-", 0, max_length + 1)
        slug = slug[:cut] if cut >= max_length // 2 else slug[:max_length]
        slug = slug.rstrip("-")
    return slug


def stored_name(cell: Mapping[str, Any]) -> str | None:
    """The name stored at ``cell.metadata.jupyter_mcp.name`` (valid or not), or ``None``."""
    name = value_at(cell, "metadata", METADATA_KEY, "name")
    return name if isinstance(name, str) else None


def set_stored_name(cell: MutableMapping[str, Any], name: str) -> None:
    """Store ``name`` at ``cell.metadata.jupyter_mcp.name``, bound to the cell's nbformat
    ``id`` when it has one (:data:`BINDING_KEY`), keeping every other key."""
    metadata = cell.get("metadata")
    if not isinstance(metadata, dict):
        metadata = {}
        cell["metadata"] = metadata
    section = metadata.get(METADATA_KEY)
    if not isinstance(section, dict):
        section = {}
        metadata[METADATA_KEY] = section
    section["name"] = name
    cell_id = cell.get("id")
    if isinstance(cell_id, str):
        section[BINDING_KEY] = cell_id


def rename_stored(cell: MutableMapping[str, Any], old: str, new: str) -> None:
    """Store ``new`` as ``cell``'s name in place of ``old`` (:func:`set_stored_name`); a
    cell without an nbformat ``id`` keeps ``old`` as its :data:`FIRST_NAME_KEY` unless it
    has one already."""
    set_stored_name(cell, new)
    if new != old and not isinstance(cell.get("id"), str) and first_name(cell) is None:
        cell["metadata"][METADATA_KEY][FIRST_NAME_KEY] = old


def first_name(cell: Mapping[str, Any]) -> str | None:
    """The :data:`FIRST_NAME_KEY` of a cell without an nbformat ``id``, else ``None``."""
    if isinstance(cell.get("id"), str):
        return None
    found = value_at(cell, "metadata", METADATA_KEY, FIRST_NAME_KEY)
    return found if isinstance(found, str) and is_valid_name(found) else None


def bound_here(cell: Mapping[str, Any]) -> bool:
    """Whether ``cell``'s stored name is bound to ``cell`` itself (its binding is its own
    nbformat ``id``); ``True`` for a cell without an ``id``, which has nothing to bind."""
    cell_id = cell.get("id")
    return not isinstance(cell_id, str) or _binding(cell) == cell_id


def _binding(cell: Mapping[str, Any]) -> object:
    return value_at(cell, "metadata", METADATA_KEY, BINDING_KEY)


def unique_name(base: str, taken: Iterable[str]) -> str:
    """``base`` if free, else ``base-2``, ``base-3``, ... (the first one not in ``taken``)."""
    return _first_free(base, taken if isinstance(taken, set | frozenset) else set(taken), 2)[0]


def _first_free(base: str, used: set[str] | frozenset[str], counter: int) -> tuple[str, int]:
    """``(name, next counter)``: ``base`` if free, else the first ``base-K`` not in ``used``
    for K from ``counter`` (the suffixes below it are known to be taken)."""
    if base not in used:
        return base, counter
    while True:  # terminates: ``used`` is finite
        candidate = _suffixed(base, counter)
        counter += 1
        if candidate not in used:
            return candidate, counter


def _suffixed(base: str, counter: int) -> str:
    suffix = f"-{counter}"
    return base[: MAX_NAME_LENGTH - len(suffix)].rstrip("-") + suffix


def assign_names(cells: Sequence[Mapping[str, Any]]) -> list[str]:
    """Compute the name of every cell (see the module rules). Pure: nothing is written.

    Args:
        cells: nbformat cell dicts, in document order.

    Returns:
        One unique valid name per cell, in the same order.
    """
    names: list[str | None] = [None] * len(cells)
    holder: dict[str, int] = {}  # stored name -> the cell that keeps it (rule 1)
    bound: set[str] = set()  # the names whose holder is the cell they are bound to
    for index, cell in enumerate(cells):
        name = stored_name(cell)
        if name is None or name in bound or not is_valid_name(name):
            continue
        if name not in holder:
            holder[name] = index
        cell_id = cell.get("id")
        if isinstance(cell_id, str) and _binding(cell) == cell_id:
            holder[name] = index
            bound.add(name)
    for name, index in holder.items():
        names[index] = name
    taken: set[str] = set(holder)
    # ``taken`` only grows, so each base's first free suffix does too: resuming it makes
    # naming n cells of one base linear, not quadratic
    next_counter: dict[str, int] = {}
    for index, cell in enumerate(cells):
        if names[index] is None:
            cell_type = cell.get("cell_type")
            base = derive_base_name(
                cell_type if isinstance(cell_type, str) else "code",
                cell_source(dict(cell)),
                stored=stored_name(cell),
            )
            name, next_counter[base] = _first_free(base, taken, next_counter.get(base, 2))
            names[index] = name
            taken.add(name)
    return [name for name in names if name is not None]


def derive_base_name(cell_type: str, source: str, *, stored: str | None = None) -> str:
    """A readable base name for a cell (not yet unique; see the module rules).

    Args:
        cell_type: ``"code"``, ``"markdown"`` or ``"raw"`` (anything else names like raw).
        source: the cell's source text.
        stored: an invalid stored name to slugify first, if any.

    Returns:
        A valid name of at most :data:`MAX_BASE_LENGTH` characters.
    """
    for candidate in _candidates(cell_type, source, stored):
        slug = slugify(candidate)
        if slug:
            return slug
    return cell_type if cell_type in CELL_TYPES else "cell"


def _candidates(cell_type: str, source: str, stored: str | None) -> Iterator[str]:
    """The texts :func:`derive_base_name` slugifies, in order; each group is computed only
    when the ones before gave no slug (a code cell's fallbacks parse it again)."""
    if stored:
        yield stored
    if cell_type == "code":
        yield from _code_candidates(source)
        yield from _code_fallbacks(source)
    elif cell_type == "markdown":
        yield from _markdown_candidates(source)
    else:
        yield from _first_lines(source, 3)


def _first_lines(source: str, count: int) -> list[str]:
    return [line for line in source.splitlines() if line.strip()][:count]


def _markdown_candidates(source: str) -> list[str]:
    lines = source.splitlines()
    for index, line in enumerate(lines):
        heading = _ATX_HEADING.match(line)
        if heading:
            return [heading.group(1)]
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if line.strip() and _SETEXT_UNDERLINE.match(following):
            return [line]
    return _first_lines(source, 3)


def _code_candidates(source: str) -> list[str]:
    lines = source.splitlines()
    comment: list[str] = []
    body_start = len(lines)
    for index, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            if not _SKIPPED_COMMENT.match(stripped) and not comment:
                comment.append(stripped.lstrip("#"))
            continue
        body_start = index
        break
    if comment:
        return comment
    return _statement_candidates(lines[body_start:])


def _statement_candidates(lines: list[str]) -> list[str]:
    if not lines:
        return []
    first = lines[0].strip()
    if first.startswith("%%"):
        magic = first[2:].split()
        if magic and magic[0] in _TRANSPARENT_CELL_MAGICS:
            return [*_statement_candidates(_drop_blank(lines[1:])), first[2:]]
        return [first[2:]]
    if first.startswith(("%", "!")):
        return [first.lstrip("%!")]
    statement = _first_statement("\n".join(lines)) or _first_statement(lines[0])
    named = _statement_name(statement) if statement is not None else None
    return [named, first] if named else [first]


def _code_fallbacks(source: str) -> list[str]:
    """The names tried when the leading comment and first statement give no slug: the first
    statement that names something, then ``expr`` and the first code line's words and
    digits (``1 / 0`` -> ``expr 1 0``). Cells that named well before never get here, so no
    name derived by the earlier rules changes."""
    later = [_statement_name(node) for node in _leading_statements(source)[:_LATER_STATEMENTS]]
    first = next(
        (line.strip() for line in source.splitlines() if line.strip() and line.strip()[0] != "#"),
        "",
    )
    return [*(name for name in later if name), f"expr {first}" if first else ""]


_LATER_STATEMENTS = 20
"""Statements of a cell looked at for a name when its first one gives none."""


def _drop_blank(lines: list[str]) -> list[str]:
    for index, line in enumerate(lines):
        if line.strip() and not line.strip().startswith("#"):
            return lines[index:]
    return []


_WHOLE_PARSE_CHARS = 20_000
"""Sources up to this many characters are parsed whole to find their first statement; longer
ones by growing prefixes of whole lines (a complete first statement parses on its own), so
naming a 10 MB cell does not parse 10 MB."""

_PREFIX_LINES = (20, 200, 2000)


def _first_statement(code: str) -> ast.stmt | None:
    statements = _leading_statements(code)
    return statements[0] if statements else None


def _leading_statements(code: str) -> list[ast.stmt]:
    """The top-level statements of ``code`` (whole up to :data:`_WHOLE_PARSE_CHARS`, else of
    the shortest prefix in :data:`_PREFIX_LINES` lines that parses), ``[]`` when none parses."""
    if len(code) <= _WHOLE_PARSE_CHARS:
        return _parse_body(code)
    lines = code.splitlines(keepends=True)[: _PREFIX_LINES[-1]]
    for count in _PREFIX_LINES:
        body = _parse_body("".join(lines[:count]))
        if body or count >= len(lines):
            return body
    return []


def _parse_body(code: str) -> list[ast.stmt]:
    try:
        return ast.parse(code).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []


def _statement_name(node: ast.stmt) -> str | None:
    if isinstance(node, ast.Import):
        return "import " + node.names[0].name
    if isinstance(node, ast.ImportFrom):
        first = node.names[0].name
        return "import " + ((node.module or "") if first == "*" else first)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return "def " + node.name
    if isinstance(node, ast.ClassDef):
        return "class " + node.name
    if isinstance(node, ast.Assign):
        return _target_name(node.targets[0])
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return _target_name(node.target)
    if isinstance(node, ast.Expr):
        value = node.value
        if isinstance(value, ast.Call):
            callee = dotted_name(value.func)
            if callee is None:
                return None
            if value.args:
                argument = dotted_name(value.args[0])
                if argument is not None:
                    return f"{callee} {argument}"
            return callee
        return dotted_name(value)
    return None


def _target_name(target: ast.expr) -> str | None:
    if isinstance(target, (ast.Tuple, ast.List)):
        parts = [_target_name(element) for element in target.elts]
        return " ".join(part for part in parts if part) or None
    if isinstance(target, ast.Starred):
        return _target_name(target.value)
    if isinstance(target, ast.Subscript):
        return _target_name(target.value)
    return dotted_name(target)


def dotted_name(node: ast.expr, *, calls: bool = False) -> str | None:
    """The dotted path of a name or attribute chain (``np.random.seed``), or ``None`` for
    any other expression. With ``calls`` a call in the chain counts too, as ``f()``
    (``plt.figure().add_subplot``)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted_name(node.value, calls=calls)
        return f"{base}.{node.attr}" if base else None
    if calls and isinstance(node, ast.Call):
        base = dotted_name(node.func, calls=True)
        return f"{base}()" if base else None
    return None
