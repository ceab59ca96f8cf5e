"""The per-cell ``ast`` visitor: what a cell defines, uses and mutates, with Python's scopes.

Module and class bodies are read in order (a name bound earlier in the cell is not a use);
function and lambda bodies are deferred: their free global reads and ``global`` writes go
into a call-time bucket of the module-level name they belong to (the ``def``, the ``class``
or the lambda-valued assignment target). Comprehensions run at once in their own scope
(targets do not leak, walrus targets do). Name resolution is in :mod:`._namespace`, calls
and magics in :mod:`._calls`.
"""

from __future__ import annotations

import ast

from jupyter_jcli.analysis._calls import CallsVisitor, MagicSyntaxError
from jupyter_jcli.analysis._mutations import (
    is_container_value,
    is_namespace_call,
    is_type_checking,
    root_of,
)
from jupyter_jcli.analysis._scopes import Bucket, Scope, scan_locals, target_names
from jupyter_jcli.analysis._types import CellEffects

__all__ = ["EffectsVisitor", "analyze_tree"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


class EffectsVisitor(CallsVisitor):
    """Walks one cell's module ``ast`` and collects its :class:`CellEffects`."""

    # ------------------------------------------------------------ names, stores
    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self._read(node.id)
        elif isinstance(node.ctx, ast.Store):
            self._store(node.id)
        else:
            self._delete(node.id)

    def _target_mutation(self, node: ast.Subscript | ast.Attribute) -> None:
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load):
            return
        root = root_of(node.value)
        if isinstance(root, ast.Name):
            self._mutate(root.id, method=False)
        elif is_namespace_call(root):
            self._wildcard("globals()[...] = ...")

    visit_Subscript = _target_mutation
    visit_Attribute = _target_mutation

    def visit_Assign(self, node: ast.Assign) -> None:
        self._bind_value(node.value, node.targets)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if self.scope.kind in ("module", "class"):
            self.visit(node.annotation)
        if node.value is not None:
            self._bind_value(node.value, [node.target])

    def _bind_value(self, value: ast.expr, targets: list[ast.expr]) -> None:
        if self.scope.kind != "module":
            self.visit(value)
            for t in targets:
                self.visit(t)
            return
        bucket, saved = Bucket(), self.lambda_bucket
        self.lambda_bucket = bucket
        self.visit(value)
        self.lambda_bucket = saved
        for t in targets:
            self.visit(t)
        if is_container_value(value):
            self.containers.update(t.id for t in targets if isinstance(t, ast.Name))
        if bucket.claimed:
            for t in targets:
                for name in target_names(t):
                    self.callables[name] = bucket

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self._read(node.target.id)
            self._store(node.target.id)
        else:
            self.visit(node.target)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        saved = self.scope
        while self.scope.kind == "comprehension" and self.scope.parent is not None:
            self.scope = self.scope.parent
        self._store(node.target.id)
        self.scope = saved

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        self.visit(node.target)
        for stmt in node.body + node.orelse:
            self.visit(stmt)

    visit_AsyncFor = visit_For

    def visit_If(self, node: ast.If) -> None:
        self.visit(node.test)
        body = node.orelse if is_type_checking(node.test) else node.body + node.orelse
        for stmt in body:
            self.visit(stmt)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.visit(node.type)
        name = node.name
        had = name is not None and name in self.scope.bound
        if name is not None:
            self._store(name)
        for stmt in node.body:
            self.visit(stmt)
        if name is not None and not had and self.scope.kind in ("module", "class"):
            self.scope.bound.discard(name)
            if self.scope is self.module:
                self.defines.discard(name)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            name = alias.asname or alias.name.split(".")[0]
            self._store(name)
            self.imports.add(name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module == "__future__":
            return
        for alias in node.names:
            if alias.name == "*":
                self._wildcard(f"from {'.' * node.level}{node.module or ''} import *")
                continue
            name = alias.asname or alias.name
            self._store(name)
            self.imports.add(name)

    def visit_Global(self, node: ast.Global) -> None:
        """Declarations are collected when the enclosing function scope is built."""

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        """Declarations are collected when the enclosing function scope is built."""

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        self.generic_visit(node)
        if node.name is not None:
            self._store(node.name)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name is not None:
            self._store(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        self.generic_visit(node)
        if node.rest is not None:
            self._store(node.rest)

    # ------------------------------------------------------------------ scopes
    def _def_bucket(self) -> tuple[Bucket, bool]:
        """The bucket a new function's body reports to, and whether it is a new one."""
        s = self.scope
        if s.bucket is not None:
            return s.bucket, False
        if s.kind == "class" and s.call_bucket is not None:
            return s.call_bucket, False
        return Bucket(), True

    def _definition_time(self, node: _Function) -> None:
        args = node.args
        for default in [*args.defaults, *args.kw_defaults]:
            if default is not None:
                self.visit(default)
        if isinstance(node, ast.Lambda):
            return
        for d in node.decorator_list:
            self.visit(d)
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        for param in params:
            if param is not None and param.annotation is not None:
                self.visit(param.annotation)
        if node.returns is not None:
            self.visit(node.returns)

    def _function_body(self, node: _Function, bucket: Bucket | None) -> None:
        args = node.args
        params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
        params.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
        body: list[ast.stmt] | list[ast.expr] = (
            [node.body] if isinstance(node, ast.Lambda) else node.body
        )
        globals_, nonlocals, names = scan_locals(body)
        bound = (params | names) - globals_ - nonlocals
        outer = self.scope
        self.scope = Scope("function", outer, bound, bucket, globals_)
        for item in body:
            self.visit(item)
        self.scope = outer

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._definition_time(node)
        bucket, new = self._def_bucket()
        self._store(node.name)
        if new and self.scope is self.module:
            self.callables[node.name] = bucket
        self._function_body(node, bucket)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._definition_time(node)
        bucket = self.scope.bucket
        if bucket is None and self.lambda_bucket is not None:
            bucket = self.lambda_bucket
            bucket.claimed = True
        self._function_body(node, bucket)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expr in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
            self.visit(expr)
        outer = self.scope
        call_bucket, new = self._def_bucket()
        for base in node.bases:  # instantiating C runs code inherited from its bases
            root = root_of(base)
            if isinstance(root, ast.Name):
                call_bucket.reads.add(root.id)
        self.scope = Scope("class", outer, set(), outer.bucket, call_bucket=call_bucket)
        for stmt in node.body:
            self.visit(stmt)
        self.scope = outer
        self._store(node.name)
        if new and outer is self.module:
            self.callables[node.name] = call_bucket

    def _comprehension(
        self, node: ast.expr, gens: list[ast.comprehension], *elts: ast.expr
    ) -> None:
        self.visit(gens[0].iter)
        names: set[str] = set()
        for g in gens:
            names.update(target_names(g.target))
        outer = self.scope
        self.scope = Scope("comprehension", outer, names, outer.bucket)
        for i, g in enumerate(gens):
            if i:
                self.visit(g.iter)
            self.visit(g.target)
            for cond in g.ifs:
                self.visit(cond)
        for elt in elts:
            self.visit(elt)
        self.scope = outer

    def visit_ListComp(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp) -> None:
        self._comprehension(node, node.generators, node.elt)

    visit_SetComp = visit_ListComp
    visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node: ast.DictComp) -> None:
        self._comprehension(node, node.generators, node.key, node.value)


def analyze_tree(tree: ast.Module) -> CellEffects:
    """Effects of one parsed cell. Magic bodies that do not parse give a syntax error."""
    visitor = EffectsVisitor()
    last = tree.body[-1] if tree.body else None
    visitor.displayed = last.value if isinstance(last, ast.Expr) else None
    try:
        for stmt in tree.body:
            visitor.visit(stmt)
    except MagicSyntaxError as exc:
        return CellEffects(syntax_error=exc.info, magics=tuple(visitor.magics))
    return visitor.effects()
