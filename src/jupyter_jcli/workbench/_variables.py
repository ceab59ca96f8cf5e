"""Listing the user's live variables without running a cell: the probe sent to the kernel.

As :mod:`jupyter_jcli.workbench._inspect`'s probe, it is one ``user_expressions`` entry of a
silent request (``silent: true``, ``store_history: false``; Jupyter messaging spec,
``execute_request``): no execution count, no history, nothing left in the user's namespace
(it runs in a namespace of its own and reads the user's globals). It uses only ``sys`` and
``json``, which the kernel holds already, and imports nothing else.

Listed: every global that is not IPython's own (``In``, ``Out``, ``get_ipython``, ``exit``,
``quit`` and what the shell's ``user_ns_hidden`` names, e.g. ipykernel's ``open``), not a
module and whose name does not start with ``_`` (``_``, ``_i3``, ``_5``...), in definition
order, each with its type and one short fact: its ``shape`` (an object with an
integer tuple ``shape``: arrays, DataFrames), else its ``length`` (sized built-ins), else a
``repr`` of numbers, strings, ``None`` and booleans cut to :data:`REPR_CHARS`. Bounded: at
most :data:`MAX_VARIABLES` entries and :data:`MAX_CHARS` characters of entries; the others are
counted (``omitted``) and the first :data:`OMITTED_NAMED` of them named.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from jupyter_jcli.kernels import NotebookKernel
from jupyter_jcli.workbench._envelope import result_document
from jupyter_jcli.workbench._inspect import probe_source_expression, run_probe

__all__ = [
    "MAX_CHARS",
    "MAX_VARIABLES",
    "Variable",
    "VariablesOutcome",
    "parse_variables",
    "probe_variables",
    "variables_expression",
]

MAX_VARIABLES = 200
"""Most variables listed."""
MAX_CHARS = 8_000
"""Most characters of listed entries (their compact JSON), over all of them."""
REPR_CHARS = 60
"""Characters of a scalar's or a string's repr shown."""
OMITTED_NAMED = 50
"""Names of left-out variables given (the count is whole)."""

_PROBE = r"""
import sys, json
def _variables(ns, max_vars, max_chars, repr_chars, named):
    hidden = {"In", "Out", "get_ipython", "exit", "quit"}
    shell = ns.get("get_ipython")
    try:
        hidden.update(getattr(shell(), "user_ns_hidden", ()) if callable(shell) else ())
    except Exception:
        pass
    module = type(sys)
    scalars = (int, float, complex, bool, str, bytes, type(None))
    sized = (str, bytes, list, tuple, set, frozenset, dict, range)
    listed, left, total = [], [], 0
    for name, value in list(ns.items()):
        if name.startswith("_") or name in hidden or isinstance(value, module):
            continue
        kind = type(value)
        entry = {"name": name, "type": kind.__qualname__}
        if kind.__module__ != "builtins":
            entry["type"] = kind.__module__ + "." + kind.__qualname__
        try:
            shape = getattr(value, "shape", None) if not isinstance(value, type) else None
            if isinstance(shape, tuple) and shape and all(isinstance(n, int) for n in shape):
                entry["shape"] = list(shape)
            elif isinstance(value, sized):
                entry["length"] = len(value)
            if isinstance(value, scalars) or (isinstance(shape, tuple) and not shape):
                text = repr(value)
                entry["repr"] = text if len(text) <= repr_chars else text[:repr_chars] + "..."
        except Exception as err:
            entry["error"] = type(err).__name__
        size = len(json.dumps(entry, default=str))
        if len(listed) >= max_vars or total + size > max_chars:
            left.append(name)
            continue
        listed.append(entry)
        total += size
    return {"variables": listed, "omitted": len(left), "omitted_names": left[:named]}
result = json.dumps(_variables(NS, MAX_VARS, MAX_CHARS, REPR_CHARS, NAMED), default=str)
"""


def variables_expression() -> str:
    """The user expression that lists the user's variables (see the module docstring)."""
    values = {
        "MAX_VARS": MAX_VARIABLES,
        "MAX_CHARS": MAX_CHARS,
        "REPR_CHARS": REPR_CHARS,
        "NAMED": OMITTED_NAMED,
    }
    return probe_source_expression(_PROBE, values)


class Variable(TypedDict, total=False):
    """One variable: ``name`` and ``type`` always; ``shape``, ``length``, ``repr`` (cut to
    :data:`REPR_CHARS`) when they apply; ``error`` when describing it raised."""

    name: str
    type: str
    shape: list[int]
    length: int
    repr: str
    error: str


@dataclass(frozen=True)
class VariablesOutcome:
    """What ``Workbench.list_variables`` returns.

    Attributes:
        path: the file the call named (absolute).
        notebook_path: the ``.ipynb`` whose kernel holds the variables.
        variables: the listed variables, in definition order.
        omitted: how many more there are, left out by the bounds.
        omitted_names: the first :data:`OMITTED_NAMED` of those.
        epoch: the kernel epoch they live in.
    """

    path: Path
    notebook_path: Path
    variables: tuple[Variable, ...]
    omitted: int
    omitted_names: tuple[str, ...]
    epoch: str

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (``notice`` says what was left out, when anything was)."""
        notice = None
        if self.omitted:
            notice = (
                f"{self.omitted} more variables left out (at most {MAX_VARIABLES} listed, "
                f"{MAX_CHARS:,} characters); `omitted_names` names the first "
                f"{min(self.omitted, OMITTED_NAMED)}; inspect_variable shows one by name."
            )
        return result_document(
            "list_variables",
            self,
            "notebook_path variables variable_count omitted omitted_names notice epoch",
            variable_count=len(self.variables) + self.omitted,
            notice=notice,
        )


def parse_variables(raw: Any, *, path: Path, notebook_path: Path, epoch: str) -> VariablesOutcome:
    """Build the outcome from the probe's answer (the JSON value ``run_probe`` returns)."""
    return VariablesOutcome(
        path=path,
        notebook_path=notebook_path,
        variables=tuple(Variable(**entry) for entry in raw["variables"]),  # type: ignore[typeddict-item]
        omitted=int(raw["omitted"]),
        omitted_names=tuple(str(name) for name in raw["omitted_names"]),
        epoch=epoch,
    )


async def probe_variables(
    kernel: NotebookKernel, *, path: Path, notebook_path: Path
) -> VariablesOutcome:
    """Evaluate :func:`variables_expression` silently on the live ``kernel``.

    Raises:
        KernelError: ``KERNEL_DIED``.
        JcliError: ``INTERNAL_ERROR`` when the probe itself fails or times out.
    """
    raw, epoch = await run_probe(
        kernel,
        variables_expression(),
        doing="listing the variables",
        details={},
        notebook_path=notebook_path,
    )
    return parse_variables(raw, path=path, notebook_path=notebook_path, epoch=epoch)
