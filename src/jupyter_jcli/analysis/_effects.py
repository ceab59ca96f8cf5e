"""The per-cell ``ast`` visitor: what a cell defines, uses and mutates, with Python's scopes.

Module and class bodies are read in order (a name bound earlier in the cell is not a use);
function and lambda bodies are deferred: their free global reads and ``global`` writes go
into a call-time bucket of the module-level name they belong to (the ``def``, the ``class``
or the lambda-valued assignment target). Comprehensions run at once in their own scope
(targets do not leak, walrus targets do). IPython magics arrive as ``get_ipython()`` calls
after input transformation and are handed to :mod:`._magics`.
"""

from __future__ import annotations

import ast
from types import MappingProxyType

from jupyter_jcli.analysis._magics import (
    MagicAction,
    cell_magic_action,
    line_magic_action,
    parse_python,
    shell_action,
)
from jupyter_jcli.analysis._mutations import (
    ARG_MUTATING_FUNCTIONS,
    MUTATING_METHODS,
    NAMESPACE_WRITERS,
    is_namespace_call,
    is_torch_inplace,
    is_type_checking,
    root_of,
)
from jupyter_jcli.analysis._names import is_history_name
from jupyter_jcli.analysis._scopes import Bucket, Scope, scan_locals, target_names
from jupyter_jcli.analysis._types import CallTimeEffects, CellEffects, SyntaxErrorInfo

__all__ = ["EffectsVisitor", "analyze_tree"]

_IPYTHON_CALLS = frozenset({"run_line_magic", "run_cell_magic", "getoutput", "system"})
_Function = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


class _MagicSyntaxError(Exception):
    def __init__(self, info: SyntaxErrorInfo) -> None:
        super().__init__(info.message)
        self.info = info


class EffectsVisitor(ast.NodeVisitor):
    """Walks one cell's module ``ast`` and collects its :class:`CellEffects`."""

    def __init__(self) -> None:
        self.module = Scope("module", None, set(), None)
        self.scope = self.module
        self.defines: set[str] = set()
        self.uses: set[str] = set()
        self.mutates: set[str] = set()
        self.method_only: set[str] = set()
        self.store_mutated: set[str] = set()
        self.deletes: set[str] = set()
        self.imports: set[str] = set()
        self.history: set[str] = set()
        self.callables: dict[str, Bucket] = {}
        self.opaque: list[str] = []
        self.wildcards: list[str] = []
        self.magics: list[str] = []
        self.lambda_bucket: Bucket | None = None

    # ----------------------------------------------------------------- results
    def effects(self) -> CellEffects:
        """The collected effects as an immutable :class:`CellEffects`."""
        callables = {
            name: CallTimeEffects(
                frozenset(b.reads),
                frozenset(b.writes),
                frozenset(b.method_writes - b.store_writes),
            )
            for name, b in self.callables.items()
        }
        return CellEffects(
            cell_type="code",
            defines=frozenset(self.defines),
            uses=frozenset(self.uses),
            mutates=frozenset(self.mutates),
            method_mutates=frozenset(self.method_only - self.store_mutated),
            deletes=frozenset(self.deletes),
            imports=frozenset(self.imports & self.defines),
            callables=MappingProxyType(callables),
            history_refs=frozenset(self.history),
            opaque_magics=tuple(self.opaque),
            wildcard_writers=tuple(self.wildcards),
            magics=tuple(self.magics),
        )

    # -------------------------------------------------------------- resolution
    def _is_global(self, name: str) -> bool:
        """True when ``name`` read or written here refers to the module namespace."""
        s: Scope | None = self.scope
        while s is not None and s.kind != "module":
            if s.kind == "function":
                if name in s.globals:
                    return True
                if name in s.bound:
                    return False
            elif s.kind == "class":
                if s is self.scope and name in s.bound:
                    return False
            elif name in s.bound:  # comprehension, isolated
                return False
            s = s.parent
        return True

    def _read(self, name: str) -> None:
        if not self._is_global(name):
            return
        if self.scope.bucket is not None:
            self.scope.bucket.reads.add(name)
        elif name in self.module.bound:
            bucket = self.callables.get(name)
            if bucket is not None:
                self._expand(bucket, {name})
        elif is_history_name(name):
            self.history.add(name)
        else:
            self.uses.add(name)

    def _expand(self, bucket: Bucket, seen: set[str]) -> None:
        """A same-cell function is referenced at module level: apply its call-time effects."""
        for name in bucket.reads:
            if name in seen:
                continue
            seen.add(name)
            if name in self.module.bound:
                inner = self.callables.get(name)
                if inner is not None:
                    self._expand(inner, seen)
            elif not is_history_name(name):
                self.uses.add(name)
        for name in bucket.writes:
            if name in bucket.reads:
                if name not in self.module.bound:
                    self._record_mutation(name, name in bucket.method_writes)
            else:  # ``global name; name = ...``: the call binds it
                self._define(name)

    def _record_mutation(self, name: str, method: bool) -> None:
        self.uses.add(name)
        self.mutates.add(name)
        (self.method_only if method else self.store_mutated).add(name)

    def _define(self, name: str) -> None:
        self.module.bound.add(name)
        self.defines.add(name)
        self.deletes.discard(name)
        self.callables.pop(name, None)
        self.imports.discard(name)

    def _store(self, name: str) -> None:
        s = self.scope
        if s.kind == "module":
            self._define(name)
        elif s.kind in ("class", "isolated"):
            s.bound.add(name)
        elif s.kind == "function" and name in s.globals:
            if s.bucket is None:
                self._define(name)
            else:
                s.bucket.writes.add(name)
                s.bucket.store_writes.add(name)

    def _delete(self, name: str) -> None:
        s = self.scope
        if s.kind == "class":
            s.bound.discard(name)
        elif s.kind == "module":
            if name in s.bound:
                s.bound.discard(name)
                self.defines.discard(name)
                self.callables.pop(name, None)
            else:
                self.uses.add(name)
                self.deletes.add(name)
        elif s.kind == "function" and name in s.globals and s.bucket is not None:
            s.bucket.reads.add(name)
            s.bucket.writes.add(name)
            s.bucket.store_writes.add(name)

    def _mutate(self, name: str, method: bool) -> None:
        if not self._is_global(name):
            return
        bucket = self.scope.bucket
        if bucket is not None:
            bucket.reads.add(name)
            bucket.writes.add(name)
            (bucket.method_writes if method else bucket.store_writes).add(name)
        elif name not in self.module.bound:
            self._record_mutation(name, method)

    def _wildcard(self, what: str) -> None:
        if self.scope.bucket is None:
            self.wildcards.append(what)

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

    # --------------------------------------------------------- calls and magics
    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in _IPYTHON_CALLS
            and isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Name)
            and func.value.func.id == "get_ipython"
            and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args)
        ):
            self._ipython_call(func.attr, [str(a.value) for a in node.args])  # type: ignore[attr-defined]
            return
        if isinstance(func, ast.Name) and func.id == "exec" and "exec" not in self.module.bound:
            self._wildcard("exec()")
        if isinstance(func, ast.Attribute):
            inplace = any(
                k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in node.keywords
            )
            if func.attr in MUTATING_METHODS or inplace or is_torch_inplace(func.attr):
                root = root_of(func.value)
                if isinstance(root, ast.Name):
                    self._mutate(root.id, method=True)
                elif is_namespace_call(root) and func.attr in NAMESPACE_WRITERS:
                    self._wildcard(f"globals().{func.attr}(...)")
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if called in ARG_MUTATING_FUNCTIONS and node.args:
            root = root_of(node.args[0])
            if isinstance(root, ast.Name):
                self._mutate(root.id, method=True)
        saved, self.lambda_bucket = self.lambda_bucket, None  # a lambda argument runs now
        self.generic_visit(node)
        self.lambda_bucket = saved

    def _ipython_call(self, method: str, args: list[str]) -> None:
        if method == "run_line_magic" and len(args) == 2:
            self.magics.append("%" + args[0])
            self._apply(args[0], line_magic_action(args[0], args[1]))
        elif method == "run_cell_magic" and len(args) == 3:
            self.magics.append("%%" + args[0])
            self._apply(args[0], cell_magic_action(args[0], args[1], args[2]), body_line=2)
        elif args:
            self._apply("!", shell_action(args[0]))

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
                raise _MagicSyntaxError(
                    SyntaxErrorInfo(line, max((exc.offset or 1) - 1, 0), exc.msg)
                ) from exc
        outer = self.scope
        if isolated:  # one private namespace for setup and body (``%%timeit``)
            self.scope = Scope("isolated", outer, scan_locals(body)[2], outer.bucket)
        for stmt in body:
            self.visit(stmt)
        self.scope = outer

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
    try:
        for stmt in tree.body:
            visitor.visit(stmt)
    except _MagicSyntaxError as exc:
        return CellEffects(syntax_error=exc.info, magics=tuple(visitor.magics))
    return visitor.effects()
