"""Scope records for the effects visitor, and the pre-scan of a function's local names.

Python decides at compile time which names are local to a function: any name bound anywhere
in its body (assignment, ``for``, ``with``, ``import``, ``def``, ``class``, ``except ... as``,
``match`` captures, walrus targets, including walrus targets inside its comprehensions),
minus those declared ``global`` or ``nonlocal`` (Python language reference, "Naming and
binding").
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import KW_ONLY, dataclass

__all__ = ["Bucket", "Scope", "scan_locals", "target_names"]

_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


class Bucket:
    """Call-time effects collected for one module-level function, class or lambda value."""

    __slots__ = ("claimed", "method_writes", "reads", "store_writes", "writes")

    def __init__(self) -> None:
        self.reads: set[str] = set()
        self.writes: set[str] = set()
        self.method_writes: set[str] = set()
        self.store_writes: set[str] = set()
        self.claimed = False


@dataclass(slots=True, eq=False)
class Scope:
    """One scope of the visitor.

    ``kind`` is ``module`` or ``class`` (names bound in order as the body is read),
    ``function`` (``bound`` pre-scanned), ``comprehension`` (its targets) or ``isolated``
    (code a magic runs in a private namespace, e.g. ``%timeit``). ``bucket`` is where free
    global reads go (``None``: they happen now, at module level); ``call_bucket`` is the
    bucket of a class's methods.
    """

    kind: str
    parent: Scope | None
    bound: set[str]
    bucket: Bucket | None
    globals: frozenset[str] | set[str] = frozenset()
    _: KW_ONLY
    call_bucket: Bucket | None = None


def target_names(target: ast.AST) -> Iterator[str]:
    """Plain names bound by an assignment or loop target (tuples, lists and starred walked)."""
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, ast.Tuple | ast.List):
        for elt in target.elts:
            yield from target_names(elt)
    elif isinstance(target, ast.Starred):
        yield from target_names(target.value)


def scan_locals(body: Sequence[ast.AST]) -> tuple[set[str], set[str], set[str]]:
    """The ``global`` names, ``nonlocal`` names and bound names of a function body.

    Nested functions, lambdas and classes contribute only their own name (and nothing of their
    bodies); comprehensions contribute only their walrus targets.
    """
    globals_: set[str] = set()
    nonlocals: set[str] = set()
    names: set[str] = set()
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load):
                names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            stack.extend(node.decorator_list)
        elif isinstance(node, ast.Lambda):
            continue
        elif isinstance(node, ast.Global):
            globals_.update(node.names)
        elif isinstance(node, ast.Nonlocal):
            nonlocals.update(node.names)
        elif isinstance(node, ast.Import):
            names.update(a.asname or a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names if a.name != "*")
        elif isinstance(node, _COMPREHENSIONS):
            names.update(
                n.target.id
                for n in ast.walk(node)
                if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name)
            )
        else:
            if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar):
                if node.name:
                    names.add(node.name)
            elif isinstance(node, ast.MatchMapping) and node.rest:
                names.add(node.rest)
            stack.extend(ast.iter_child_nodes(node))
    return globals_, nonlocals, names
