"""Which expressions change an object in place, and the roots they change."""

from __future__ import annotations

import ast

__all__ = [
    "ARG_MUTATING_FUNCTIONS",
    "MUTATING_METHODS",
    "NAMESPACE_WRITERS",
    "POLYSEMOUS_METHODS",
    "PURE_WHEN_DISPLAYED",
    "is_container_value",
    "is_namespace_call",
    "is_torch_inplace",
    "is_type_checking",
    "root_of",
]

MUTATING_METHODS: frozenset[str] = frozenset(
    {
        # list, dict, set, deque, bytearray
        "append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault",
        "sort", "reverse", "add", "discard", "popitem", "difference_update",
        "intersection_update", "symmetric_difference_update", "appendleft", "extendleft",
        "popleft", "rotate", "__setitem__", "__delitem__",
        # estimators (scikit-learn and alike), numpy in-place array methods, torch modules
        "fit", "partial_fit", "fit_transform", "fit_predict", "set_params", "resize", "fill",
        "itemset", "setflags", "load_state_dict", "zero_grad", "requires_grad_",
    }
)  # fmt: skip
"""Methods that may change their receiver in place: ``x.append(v)`` mutates ``x``. Those not
in :data:`POLYSEMOUS_METHODS` mutate whatever becomes of their value (``v = xs.pop()``,
``model.fit(X, y)`` as a cell's displayed result, ``X2 = poly.fit_transform(X)``)."""

POLYSEMOUS_METHODS: frozenset[str] = frozenset({"add", "append", "insert", "resize", "rotate"})
"""Mutating methods whose name is also a pure operation that returns a new object on a
common type: ``add`` (``set.add`` mutates; pandas ``DataFrame.add`` / ``Series.add``
compute), ``append`` and ``insert`` (``list``; pandas ``Index.append`` / ``Index.insert``,
pandas < 2 ``DataFrame.append``), ``resize`` (``ndarray.resize``; PIL ``Image.resize``),
``rotate`` (``deque.rotate``; PIL ``Image.rotate``). Their in-place versions return
``None``, so a call whose value is used (assigned, passed on, an operand, the receiver of
another attribute) is the pure one, and one whose value is discarded (an expression
statement) is the in-place one."""

PURE_WHEN_DISPLAYED: frozenset[str] = frozenset({"add", "resize", "rotate"})
"""The polysemous methods whose pure version is the common one to display as a cell's result
(``df.a.add(2)``, ``img.resize((64, 64))``): such a displayed call mutates its receiver's root
only when the nearest binding above makes that name a builtin container
(:func:`is_container_value`: ``seen = set()`` then ``seen.add(x)``). A displayed ``append``
or ``insert`` mutates (``items.append(x)`` ends many cells; pandas 2 has no
``DataFrame.append``)."""

CONTAINER_TYPES = frozenset(
    {"list", "dict", "set", "deque", "defaultdict", "OrderedDict", "Counter", "bytearray"}
)
_CONTAINER_NODES = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)


def is_container_value(value: ast.expr) -> bool:
    """True when ``value`` builds a builtin container: a list, dict or set display or
    comprehension, or a call of ``list``, ``dict``, ``set``, ``deque``, ``defaultdict``,
    ``OrderedDict``, ``Counter`` or ``bytearray`` (also as ``collections.deque(...)``)."""
    if isinstance(value, _CONTAINER_NODES):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        return name in CONTAINER_TYPES
    return False


ARG_MUTATING_FUNCTIONS: frozenset[str] = frozenset(
    {
        "shuffle", "heappush", "heappop", "heapify", "heappushpop", "heapreplace", "insort",
        "insort_left", "insort_right", "fill_diagonal", "copyto", "place", "putmask",
    }
)  # fmt: skip
"""Functions that change their first argument in place: ``random.shuffle(xs)`` mutates ``xs``."""

NAMESPACE_CALLS = frozenset({"globals", "vars", "locals"})
NAMESPACE_WRITERS = frozenset({"update", "setdefault", "__setitem__"})


def root_of(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node


def is_namespace_call(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in NAMESPACE_CALLS
    )


def is_torch_inplace(method: str) -> bool:
    """``x.add_(1)``: torch's convention for in-place methods (one trailing underscore)."""
    return len(method) > 2 and method[-1] == "_" and method[-2] != "_" and method[0] != "_"


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )
