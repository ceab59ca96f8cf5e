"""Which expressions change an object in place, and the roots they change."""

from __future__ import annotations

import ast

__all__ = [
    "ARG_MUTATING_FUNCTIONS",
    "MUTATING_METHODS",
    "NAMESPACE_WRITERS",
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
"""Methods that change their receiver in place: ``x.append(v)`` mutates ``x``."""

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
