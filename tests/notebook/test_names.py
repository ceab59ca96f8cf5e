"""Cell naming rules: validity, derivation from content, uniqueness, stored names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook.names import (
    MAX_BASE_LENGTH,
    MAX_NAME_LENGTH,
    assign_names,
    bound_here,
    derive_base_name,
    is_valid_name,
    set_stored_name,
    slugify,
    stored_name,
    unique_name,
    validate_name,
)

NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"


def _cell(source: str, cell_type: str = "code", name: str | None = None) -> dict[str, object]:
    cell: dict[str, object] = {"cell_type": cell_type, "metadata": {}, "source": source}
    if name is not None:
        cell["metadata"] = {"jupyter_mcp": {"name": name}}
    return cell


@pytest.mark.parametrize(
    ("cell_type", "source", "expected"),
    [
        ("code", "import numpy as np", "import-numpy"),
        ("code", "import matplotlib.pyplot as plt\nplt.plot()", "import-matplotlib-pyplot"),
        ("code", "from sklearn.svm import SVC", "import-svc"),
        ("code", "from pylab import *", "import-pylab"),
        ("code", "df = pd.read_csv('x.csv')", "df"),
        ("code", "df: pd.DataFrame = load()", "df"),
        ("code", "x, y = 1, 2", "x-y"),
        ("code", "df['z'] = df.a + 1", "df"),
        ("code", "self.value = 3", "self-value"),
        ("code", "total += 1", "total"),
        ("code", "def fit_model(x):\n    return x", "def-fit-model"),
        ("code", "class Model:\n    pass", "class-model"),
        ("code", "np.sort(x)", "np-sort-x"),
        ("code", "print(L)", "print-l"),
        ("code", "x", "x"),
        ("code", "%matplotlib inline\nimport numpy", "matplotlib-inline"),
        ("code", "!pip install numpy", "pip-install-numpy"),
        ("code", "%%time\n\ntotal = sum(range(10))", "total"),
        ("code", "%%bash\necho hi", "bash"),
        ("code", "for i in range(10):\n    print(i)", "for-i-in-range-10"),
        ("code", "# Load the data\ndf = load()", "load-the-data"),
        ("code", "#!/usr/bin/env python\n# %% setup\n# noqa\n# Real title\nx = 1", "real-title"),
        ("code", "x = 1  # trailing comment is not a title", "x"),
        ("code", "", "code"),
        ("code", "1 + 1", "expr-1-1"),
        ("code", "1 / 0", "expr-1-0"),
        ("code", "1 / 0\ndf = load()", "df"),
        ("code", "# ---\nx = 1", "x"),
        ("markdown", "# Sorting Arrays\n\ntext", "sorting-arrays"),
        ("markdown", "Intro text\n\n## Later heading", "later-heading"),
        ("markdown", "Setext Title\n============\nbody", "setext-title"),
        ("markdown", "## 2. Data Cleaning ##", "data-cleaning"),
        ("markdown", "## Expectation\u2013Maximization", "expectation-maximization"),
        ("markdown", "## Données réelles", "donnees-reelles"),
        ("markdown", "Just a paragraph of plain words", "just-a-paragraph-of-plain-words"),
        ("markdown", "# 数据", "markdown"),
        ("raw", "---\ntitle: x\n---", "title-x"),
        ("raw", "", "raw"),
    ],
)
def test_base_names_follow_the_documented_rules(cell_type: str, source: str, expected: str) -> None:
    assert derive_base_name(cell_type, source) == expected


def test_a_stored_name_is_kept_even_where_the_derivation_now_differs() -> None:
    cells = [_cell("1 / 0", name="code"), _cell("1 / 0")]
    assert assign_names(cells) == ["code", "expr-1-0"]


def test_an_invalid_stored_name_is_slugified_before_content_is_used() -> None:
    assert derive_base_name("code", "x = 1", stored="My Cell") == "my-cell"
    assert derive_base_name("code", "x = 1", stored="!!!") == "x"


def test_slugs_are_bounded_and_cut_at_a_hyphen() -> None:
    slug = slugify("word " * 40)
    assert len(slug) <= MAX_BASE_LENGTH
    assert is_valid_name(slug)
    assert not slug.endswith("-")
    assert slugify("a" * 100) == "a" * MAX_BASE_LENGTH


def test_valid_names_are_kebab_case_starting_with_a_letter() -> None:
    for good in ("a", "load-data", "x2", "step-3-b"):
        assert is_valid_name(good)
    for bad in ("", "3d", "Load", "a--b", "a-", "-a", "a_b", "a b", "a" * (MAX_NAME_LENGTH + 1), 7):
        assert not is_valid_name(bad)


def test_validate_name_refuses_with_invalid_name() -> None:
    with pytest.raises(NotebookError) as info:
        validate_name("Not Valid")
    assert info.value.code == ErrorCode.INVALID_NAME
    assert validate_name("fine-name") == "fine-name"


def test_unique_name_adds_the_first_free_numeric_suffix() -> None:
    assert unique_name("x", []) == "x"
    assert unique_name("x", ["x"]) == "x-2"
    assert unique_name("x", ["x", "x-2", "x-3"]) == "x-4"
    long = "a" * MAX_NAME_LENGTH
    suffixed = unique_name(long, [long])
    assert len(suffixed) <= MAX_NAME_LENGTH
    assert suffixed.endswith("-2")


def test_duplicate_content_gets_numbered_names_in_document_order() -> None:
    cells = [_cell("func2(1)"), _cell("# Title", "markdown"), _cell("func2(1)"), _cell("func2(1)")]
    assert assign_names(cells) == ["func2", "title", "func2-2", "func2-3"]


def test_stored_names_win_and_are_reserved_before_derived_ones() -> None:
    cells = [_cell("x = 1"), _cell("y = 2", name="x")]
    assert assign_names(cells) == ["x-2", "x"]


def test_a_copied_cell_with_a_duplicate_stored_name_is_renamed_not_the_original() -> None:
    cells = [_cell("a = 1", name="setup"), _cell("b = 2", name="setup")]
    assert assign_names(cells) == ["setup", "setup-2"]


def _bound(source: str, cell_id: str, name: str, bound_to: str | None) -> dict[str, object]:
    """A cell of nbformat id ``cell_id`` storing ``name`` bound to ``bound_to``."""
    section: dict[str, object] = {"name": name}
    if bound_to is not None:
        section["cell_id"] = bound_to
    return {"cell_type": "code", "id": cell_id, "metadata": {"jupyter_mcp": section},
            "source": source}  # fmt: skip


def test_a_pasted_copy_above_the_cell_its_name_is_bound_to_does_not_take_the_name() -> None:
    original = _bound("alpha = 1", "c-orig", "alpha", "c-orig")
    pasted = _bound("alpha = 99", "c-copy", "alpha", "c-orig")  # JupyterLab copies metadata
    assert assign_names([pasted, original]) == ["alpha-2", "alpha"]
    assert assign_names([original, pasted]) == ["alpha", "alpha-2"]


def test_a_cut_and_pasted_cell_keeps_its_name_when_no_other_cell_has_it() -> None:
    moved = _bound("alpha = 1", "c-new", "alpha", "c-old")  # pasted with a new id
    assert assign_names([_cell("x = 1"), moved]) == ["x", "alpha"]


def test_a_name_bound_to_none_of_the_cells_that_store_it_goes_to_the_first() -> None:
    first, second = _bound("a = 1", "c1", "setup", None), _bound("b = 2", "c2", "setup", "c9")
    assert assign_names([first, second]) == ["setup", "setup-2"]


def test_set_stored_name_binds_the_name_to_the_cells_id() -> None:
    cell: dict[str, object] = {"cell_type": "code", "id": "abc", "metadata": {}, "source": ""}
    set_stored_name(cell, "named")
    assert cell["metadata"] == {"jupyter_mcp": {"name": "named", "cell_id": "abc"}}
    assert bound_here(cell)
    copied = {**cell, "id": "def"}
    assert not bound_here(copied)


def test_names_survive_edits_and_moves_once_stored() -> None:
    cells = [_cell("x = 1", name="first"), _cell("y = 2", name="second")]
    cells[0]["source"] = "completely = 'different'"
    assert assign_names(list(reversed(cells))) == ["second", "first"]


def test_set_stored_name_keeps_other_metadata() -> None:
    cell: dict[str, object] = {
        "cell_type": "code",
        "metadata": {"tags": ["a"], "jupyter_mcp": {"other": 1}},
        "source": "",
    }
    set_stored_name(cell, "named")
    assert stored_name(cell) == "named"
    assert cell["metadata"] == {"tags": ["a"], "jupyter_mcp": {"other": 1, "name": "named"}}


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda path: path.name)
def test_every_fixture_notebook_gets_unique_valid_names(path: Path) -> None:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    cells = notebook.get("cells") or [
        cell for sheet in notebook.get("worksheets", []) for cell in sheet.get("cells", [])
    ]
    names = assign_names(cells)
    assert len(names) == len(cells)
    assert len(set(names)) == len(names)
    assert all(is_valid_name(name) for name in names)


def test_a_huge_cell_is_named_from_its_first_statement_without_parsing_it_whole() -> None:
    huge = "import numpy as np\n" + "x = [\n" + "    1,\n" * 300_000 + "]\n"

    assert derive_base_name("code", huge) == "import-numpy"
    assert derive_base_name("code", "df = load()\n" + "y = 1\n" * 50_000) == "df"
