"""Simple ``%magic`` / ``!cmd`` lines are transformed exactly as IPython does, without IPython.

The reference is IPython's own ``TransformerManager().transform_cell`` (installed with the dev
dependencies): on every code cell of the real notebooks in tests/fixtures/notebooks/ (and of the
shared corpus when it is beside the repository), and on a table of cells built to probe each
rule. Whatever the fast path accepts must be byte-for-byte IPython's result.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from IPython.core.inputtransformer2 import TransformerManager

from jupyter_jcli.analysis._line_escapes import parse_line_escapes, transform_line_escapes
from jupyter_jcli.analysis._magics import parse_python, transform

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "notebooks"
CORPORA = [Path("/work/shared/corpus"), ROOT.parent / "shared" / "corpus"]


def ipython(source: str) -> str:
    """IPython's transformation; ``source`` when IPython raises (as ``transform`` answers)."""
    try:
        return str(TransformerManager().transform_cell(source))  # type: ignore[no-untyped-call]
    except Exception:
        return source


def code_cells(path: Path) -> list[str]:
    """The code cell sources of a notebook file (v3 worksheets too); none if it is not JSON."""
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        return []
    if not isinstance(nb, dict):
        return []
    raw = nb.get("cells") or [c for ws in nb.get("worksheets", []) for c in ws.get("cells", [])]
    sources = []
    for cell in raw:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            src = cell.get("source", cell.get("input", ""))
            sources.append("".join(src) if isinstance(src, list) else src)
    return sources


def real_notebooks() -> list[Path]:
    paths = sorted(FIXTURES.rglob("*.ipynb"))
    for corpus in CORPORA:
        if corpus.is_dir():
            paths += sorted(corpus.rglob("*.ipynb"))
            break
    return paths


def test_every_real_cell_the_fast_path_accepts_is_transformed_as_ipython_does() -> None:
    accepted_magic = 0
    mismatches = []
    for path in real_notebooks():
        for source in code_cells(path):
            fast = transform_line_escapes(source)
            if fast is None:
                continue
            expected = ipython(source)
            if fast[0] != expected:
                mismatches.append((path.name, source[:120]))
            if expected != (source if source.endswith("\n") else source + "\n"):
                accepted_magic += 1
    assert mismatches == []
    assert accepted_magic >= 20  # the fixtures alone hold 25 such magic cells


def test_every_real_cell_the_tree_fast_path_accepts_has_the_tree_of_ipythons_code() -> None:
    accepted_magic = 0
    mismatches = []
    for path in real_notebooks():
        for source in code_cells(path):
            tree = parse_line_escapes(source)
            if tree is None:
                continue
            expected = ipython(source)
            if ast_dump(tree) != ast_dump(ast.parse(expected)):
                mismatches.append((path.name, source[:120]))
            if "get_ipython()" in expected:
                accepted_magic += 1
    assert mismatches == []
    assert accepted_magic >= 20  # the fixtures alone hold 25


def test_the_fixture_notebooks_have_magic_cells_the_fast_path_accepts() -> None:
    accepted = [
        source
        for path in sorted(FIXTURES.glob("*.ipynb"))
        for source in code_cells(path)
        if ipython(source) != source.rstrip("\n") + "\n"
        and transform_line_escapes(source) is not None
    ]
    assert len(accepted) >= 20


ACCEPTED = [
    "%matplotlib inline\nimport numpy as np\n",
    "import os\n%load_ext autoreload\n%autoreload 2",  # a last line magic, no final newline
    "if x:\n    %time f()\nelse:\n    !ls -l\n",
    "for i in range(3):\n    %timeit -n1 g(i)\n",
    "def f():\n    %who\n    return 1\n",
    "class A:\n    %env\n",
    "try:\n    !false\nexcept Exception:\n    %debug\nfinally:\n    %pwd\n",
    "while True:\n\t%time x\n\tbreak\n",
    "async def f():\n    %who\n",
    "match x:\n    case 1:\n        %who\n",
    "with open(p) as f:\n    !cat {p}\n",
    "if a:\n    if b:\n        %who\n    %who\n%who\n",
    "%config InlineBackend.figure_format = 'retina'\n",
    '!echo "it\'s" \'a "b"\'\n',
    "!echo 'back\\\\slash' \\\\n\n",
    "!echo 'a\\'b'\n",
    "%time b'x' rb'\\\\' r'\\''\n",
    "%time print('héllo wörld ✓ 😀')\n",
    "!echo {x} $y ${z} {a[0]}\n",
    '!pip install "pandas>=2" numpy\n',
    "!echo ')' \"(\" ']'\n",
    "!echo # (unbalanced in a comment\n",
    "! ls   \n",
    "%\n",
    "!\n",
    "%  time x\n",
    "%time\tx y\n",
    "%time x = {'a': [1, (2, 3)]}\n",
    "%R -i df -o fit summary(lm(y ~ x, df))\n",
    "x = 1\r\n%matplotlib inline\r\ny = 2\r\n",
    "x = 1\n%who\ny = 2\n%who_ls\n",
    "%who\n\n\n",
    "%who\n# a comment?\n",
    "x = 'a'  # a comment?\n",  # flagged by the cheap regex, no IPython syntax at all
    "!ls\nx = (\n1)\n",
]

REJECTED = [
    "x = '''\n%matplotlib inline\n'''\n",  # inside a triple-quoted string
    "def f():\n    '''doc\n    %who\n    '''\n",
    "x = [\n%who\n]\n",  # inside brackets
    "x = (1,\n    %who\n)\n",
    "x = 1 + \\\n%who\n",  # after a backslash continuation
    "x = 1; \\\n%who\n",
    "if x: \\\n    %who\n",
    "%who \\\nx\n",  # itself continued
    "%%time\nx = 1\n",  # cell magics
    "x = 1\n%%time\n",
    "x = %time f()\n",  # magic and system assignments
    "a = !ls\n",
    "%time x?\n",  # help
    "!echo what?\n",
    "%who\nx?\n",
    "?x\n",
    "!!ls\n",
    "%=3\n",
    "!=3\n",
    "    %who\n",  # the cleanup passes would change the cell
    "\n%who\n",
    ">>> %who\n",
    "x = 1\n>>> y\n",
    "In [1]: %who\n",
    "%who\n...: x\n",
    "%time f(\n",  # the tokenizer's logical line goes on past the line
    "%time f())\n",
    "!echo (\nx = 1\n",
    "!echo don't\n",
    "!echo f'{x}'\n",
    '!echo """\nx\n"""\n',
    "%who\rx = 1\n",  # line breaks other than \n and \r\n
    "%who\x0cx\n",
    "x = 1\n%who\u2028y\n",
    "%who \x00\n",  # Python 3.12's tokenizer stops there
    "!echo \udfff\n",
    "@dec\n%who\ndef f(): pass\n",  # the rest is not Python
    "if x:\n    pass\n  %who\n",
    "%who\n" * 300,
]


@pytest.mark.parametrize("source", ACCEPTED, ids=repr)
def test_a_cell_of_simple_escape_lines_is_transformed_as_ipython_does(source: str) -> None:
    fast = transform_line_escapes(source)
    assert fast is not None
    code, tree = fast
    assert code == ipython(source)
    assert transform(source) == code
    assert ast_dump(tree) == ast_dump(parse_python(source))
    assert ast_dump(tree) == ast_dump(ast.parse(code))


@pytest.mark.parametrize("source", REJECTED, ids=repr)
def test_a_cell_with_any_other_ipython_syntax_is_left_to_ipython(source: str) -> None:
    assert transform_line_escapes(source) is None
    assert parse_line_escapes(source) is None
    assert transform(source) == ipython(source)


BLANK_LINES_OUTSIDE_STRINGS = [
    "%who\n    \nx = 1\n",
    "def f():\n    %who\n    \n    return 1\n",
    "%who\r\n  \r\nx = 1\r\n",
    "%who\n\t\n",
    "x = 1\n    \n%who\n",
    "x = 1\r\n\r\n%who\r\n",
    "x = '''one line'''\n  \n%who\n",
]

BLANK_LINES_INSIDE_STRINGS = [
    "x = '''\n   \n'''\n%who\n",
    "x = f'''\n \t\n{y}'''\n%who\n",
    "x = ('a'\n   \n'b')\n%who\n",  # between two parts of one constant: conservative
]


@pytest.mark.parametrize("source", BLANK_LINES_OUTSIDE_STRINGS, ids=repr)
def test_blank_lines_of_spaces_outside_strings_keep_the_tree_fast_path(source: str) -> None:
    tree = parse_line_escapes(source)
    assert tree is not None
    assert ast_dump(tree) == ast_dump(ast.parse(ipython(source)))
    assert ast_dump(parse_python(source)) == ast_dump(tree)
    assert transform_line_escapes(source) is None  # IPython 8 and 9 differ on the code


@pytest.mark.parametrize("source", BLANK_LINES_INSIDE_STRINGS, ids=repr)
def test_blank_lines_of_spaces_inside_a_string_are_left_to_ipython(source: str) -> None:
    assert parse_line_escapes(source) is None
    assert ast_dump(parse_python(source)) == ast_dump(ast.parse(ipython(source)))


def ast_dump(tree: ast.AST) -> str:
    return ast.dump(tree, include_attributes=True)


def test_analysing_a_notebook_whose_only_magic_is_matplotlib_inline_does_not_import_ipython() -> (
    None
):
    script = (
        "import json, sys\n"
        "from jupyter_jcli.analysis import CellInput, build_graph\n"
        f"nb = json.load(open({str(FIXTURES / '05.04-Feature-Engineering.ipynb')!r}))\n"
        "cells = [CellInput(key=f'c{i}', cell_type=c['cell_type'], source=''.join(c['source']))\n"
        "         for i, c in enumerate(nb['cells'])]\n"
        "graph = build_graph(cells)\n"
        "assert any('%matplotlib' in c.source for c in cells)\n"
        "print(json.dumps([len(graph.cells), 'IPython' in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(done.stdout) == [43, False]
