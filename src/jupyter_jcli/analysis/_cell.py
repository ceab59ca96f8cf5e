"""``analyze_cell``: one cell's effects, cached by a hash of its source."""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict

from jupyter_jcli.analysis._effects import analyze_tree
from jupyter_jcli.analysis._magics import parse_python
from jupyter_jcli.analysis._types import CellEffects, SyntaxErrorInfo
from jupyter_jcli.errors import CELL_TYPES, AnalysisError, ErrorCode

__all__ = ["CELL_TYPES", "MAX_ANALYZED_SOURCE", "analyze_cell", "clear_cache"]

"""The nbformat 4 cell types (``nbformat/v4/nbformat.v4.schema.json``)."""

MAX_ANALYZED_SOURCE = 1_000_000
"""Characters (code points) of cell source analysed at most. A larger code cell is not
parsed (parsing and walking millions of lines takes minutes): it is reported ``too_large``,
treated as opaque and as a wildcard writer, with unknown reads."""

_CACHE_SIZE = 16384
_cache: OrderedDict[bytes, CellEffects] = OrderedDict()
_lock = threading.Lock()
_NON_CODE = {t: CellEffects(cell_type=t) for t in ("markdown", "raw")}


def clear_cache() -> None:
    """Forget every cached cell analysis (for cold-start measurements and tests)."""
    with _lock:
        _cache.clear()


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def analyze_cell(source: str, cell_type: str = "code") -> CellEffects:
    """Static effects of one cell on the kernel's global namespace.

    Code cells are transformed by IPython's own input transformer when they may hold magics,
    shell commands or help syntax, then parsed with :mod:`ast`; markdown and raw cells have
    empty effects. Results are cached by a BLAKE2b digest of the source (least recently used
    entries are dropped past 16,384 cells), so re-analysing a notebook after one edit costs
    about one cell.

    Args:
        source: the cell source, lines joined (nbformat stores it as a string or a list).
        cell_type: ``"code"``, ``"markdown"`` or ``"raw"``; any other non-empty type (nbformat
            4's ``unrecognized_cell``, from a later minor version of the format) is opaque:
            empty effects, as a raw cell.

    Returns:
        The cell's :class:`CellEffects`. A cell that does not parse has only
        ``syntax_error`` set (line 1-based, column 0-based, Python's message). A code cell
        longer than :data:`MAX_ANALYZED_SOURCE` characters is not parsed: ``too_large`` is
        set and it is a wildcard writer with no known reads.

    Raises:
        AnalysisError: ``INVALID_CELL_TYPE`` when ``cell_type`` is empty or not a string (a cell
            without a type, which nbformat does not allow).
    """
    if cell_type != "code":
        if cell_type in _NON_CODE:
            return _NON_CODE[cell_type]
        if isinstance(cell_type, str) and cell_type:
            # nbformat 4's ``unrecognized_cell`` (a type from a later minor version, a
            # front end's own): opaque, like a raw cell; never run, stales nothing.
            return CellEffects(cell_type=cell_type)
        raise AnalysisError(
            ErrorCode.INVALID_CELL_TYPE,
            f"cell type {cell_type!r} is not a cell type; expected code, markdown or raw",
            {"cell_type": cell_type, "valid": sorted(CELL_TYPES)},
        )
    if len(source) > MAX_ANALYZED_SOURCE:
        return _too_large(len(source))
    key = hashlib.blake2b(source.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    with _lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    effects = _analyze(source)
    with _lock:
        _cache[key] = effects
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return effects


def _too_large(length: int) -> CellEffects:
    what = f"a source too large to analyse ({length:,} characters > {MAX_ANALYZED_SOURCE:,})"
    return CellEffects(wildcard_writers=(what,), too_large=True)


def _analyze(source: str) -> CellEffects:
    # A lone surrogate (valid in notebook JSON, e.g. in a comment or a string literal) cannot
    # be encoded for the parser; it can never be part of a name, so U+FFFD changes no effect.
    source = _LONE_SURROGATE.sub("\ufffd", source)
    try:
        tree = parse_python(source)
    except SyntaxError as exc:
        info = SyntaxErrorInfo(exc.lineno or 1, max((exc.offset or 1) - 1, 0), exc.msg)
        return CellEffects(syntax_error=info)
    except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
        return CellEffects(syntax_error=SyntaxErrorInfo(1, 0, f"cannot parse: {exc}"))
    try:
        return analyze_tree(tree)
    except RecursionError:
        return CellEffects(syntax_error=SyntaxErrorInfo(1, 0, "too deeply nested to analyse"))
