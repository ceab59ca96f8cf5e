"""What the less common magics read and bind (rpy2's ``%R`` family, ``%store``, ``%pylab``,
unbalanced quotes), as a table of ``%magic line`` → action (in-process, IPython semantics)."""

from __future__ import annotations

import pytest

from jupyter_jcli.analysis._magics import MagicAction, cell_magic_action, line_magic_action

PYLAB_BINDS = ("figsize", "display", "getfigs")
PYLAB_IMPORTS = ("numpy", "matplotlib", "pylab", "mlab", "pyplot", "np", "plt")

LINE_CASES = [
    ("R", "-i df,n -o fit summary(lm(y ~ x, df))",
     MagicAction(reads=("df", "n"), binds=("fit",))),
    ("R", "--input a --output b b <- a", MagicAction(reads=("a",), binds=("b",))),
    ("Rpush", "x y 3", MagicAction(reads=("x", "y"))),
    ("Rpull", "fit coef", MagicAction(binds=("fit", "coef"))),
    ("store", "-r", MagicAction(wildcard="%store -r")),
    ("store", "-r model scaler", MagicAction(binds=("model", "scaler"))),
    ("store", "model", MagicAction(reads=("model",))),
    ("store", "-z", MagicAction()),
    ("pylab", "inline", MagicAction(binds=PYLAB_BINDS, imports=PYLAB_IMPORTS, wildcard="%pylab")),
    ("pylab", "inline --no-import-all", MagicAction(binds=PYLAB_BINDS, imports=PYLAB_IMPORTS)),
    ("Rpush", "'unbalanced x", MagicAction(reads=("x",))),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "arg", "action"), LINE_CASES, ids=[f"%{c[0]} {c[1]}" for c in LINE_CASES]
)
def test_a_line_magic_reads_and_binds_what_it_does_in_ipython(
    name: str, arg: str, action: MagicAction
) -> None:
    assert line_magic_action(name, arg) == action


def test_an_r_cell_reads_its_inputs_and_binds_its_outputs_and_its_body_is_not_python() -> None:
    action = cell_magic_action("R", "-i df -o model", "model <- lm(y ~ x, df)\n")
    assert action == MagicAction(reads=("df",), binds=("model",), opaque=True)
