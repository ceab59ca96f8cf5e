"""The effects visitor's state and name resolution: what a read, store, delete or mutation of
a name does, given Python's scopes.

A name read at module level before the cell binds it is a use; a read inside a function or
lambda body goes into the call-time bucket of the module-level name it belongs to. Uses and
bindings are stamped with one counter in source order (``first_read``, ``first_bind``) so
the graph can tell whether a call-time read of a name the cell binds happens before the
binding (a read from above) or after it.
"""

from __future__ import annotations

import ast
from types import MappingProxyType

from jupyter_jcli.analysis._names import is_history_name
from jupyter_jcli.analysis._scopes import Bucket, Scope
from jupyter_jcli.analysis._types import CallTimeEffects, CellEffects

__all__ = ["NamespaceVisitor"]


class NamespaceVisitor(ast.NodeVisitor):
    """The state of one cell's walk and the resolution of names against its scopes."""

    def __init__(self) -> None:
        self.module = Scope("module", None, set(), None)
        self.scope = self.module
        self.defines: set[str] = set()
        self.uses: set[str] = set()
        self.mutates: set[str] = set()
        self.method_only: set[str] = set()
        self.store_mutated: set[str] = set()
        self.display_mutates: set[str] = set()
        self.containers: set[str] = set()
        self.deletes: set[str] = set()
        self.imports: set[str] = set()
        self.history: set[str] = set()
        self.callables: dict[str, Bucket] = {}
        self.opaque: list[str] = []
        self.wildcards: list[str] = []
        self.magics: list[str] = []
        self.lambda_bucket: Bucket | None = None
        self.first_read: dict[str, int] = {}
        self.first_bind: dict[str, int] = {}
        self.clock = 0

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
            display_mutates=frozenset(self.display_mutates - self.mutates),
            containers=frozenset(self.containers & self.defines),
            deletes=frozenset(self.deletes),
            imports=frozenset(self.imports & self.defines),
            callables=MappingProxyType(callables),
            history_refs=frozenset(self.history),
            opaque_magics=tuple(self.opaque),
            wildcard_writers=tuple(self.wildcards),
            magics=tuple(self.magics),
            first_read=MappingProxyType(self.first_read),  # keys: exactly the uses
            first_bind=MappingProxyType(self.first_bind),  # keys: the defines and any unbound
        )

    # -------------------------------------------------------------- resolution
    def _tick(self) -> int:
        self.clock += 1
        return self.clock

    def _use(self, name: str) -> None:
        """``name`` is read at module level before the cell binds it."""
        self.uses.add(name)
        if name not in self.first_read:
            self.first_read[name] = self._tick()

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
            self._use(name)

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
                self._use(name)
        for name in bucket.writes:
            if name in bucket.reads:
                if name not in self.module.bound:
                    self._record_mutation(name, name in bucket.method_writes)
            else:  # ``global name; name = ...``: the call binds it
                self._define(name)

    def _record_mutation(self, name: str, method: bool) -> None:
        self._use(name)
        self.mutates.add(name)
        (self.method_only if method else self.store_mutated).add(name)

    def _define(self, name: str) -> None:
        self.module.bound.add(name)
        self.defines.add(name)
        if name not in self.first_bind:
            self.first_bind[name] = self._tick()
        self.deletes.discard(name)
        self.containers.discard(name)
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
                self._use(name)
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
