"""Calls in a cell: in-place changes through methods and functions, IPython magics.

A method call changes its receiver's root name in place when the method mutates whatever
becomes of its value (:data:`~._mutations.MUTATING_METHODS` outside
:data:`~._mutations.POLYSEMOUS_METHODS`, ``inplace=True``, torch's ``x.add_(1)``). A
polysemous method (``add``, ``append``, ...) mutates when its value is discarded (an
expression statement) and is the pure operation when its value is used; when the value of
``add``, ``resize`` or ``rotate`` is the cell's displayed result, the graph decides from the
receiver's binding (a builtin container or not). IPython magics arrive as ``get_ipython()``
calls after input transformation and are handed to :mod:`._magics`.
"""

from __future__ import annotations

import ast

from jupyter_jcli.analysis._magics import (
    MagicAction,
    ipython_call,
    magic_call_action,
    parse_python,
)
from jupyter_jcli.analysis._mutations import (
    ARG_MUTATING_FUNCTIONS,
    MUTATING_METHODS,
    NAMESPACE_WRITERS,
    POLYSEMOUS_METHODS,
    PURE_WHEN_DISPLAYED,
    is_namespace_call,
    is_torch_inplace,
    root_of,
)
from jupyter_jcli.analysis._namespace import NamespaceVisitor
from jupyter_jcli.analysis._scopes import Scope, scan_locals
from jupyter_jcli.analysis._types import SyntaxErrorInfo

__all__ = ["CallsVisitor", "MagicSyntaxError"]


class MagicSyntaxError(Exception):
    """Code that a magic runs does not parse; ``info`` says where in the cell."""

    def __init__(self, info: SyntaxErrorInfo) -> None:
        super().__init__(info.message)
        self.info = info


class CallsVisitor(NamespaceVisitor):
    """Calls, expression statements and magics (statements and scopes are in the subclass)."""

    def __init__(self) -> None:
        super().__init__()
        self.discarded: ast.expr | None = None
        self.displayed: ast.expr | None = None

    def visit_Expr(self, node: ast.Expr) -> None:
        saved, self.discarded = self.discarded, node.value
        self.visit(node.value)
        self.discarded = saved

    def _method_call(self, node: ast.Call, func: ast.Attribute) -> None:
        method = func.attr
        inplace = any(
            k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in node.keywords
        )
        if not (method in MUTATING_METHODS or inplace or is_torch_inplace(method)):
            return
        root = root_of(func.value)
        if isinstance(root, ast.Name):
            if node is self.displayed and method in PURE_WHEN_DISPLAYED and not inplace:
                if root.id not in self.module.bound:
                    self.display_mutates.add(root.id)
            elif inplace or method not in POLYSEMOUS_METHODS or node is self.discarded:
                self._mutate(root.id, method=True)
        elif is_namespace_call(root) and method in NAMESPACE_WRITERS:
            self._wildcard(f"globals().{method}(...)")

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        call = ipython_call(node)
        if call is not None:
            magic = magic_call_action(*call)
            if magic is not None:
                name, action = magic
                if name != "!":
                    self.magics.append(name)
                self._apply(name.lstrip("%"), action, body_line=2 if name[:2] == "%%" else 1)
            return
        if isinstance(func, ast.Name) and func.id == "exec" and "exec" not in self.module.bound:
            self._wildcard("exec()")
        if isinstance(func, ast.Attribute):
            self._method_call(node, func)
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if called in ARG_MUTATING_FUNCTIONS and node.args:
            root = root_of(node.args[0])
            if isinstance(root, ast.Name):
                self._mutate(root.id, method=True)
        saved, self.lambda_bucket = self.lambda_bucket, None  # a lambda argument runs now
        self.generic_visit(node)
        self.lambda_bucket = saved

    # ------------------------------------------------------------------ magics
    def _apply(self, name: str, action: MagicAction, body_line: int = 1) -> None:
        for read in action.reads:
            self._read(read)
        for expr in action.read_exprs:
            try:
                self.visit(ast.parse(expr, mode="eval").body)
            except SyntaxError:
                continue  # IPython leaves text it cannot expand as it is
        codes = [(action.setup, 1), (action.code, body_line)]
        self._run([(c, line) for c, line in codes if c is not None], isolated=action.isolated)
        for bound in action.binds:
            self._store(bound)
        for module in action.imports:
            self._store(module)
            self.imports.add(module)
        if action.opaque:
            self.opaque.append(name)
        if action.wildcard is not None:
            self._wildcard(action.wildcard)

    def _run(self, codes: list[tuple[str, int]], *, isolated: bool) -> None:
        """Analyse code a magic runs; ``codes`` pairs code with its first line in the cell."""
        body: list[ast.stmt] = []
        for code, first_line in codes:
            try:
                body.extend(parse_python(code).body)
            except SyntaxError as exc:
                line = (exc.lineno or 1) + first_line - 1
                raise MagicSyntaxError(
                    SyntaxErrorInfo(line, max((exc.offset or 1) - 1, 0), exc.msg)
                ) from exc
        outer = self.scope
        if isolated:  # one private namespace for setup and body (``%%timeit``)
            self.scope = Scope("isolated", outer, scan_locals(body)[2], outer.bucket)
        for stmt in body:
            self.visit(stmt)
        self.scope = outer
