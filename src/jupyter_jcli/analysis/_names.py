"""Name classes the analysis treats specially: builtins and IPython output history."""

from __future__ import annotations

import builtins
import re

__all__ = ["BUILTIN_NAMES", "is_builtin", "is_history_name"]

# Names every IPython kernel namespace provides besides Python's builtins
# (IPython.core.interactiveshell.InteractiveShell.init_user_ns).
_IPYTHON_NAMESPACE = frozenset(
    {"get_ipython", "display", "exit", "quit", "__builtin__", "__builtins__", "__name__"}
)

# IPython's output and input history (IPython.core.displayhook / history):
# _, __, ___, _N, _iN, _i, _ii, _iii, _oh, _ih, _dh, Out, In.
_HISTORY = re.compile(r"_{1,3}|_\d+|_i{1,3}|_i\d+|_oh|_ih|_dh|Out|In")

BUILTIN_NAMES: frozenset[str] = (
    frozenset(n for n in dir(builtins) if _HISTORY.fullmatch(n) is None) | _IPYTHON_NAMESPACE
)
"""Python's builtins plus the names IPython puts in every user namespace."""


def is_builtin(name: str) -> bool:
    """True when ``name`` resolves without any cell binding it (Python or IPython builtin)."""
    return name in BUILTIN_NAMES


def is_history_name(name: str) -> bool:
    """True when ``name`` is one of IPython's output or input history variables."""
    return _HISTORY.fullmatch(name) is not None
