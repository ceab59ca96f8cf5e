"""IPython's transformation of whole-line ``%magic`` and ``!command`` lines, without IPython.

Importing ``IPython.core.inputtransformer2`` imports the whole IPython package (about 60-70 ms
of CPU), which every command that analyses a notebook would pay for one ``%matplotlib inline``.
:func:`transform_line_escapes` returns exactly what ``TransformerManager().transform_cell``
returns for the cells whose only IPython syntax is whole-line escapes, and ``None`` for every
other cell, which the caller then hands to IPython. The rules it mirrors (IPython 8-9,
``IPython/core/inputtransformer2.py``):

- ``transform_cell`` appends a newline to a cell without one and splits it with
  ``str.splitlines(keepends=True)``; its cleanup passes drop leading blank lines, remove the
  leading indentation (IPython 8: the first line's; IPython 9: ``textwrap.dedent``, which also
  empties whitespace-only lines, ``"\\r"`` included from Python 3.13 on), strip ``>>>`` /
  ``...`` and ``In [n]:`` prompts, and turn a cell starting with ``%%`` into one
  ``run_cell_magic`` call;
- its token passes then repeatedly tokenize the cell and rewrite the earliest special syntax:
  a logical line whose first token is an escape (``EscapedCommand``), ``a = %magic`` /
  ``a = !cmd`` assignments, and a logical line ending with ``?`` (help, which outranks an
  escape at the same place). An escape line becomes its indentation, the call and ``\\n``,
  where the call is built from the line after the escape with trailing whitespace (and the
  line end) stripped: ``%name args`` is ``get_ipython().run_line_magic('name', 'args')``
  (split at the first space) and ``!cmd`` is ``get_ipython().system('cmd')``, each argument
  as ``repr`` writes it. Python 3.12's tokenizer stops on a line with a NUL or a lone
  surrogate, and IPython then changes nothing.

Accepted here, so that the result is the same for IPython 8 and 9 on Python 3.10 to 3.13: a
cell whose first line is neither blank nor indented nor ``%%``, with no prompt, no NUL, no
lone surrogate, no line break other than ``\\n`` / ``\\r\\n``, no whitespace-only line
other than ``\\n`` (which only IPython 9 would empty), in which every line whose first
non-blank character is ``%`` or ``!`` is a *simple escape*: not ``%%``, ``%=``, ``!!`` or
``!=``, no ``?``, no trailing backslash, balanced brackets, only closed one-line strings
without an ``f``/``t`` prefix (so the tokenizer's logical line ends with the physical one and
no help call can claim it), and not after a line ending with a backslash. With the escapes
replaced by their calls the cell must parse, and each call must be a statement that starts
its line: then each escape starts a logical line of its own (not inside a string, brackets
or a continued line), every other line is plain Python (which no IPython pass changes), and
IPython's passes rewrite exactly these lines, one per round, in document order.

:func:`parse_line_escapes`, for the analyzer, which needs only the tree, also accepts
whitespace-only lines when none is inside a string literal: emptied or not, they change no
token, so the tree is IPython's whichever IPython is installed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

__all__ = ["parse_line_escapes", "transform_line_escapes"]

# IPython gives up (RuntimeError) after 500 rounds of token transforms: one per escape, plus one.
_MAX_ESCAPES = 200
_PROMPT_STARTS = ("In [", "[nav]", "[ins]", "...")
_STRING_PREFIX_FT = frozenset("fFtT")


def transform_line_escapes(source: str) -> tuple[str, ast.Module] | None:
    """IPython's transformation of ``source`` and its syntax tree, when it is simple.

    Args:
        source: one code cell's source.

    Returns:
        ``(code, tree)``: ``code`` equals ``TransformerManager().transform_cell(source)`` and
        ``tree`` is ``ast.parse(code)``; or ``None`` when ``source`` holds IPython syntax
        other than simple whole-line escapes (module docstring), or when it does not parse.
    """
    found = _transformed(source)
    if found is None or found[2]:
        return None  # a blank line that IPython 9 empties and IPython 8 keeps
    return found[0], found[1]


def parse_line_escapes(source: str) -> ast.Module | None:
    """The syntax tree of IPython's transformation of ``source``, when it is simple.

    Accepts what :func:`transform_line_escapes` accepts and also cells with whitespace-only
    lines other than ``\\n``, when none of them is inside a string literal: IPython 9 empties
    them and IPython 8 keeps them, which changes the code but not its tree.

    Args:
        source: one code cell's source.

    Returns:
        A tree equal to ``ast.parse(TransformerManager().transform_cell(source))``, positions
        included; or ``None`` (then ask IPython).
    """
    found = _transformed(source)
    if found is None:
        return None
    _, tree, blanks = found
    if blanks and _inside_strings(tree, blanks):
        return None
    return tree


def _transformed(source: str) -> tuple[str, ast.Module, list[int]] | None:
    """``(code, tree, blank lines)``: the transformation with the blank lines kept, and the
    numbers (1-based) of the whitespace-only lines other than ``\\n``; ``None`` when
    ``source`` is not a simple cell (module docstring)."""
    cell = source if source.endswith("\n") else source + "\n"
    if "\x00" in cell or not _utf8(cell):
        return None
    lines = cell.splitlines(keepends=True)
    first = lines[0]
    if first[0] in " \t" or first.isspace() or first.startswith("%%"):
        return None  # IPython drops leading blank lines, dedents, runs a cell magic
    blanks: list[int] = []
    for number, line in enumerate(lines, 1):
        if not line.endswith("\n"):
            return None  # a line break other than \n and \r\n
        if line.isspace() and line != "\n":
            blanks.append(number)
    if _has_prompt(lines):
        return None
    out = list(lines)
    starts: list[tuple[int, int]] = []
    for i, line in enumerate(lines):
        body = line.lstrip(" \t")
        if not body or body[0] not in "%!":
            continue
        content = body.rstrip()
        escape, rest = content[0], content[1:]
        if rest[:1] in (escape, "=") or not _self_contained(rest):
            return None
        if i and lines[i - 1].rstrip().endswith("\\"):
            return None
        if escape == "%":
            name, _, args = rest.partition(" ")
            call = f"get_ipython().run_line_magic({name!r}, {args!r})"
        else:
            call = f"get_ipython().system({rest!r})"
        indent = line[: len(line) - len(body)]
        out[i] = f"{indent}{call}\n"
        starts.append((i + 1, len(indent)))
    if len(starts) > _MAX_ESCAPES:
        return None
    code = "".join(out)
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if starts and not set(starts) <= set(_statement_starts(tree.body)):
        return None
    return code, tree, blanks


def _inside_strings(tree: ast.Module, lines: list[int]) -> bool:
    """True when one of ``lines`` may be inside a string literal of ``tree`` (a multi-line
    ``str`` / ``bytes`` constant or f-/t-string spanning it)."""
    kinds = (ast.Constant, ast.JoinedStr, getattr(ast, "TemplateStr", ast.JoinedStr))
    for node in ast.walk(tree):
        if isinstance(node, kinds):
            start, end = node.lineno, node.end_lineno or node.lineno
            if end > start and any(start < n < end for n in lines):
                return True
    return False


def _utf8(text: str) -> bool:
    """True when ``text`` encodes to UTF-8 (it has no lone surrogate)."""
    if text.isascii():
        return True
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _has_prompt(lines: list[str]) -> bool:
    """A superset of what IPython's prompt strippers act on: ``>>>`` anywhere, and ``...`` /
    ``In [n]:`` (with a vi-mode mark) on the first two lines."""
    if any(line.lstrip().startswith(">>>") for line in lines):
        return True
    return any(line.lstrip().startswith(_PROMPT_STARTS) for line in lines[:2])


def _self_contained(text: str) -> bool:
    """True when Python's tokenizer ends ``text`` (an escape line's rest) within the line.

    Conservative: no ``?`` (help), no trailing backslash (a continued line), brackets that
    never close more than they opened and all close, and every quote starting a one-line
    string that closes on the line, with no ``f``/``t`` prefix (whose braces hold code).
    """
    if "?" in text or text.endswith("\\"):
        return False
    depth = 0
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == "#":
            break
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                return False
        elif c in "'\"":
            if text.startswith(c * 3, i) or _ft_prefixed(text, i):
                return False
            i += 1
            while i < n and text[i] != c:
                i += 2 if text[i] == "\\" else 1
            if i >= n:
                return False
        i += 1
    return depth == 0


def _ft_prefixed(text: str, quote: int) -> bool:
    """True when the word right before ``text[quote]`` has an ``f`` or ``t`` (a string prefix
    such as ``f``, ``rf``, ``Fr``, ``t``: a formatted or template string)."""
    j = quote - 1
    while j >= 0 and (text[j].isalnum() or text[j] == "_"):
        if text[j] in _STRING_PREFIX_FT:
            return True
        j -= 1
    return False


def _statement_starts(body: list[ast.stmt]) -> Iterator[tuple[int, int]]:
    """``(line, column)`` where each statement in ``body`` and in its nested bodies starts."""
    for node in body:
        yield node.lineno, node.col_offset
        for field in ("body", "orelse", "finalbody"):
            nested = getattr(node, field, None)
            if isinstance(nested, list):
                yield from _statement_starts(nested)
        for part in [*getattr(node, "handlers", ()), *getattr(node, "cases", ())]:
            yield from _statement_starts(part.body)
