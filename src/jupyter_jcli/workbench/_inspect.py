"""Inspecting one live variable without running a cell: the probe sent to the kernel.

The probe is one ``user_expressions`` entry of a silent request (``silent: true``,
``store_history: false``; Jupyter messaging spec, ``execute_request``): the execution count,
``In``/``Out``/``_`` and the user's namespace are left as they were. It runs the code of
:data:`_PROBE` in a namespace of its own, reads the variable from the user's globals, and
returns one JSON string. It uses only modules the kernel already holds: ``sys`` and ``json``,
and numpy or pandas only when ``sys.modules`` has them (the user imported them); it never
imports a library.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypedDict

from jupyter_jcli.errors import ErrorCode, JcliError, KernelError, UsageError
from jupyter_jcli.kernels import NotebookKernel, kernel_died
from jupyter_jcli.workbench._envelope import result_document

__all__ = [
    "DEFAULT_INSPECT_MAX_CHARS",
    "INSPECT_TIMEOUT",
    "ColumnInfo",
    "VariableOutcome",
    "parse_probe",
    "probe_expression",
    "probe_variable",
]

DEFAULT_INSPECT_MAX_CHARS = 2000
"""Default bound of the repr/head returned, in characters."""
INSPECT_TIMEOUT = 30.0
"""Seconds the probe may run in the kernel."""
MAX_COLUMNS = 200
"""Most columns (DataFrame) or keys (dict) listed in a schema."""
HEAD_ROWS = 5
"""Rows of a DataFrame or Series shown as its head."""

_PROBE = r"""
import sys, json
def _describe(ns, name, max_chars, max_columns, head_rows):
    if name not in ns:
        return {"found": False}
    value = ns[name]
    kind = type(value)
    info = {"found": True, "type": kind.__module__ + "." + kind.__qualname__}
    if kind.__module__ == "builtins":
        info["type"] = kind.__qualname__
    pd = sys.modules.get("pandas")
    np = sys.modules.get("numpy")
    text = None
    try:
        if pd is not None and isinstance(value, pd.DataFrame):
            info["shape"] = [int(n) for n in value.shape]
            info["length"] = int(value.shape[0])
            cols = list(value.dtypes.items())
            info["schema"] = [{"name": str(c), "dtype": str(d)} for c, d in cols[:max_columns]]
            info["schema_total"] = len(cols)
            text = value.head(head_rows).to_string(max_cols=30, max_colwidth=40)
        elif pd is not None and isinstance(value, pd.Series):
            info["shape"] = [int(n) for n in value.shape]
            info["length"] = int(value.shape[0])
            info["dtype"] = str(value.dtype)
            text = value.head(head_rows).to_string(max_rows=head_rows)
        elif np is not None and isinstance(value, np.ndarray):
            info["shape"] = [int(n) for n in value.shape]
            info["length"] = int(value.shape[0]) if value.ndim else None
            info["dtype"] = str(value.dtype)
            opts = np.get_printoptions()
            try:
                np.set_printoptions(threshold=100, edgeitems=3)
                text = repr(value)
            finally:
                np.set_printoptions(**opts)
        elif isinstance(value, dict):
            info["length"] = len(value)
            keys = []
            for key in value:
                if len(keys) >= max_columns:
                    break
                keys.append({"name": repr(key)[:80], "dtype": type(value[key]).__qualname__})
            info["schema"] = keys
            info["schema_total"] = len(value)
        elif isinstance(value, (str, bytes, list, tuple, set, frozenset, range)):
            info["length"] = len(value)
        else:
            shape = getattr(value, "shape", None)
            if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
                info["shape"] = list(shape)
            dtype = getattr(value, "dtype", None)
            if dtype is not None and not callable(dtype):
                info["dtype"] = str(dtype)[:80]
    except Exception as err:
        info["describe_error"] = type(err).__name__ + ": " + str(err)[:200]
    if text is None:
        reprlib = sys.modules.get("reprlib")
        if reprlib is not None and isinstance(value, (dict, list, tuple, set, frozenset, str)):
            short = reprlib.Repr()
            short.maxlevel, short.maxdict, short.maxlist, short.maxtuple = 3, 20, 20, 20
            short.maxset, short.maxfrozenset, short.maxstring, short.maxother = 20, 20, 400, 200
            text = short.repr(value)
        else:
            try:
                text = repr(value)
            except Exception as err:
                text = "<repr failed: " + type(err).__name__ + ">"
    info["repr_chars"] = len(text)
    info["repr"] = text[:max_chars]
    return info
result = json.dumps(_describe(NS, NAME, MAX_CHARS, MAX_COLUMNS, HEAD_ROWS), default=str)
"""


def probe_expression(name: str, max_chars: int) -> str:
    """The user expression that describes variable ``name`` (see the module docstring).

    Raises:
        UsageError: ``USAGE_ERROR`` when ``name`` is not a Python identifier or ``max_chars``
            is not a positive integer.
    """
    if not isinstance(name, str) or not name.isidentifier() or _is_keyword(name):
        raise UsageError(f"{name!r} is not a variable name.", {"name": str(name)})
    if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
        raise UsageError(f"max_chars must be a positive integer, got {max_chars!r}.")
    values = {
        "NAME": name,
        "MAX_CHARS": max_chars,
        "MAX_COLUMNS": MAX_COLUMNS,
        "HEAD_ROWS": HEAD_ROWS,
    }
    return probe_source_expression(_PROBE, values)


def probe_source_expression(source: str, values: Mapping[str, object]) -> str:
    """A user expression that runs ``source`` in a namespace of its own holding the user's
    globals as ``NS`` and ``values`` (by their reprs), and evaluates to the ``result`` it
    sets (a JSON string); see the module docstring."""
    namespace = ", ".join(
        ["'NS': globals()", *(f"{key!r}: {value!r}" for key, value in values.items())]
    )
    return f"(lambda _d: (exec({source!r}, _d), _d['result'])[1])({{{namespace}}})"


async def run_probe(
    kernel: NotebookKernel,
    expression: str,
    *,
    doing: str,
    details: dict[str, Any],
    notebook_path: Path,
) -> tuple[Any, str]:
    """Evaluate the probe ``expression`` silently on the live ``kernel`` (``doing`` names it
    in errors, ``details`` go into theirs): the JSON value its ``text/plain`` holds (the repr
    of a JSON string) and the kernel's epoch.

    Raises:
        KernelError: ``KERNEL_DIED``.
        JcliError: ``INTERNAL_ERROR`` when the probe itself fails or times out.
    """
    result = await kernel.evaluate(
        "", user_expressions={"probe": expression}, timeout=INSPECT_TIMEOUT
    )
    if result.status == "died":
        raise kernel_died(doing, {**details, "notebook_path": str(notebook_path)})
    value = result.expressions.get("probe")
    if result.status != "ok" or value is None or value.status != "ok":
        raise JcliError(
            ErrorCode.INTERNAL_ERROR,
            f"{doing} failed ({result.status})",
            {
                **details,
                "ename": value.ename if value is not None else result.ename,
                "evalue": value.evalue if value is not None else result.evalue,
            },
        )
    return json.loads(ast.literal_eval(value.text)), result.epoch


def _is_keyword(name: str) -> bool:
    import keyword

    return keyword.iskeyword(name)


class ColumnInfo(TypedDict):
    """One column of a DataFrame (or one key of a dict): its name and dtype (value type)."""

    name: str
    dtype: str


@dataclass(frozen=True)
class VariableOutcome:
    """What ``Workbench.inspect_variable`` returns.

    Attributes:
        path: the file the call named (absolute).
        notebook_path: the ``.ipynb`` whose kernel holds the variable.
        name: the variable.
        type: its type (``int``, ``list``, ``pandas.core.frame.DataFrame``, ...).
        length: ``len()`` for sized built-ins, rows for DataFrames, Series and arrays.
        shape: the shape of arrays, DataFrames, Series and objects with an integer ``shape``.
        dtype: the dtype of arrays and Series.
        schema: DataFrame columns with dtypes, or dict keys with value types (at most 200).
        schema_total: how many columns or keys there are in all.
        repr: the head (DataFrame, Series) or a bounded repr, at most ``max_chars``.
        repr_chars: the full length of that text before the cut.
        epoch: the kernel epoch the variable lives in.
    """

    path: Path
    notebook_path: Path
    name: str
    type: str
    length: int | None
    shape: tuple[int, ...] | None
    dtype: str | None
    schema: tuple[ColumnInfo, ...] | None
    schema_total: int | None
    repr: str
    repr_chars: int
    epoch: str

    JSON_KEYS: ClassVar[str] = (
        "notebook_path name type length shape dtype schema schema_total repr repr_chars"
        " truncated epoch"
    )
    """The keys of :meth:`to_dict`, in order."""

    @property
    def truncated(self) -> bool:
        """Whether the repr or the schema was cut."""
        cut_schema = self.schema is not None and len(self.schema) < (self.schema_total or 0)
        return self.repr_chars > len(self.repr) or cut_schema

    def to_dict(self) -> dict[str, Any]:
        """The JSON document."""
        return result_document("inspect_variable", self, self.JSON_KEYS)


def parse_probe(
    raw: Any, *, name: str, path: Path, notebook_path: Path, epoch: str
) -> VariableOutcome:
    """Build the outcome from the probe's answer (the JSON value :func:`run_probe` returns).

    Raises:
        KernelError: ``VARIABLE_NOT_FOUND`` when the kernel has no global ``name``.
    """
    if not raw.get("found"):
        raise KernelError(
            ErrorCode.VARIABLE_NOT_FOUND,
            f"the kernel has no variable {name!r}; run the cell that defines it first",
            {"name": name, "notebook_path": str(notebook_path)},
        )
    shape = raw.get("shape")
    schema = raw.get("schema")
    return VariableOutcome(
        path=path,
        notebook_path=notebook_path,
        name=name,
        type=str(raw.get("type", "")),
        length=raw.get("length"),
        shape=tuple(int(n) for n in shape) if isinstance(shape, list) else None,
        dtype=raw.get("dtype"),
        schema=(
            tuple(ColumnInfo(name=str(c["name"]), dtype=str(c["dtype"])) for c in schema)
            if isinstance(schema, list)
            else None
        ),
        schema_total=raw.get("schema_total"),
        repr=str(raw.get("repr", "")),
        repr_chars=int(raw.get("repr_chars", 0)),
        epoch=epoch,
    )


async def probe_variable(
    kernel: NotebookKernel, name: str, expression: str, *, path: Path, notebook_path: Path
) -> VariableOutcome:
    """Evaluate the probe ``expression`` (from :func:`probe_expression`) silently on the live
    ``kernel`` and read its answer (:func:`parse_probe`).

    Raises:
        KernelError: ``KERNEL_DIED``; the codes of :func:`parse_probe`.
        JcliError: ``INTERNAL_ERROR`` when the probe itself fails or times out.
    """
    raw, epoch = await run_probe(
        kernel,
        expression,
        doing=f"inspecting {name!r}",
        details={"name": name},
        notebook_path=notebook_path,
    )
    return parse_probe(raw, name=name, path=path, notebook_path=notebook_path, epoch=epoch)
