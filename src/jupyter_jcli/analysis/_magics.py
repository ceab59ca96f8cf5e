"""IPython input transformation and what each magic does to the user namespace.

IPython turns ``%line`` magics, ``%%cell`` magics, ``!shell`` commands and ``x?`` help into
plain calls on ``get_ipython()`` (``IPython.core.inputtransformer2.TransformerManager``; simple
``%magic`` and ``!cmd`` lines without importing IPython, see :mod:`._line_escapes`). The effects
visitor recognises those calls and asks this module what the magic does:

- ``%time`` / ``%%time``, ``%%capture``, ``%prun`` / ``%%prun``, ``%debug`` / ``%%debug``,
  ``%lprun`` and ``%mprun`` run their code in the user namespace: it is analysed like any
  other code;
- ``%timeit`` / ``%%timeit`` (and ``%memit``) run their code in a private namespace: it reads,
  but binds nothing;
- ``%run`` and ``%%cython`` are wildcard writers (they bind names nobody can see);
- ``%pylab`` runs IPython's ``pylabtools.import_pylab``: it binds the modules ``numpy``,
  ``matplotlib``, ``pylab``, ``mlab``, ``pyplot``, ``np`` and ``plt`` (module aliases: calling
  their functions mutates nothing) and the functions ``figsize``, ``display`` and ``getfigs``;
  unless given ``--no-import-all`` it also runs ``from matplotlib.pylab import *`` and
  ``from numpy import *``, so it is a wildcard writer too;
- ``%matplotlib`` only selects a backend (``InteractiveShell.enable_matplotlib``): it binds
  nothing, nor do ``%load_ext``, ``%config``, ``%autoreload``, ``%env`` or ``%cd``;
- ``%store -r a b`` binds ``a`` and ``b`` (bare ``%store -r`` is a wildcard writer);
- ``%%R -i a -o b`` (rpy2) reads ``a`` and binds ``b``; ``%%sql res << ...`` binds ``res``;
- every other cell magic (``%%bash``, ``%%html``, ``%%writefile``, ``%%sql``, ...) is opaque:
  its body is not Python;
- ``$name`` and ``{expr}`` in ``!cmd`` and in the argument line of most magics are expanded
  from the user namespace (``InteractiveShell.var_expand``), so they are reads.

A magic is *seen through* (:func:`seen_through`) when what this module says it does is its
whole effect on the user namespace: the magics that run their code (``%time``, ``%%time``,
``%timeit``, ``%%timeit``, ``%prun``, ``%%capture``, ...), ``%matplotlib`` and ``%store``.
The others (``%load_ext``, ``%reset``, ``%xdel``, ``%autoreload``, ``%env``, ``%cd``, any magic
an extension adds) may change what the kernel holds in ways no name shows, so code run on a
notebook's kernel outside its cells that uses one may have written anything
(:mod:`._overwrites`).
"""

from __future__ import annotations

import ast
import functools
import re
import shlex
import threading
from dataclasses import dataclass
from typing import Any

from jupyter_jcli.analysis._line_escapes import parse_line_escapes, transform_line_escapes

__all__ = [
    "MagicAction",
    "cell_magic_action",
    "ipython_call",
    "line_magic_action",
    "magic_call_action",
    "needs_transform",
    "parse_python",
    "seen_through",
    "shell_action",
    "transform",
]

# A cheap test for IPython-only syntax: a line starting with %, !, ? (magics, shell, help),
# `= !cmd` / `= %magic` assignments, a trailing `?` (help), or pasted prompts (>>>, In [n]:).
_IPYTHON_SYNTAX = re.compile(
    r"^[ \t]*(?:[%!?]|>>>|In \[\d*\]:)|=[ \t]*[!%]|\?[ \t]*$", re.MULTILINE
)

_RUN_CODE = frozenset({"time", "prun", "debug", "lprun", "mprun"})
_ISOLATED = frozenset({"timeit", "memit"})
_NO_VAR_EXPAND = _RUN_CODE | _ISOLATED | frozenset({"capture"})
_OPTIONS = {
    "timeit": "n:r:tcp:qo",
    "memit": "r:t:ic:oq",
    "prun": "D:l:rs:T:q",
    "lprun": "f:m:D:T:u:rsz",
    "mprun": "f:T:c:r",
}
_WILDCARD_LINE = {"run": "%run"}
_PYLAB_MODULES = ("numpy", "matplotlib", "pylab", "mlab", "pyplot", "np", "plt")
_PYLAB_FUNCTIONS = ("figsize", "display", "getfigs")
_WILDCARD_CELL = {"cython": "%%cython"}
_SHELL_LINE = frozenset({"sx", "system"})
_DOLLAR = re.compile(r"(?<!\$)\$([A-Za-z_]\w*)")
_BRACES = re.compile(r"(?<!\{)\{([^{}]+)\}(?!\})")
_SEEN_THROUGH = frozenset(
    [f"%{name}" for name in _RUN_CODE | _ISOLATED | {"matplotlib", "store"}]
    + [f"%%{name}" for name in _RUN_CODE | _ISOLATED | {"capture"}]
)
_IPYTHON_CALLS = frozenset({"run_line_magic", "run_cell_magic", "getoutput", "system"})
_SQL_TARGET = re.compile(r"^\s*([A-Za-z_]\w*)\s*<<", re.MULTILINE)

_manager_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class MagicAction:
    """What one magic or shell command does, for the effects visitor to apply.

    Attributes:
        code: Python code the magic runs, or ``None``.
        isolated: ``code`` runs in a private namespace (reads only).
        setup: Python setup code that also runs isolated (``%%timeit``'s first line).
        binds: names the magic binds in the user namespace.
        imports: names the magic binds to modules (as ``import`` does).
        reads: names the magic reads from the user namespace.
        read_exprs: Python expressions expanded from the user namespace (``{expr}``).
        opaque: the magic's body is not Python.
        wildcard: a description when the magic may bind unknown names, else ``None``.
    """

    code: str | None = None
    isolated: bool = False
    setup: str | None = None
    binds: tuple[str, ...] = ()
    imports: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    read_exprs: tuple[str, ...] = ()
    opaque: bool = False
    wildcard: str | None = None


def needs_transform(source: str) -> bool:
    """True when ``source`` may hold IPython-only syntax (cheap regex pre-check)."""
    return _IPYTHON_SYNTAX.search(source) is not None


def parse_python(source: str) -> ast.Module:
    """Parse cell code, applying IPython's input transformation when it may be needed.

    A cell whose only IPython syntax is simple ``%magic`` / ``!cmd`` lines is transformed
    without importing IPython (:func:`._line_escapes.parse_line_escapes`, the same tree).

    Raises:
        SyntaxError: the code does not parse, even after transformation.
    """
    if not needs_transform(source):
        code = source
    else:
        tree = parse_line_escapes(source)
        if tree is not None:
            return tree
        code = _ipython_transform(source)
    try:
        return ast.parse(code)
    except SyntaxError:
        if code is not source:
            raise
        alt = _ipython_transform(source)  # leading indentation, pasted prompts
        if alt == source:
            raise
        try:
            return ast.parse(alt)
        except SyntaxError:
            pass
        raise


def transform(source: str) -> str:
    """Run IPython's own cell transformation (magics, shell, help, prompts) on ``source``.

    Simple ``%magic`` / ``!cmd`` lines are transformed without importing IPython, to the same
    result (:func:`._line_escapes.transform_line_escapes`).

    Returns the transformed Python source; on any failure inside IPython, ``source`` unchanged.
    """
    simple = transform_line_escapes(source)
    return simple[0] if simple is not None else _ipython_transform(source)


def _ipython_transform(source: str) -> str:
    """IPython's ``TransformerManager.transform_cell``; ``source`` when IPython fails."""
    with _manager_lock:
        try:
            return str(_transformer().transform_cell(source))
        except Exception:  # IPython raises assorted errors on malformed input
            return source


@functools.cache
def _transformer() -> Any:
    """IPython's transformer, imported and built on first use (IPython is a heavy import)."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager()  # type: ignore[no-untyped-call]


def _expanded(line: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Names (``$name``) and expressions (``{expr}``) that ``var_expand`` reads from ``line``."""
    return tuple(_DOLLAR.findall(line)), tuple(e.strip() for e in _BRACES.findall(line))


def _strip_options(arg: str, spec: str) -> str:
    """Drop leading getopt-style options (IPython ``parse_options`` spec) from ``arg``."""
    takes_value = {spec[i] for i in range(len(spec) - 1) if spec[i + 1] == ":"}
    rest = arg.lstrip()
    while True:
        m = re.match(r"-([A-Za-z]\w*)[ \t]*", rest)
        if m is None:
            return rest
        letters = m.group(1)
        rest = rest[m.end() :]
        for i, letter in enumerate(letters):
            if letter in takes_value:
                if i == len(letters) - 1:
                    v = re.match(r"\S+[ \t]*", rest)
                    rest = rest[v.end() :] if v else rest
                break


def _split(line: str) -> list[str]:
    try:
        return shlex.split(line, posix=True)
    except ValueError:
        return line.split()


def _rpy2(line: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Inputs (``-i``/``--input``) and outputs (``-o``/``--output``) of an rpy2 ``%R`` line."""
    reads: list[str] = []
    binds: list[str] = []
    tokens = _split(line)
    for i, tok in enumerate(tokens[:-1]):
        target = reads if tok in ("-i", "--input") else binds if tok in ("-o", "--output") else None
        if target is not None:
            target.extend(n for n in tokens[i + 1].split(",") if n.isidentifier())
    return tuple(reads), tuple(binds)


def line_magic_action(name: str, arg: str) -> MagicAction:
    """What ``%name arg`` does (IPython magic semantics; see the module docstring)."""
    if name in _RUN_CODE:
        code = _strip_options(arg, _OPTIONS.get(name, ""))
        if name == "debug":
            code = re.sub(r"^(?:--breakpoint|-b)\s+\S+\s*", "", code)
        return MagicAction(code=code)
    if name in _ISOLATED:
        return MagicAction(code=_strip_options(arg, _OPTIONS[name]), isolated=True)
    reads, exprs = _expanded(arg)
    if name in _WILDCARD_LINE:
        return MagicAction(reads=reads, read_exprs=exprs, wildcard=_WILDCARD_LINE[name])
    if name in _SHELL_LINE:
        return shell_action(arg)
    if name == "pylab":
        star = None if "--no-import-all" in _split(arg) else "%pylab"
        return MagicAction(
            binds=_PYLAB_FUNCTIONS,
            imports=_PYLAB_MODULES,
            reads=reads,
            read_exprs=exprs,
            wildcard=star,
        )
    if name == "store":
        tokens = _split(arg)
        if tokens[:1] == ["-r"]:
            names = tuple(t for t in tokens[1:] if t.isidentifier())
            return MagicAction(binds=names) if names else MagicAction(wildcard="%store -r")
        if tokens and not tokens[0].startswith("-") and tokens[0].isidentifier():
            return MagicAction(reads=(tokens[0],))
        return MagicAction()
    if name == "R":
        r_reads, r_binds = _rpy2(arg)
        return MagicAction(reads=reads + r_reads, binds=r_binds, read_exprs=exprs)
    if name == "Rpush":
        return MagicAction(reads=tuple(t for t in _split(arg) if t.isidentifier()))
    if name == "Rpull":
        return MagicAction(binds=tuple(t for t in _split(arg) if t.isidentifier()))
    return MagicAction(reads=reads, read_exprs=exprs)


def cell_magic_action(name: str, line: str, body: str) -> MagicAction:
    """What ``%%name line`` followed by ``body`` does (see the module docstring)."""
    if name in _RUN_CODE:
        return MagicAction(code=body)
    if name == "capture":
        out = [t for t in _split(line) if not t.startswith("-") and t.isidentifier()]
        return MagicAction(code=body, binds=tuple(out[:1]))
    if name in _ISOLATED:
        setup = _strip_options(line, _OPTIONS[name])
        return MagicAction(code=body, isolated=True, setup=setup or None)
    reads, exprs = ((), ()) if name in _NO_VAR_EXPAND else _expanded(line)
    if name in _WILDCARD_CELL:
        return MagicAction(
            reads=reads, read_exprs=exprs, opaque=True, wildcard=_WILDCARD_CELL[name]
        )
    if name == "R":
        r_reads, r_binds = _rpy2(line)
        return MagicAction(reads=reads + r_reads, binds=r_binds, read_exprs=exprs, opaque=True)
    binds: tuple[str, ...] = ()
    if name == "sql":
        m = _SQL_TARGET.match(line) or _SQL_TARGET.match(body)
        binds = (m.group(1),) if m else ()
    return MagicAction(reads=reads, binds=binds, read_exprs=exprs, opaque=True)


def seen_through(magic: str) -> bool:
    """Whether the magic ``magic`` (``"%name"`` or ``"%%name"``, as ``CellEffects.magics``
    lists it) has no effect on the user namespace beyond what its :class:`MagicAction` says
    (module docstring)."""
    return magic in _SEEN_THROUGH


def ipython_call(node: ast.Call) -> tuple[str, list[str]] | None:
    """``(method, args)`` of a ``get_ipython().method("...", ...)`` call with literal string
    arguments, the shape IPython's input transformation gives a magic or shell escape
    (``run_line_magic``, ``run_cell_magic``, ``getoutput``, ``system``); else ``None``."""
    func = node.func
    if (
        isinstance(func, ast.Attribute)
        and func.attr in _IPYTHON_CALLS
        and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and func.value.func.id == "get_ipython"
        and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args)
    ):
        return func.attr, [str(a.value) for a in node.args]  # type: ignore[attr-defined]
    return None


def magic_call_action(method: str, args: list[str]) -> tuple[str, MagicAction] | None:
    """What the transformed call ``get_ipython().method(*args)`` does (:func:`ipython_call`):
    ``("%name", action)`` for a line magic, ``("%%name", action)`` for a cell magic, ``("!",
    action)`` for a shell escape; ``None`` for a call of another shape."""
    if method == "run_line_magic" and len(args) == 2:
        return "%" + args[0], line_magic_action(args[0], args[1])
    if method == "run_cell_magic" and len(args) == 3:
        return "%%" + args[0], cell_magic_action(args[0], args[1], args[2])
    if method in ("getoutput", "system") and args:
        return "!", shell_action(args[0])
    return None


def shell_action(command: str) -> MagicAction:
    """What ``!command`` reads: its ``$name`` and ``{expr}`` expansions."""
    reads, exprs = _expanded(command)
    return MagicAction(reads=reads, read_exprs=exprs)
