"""create_notebook: a valid nbformat 4.5 notebook with named cells, written once, never over."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from wb_helpers import copy_fixture, tree_state

from jupyter_jcli.errors import ErrorCode, JcliError
from jupyter_jcli.kernels import installed_kernelspecs
from jupyter_jcli.notebook.document import Document
from jupyter_jcli.workbench import (
    NewCell,
    add_cell,
    create_notebook,
    list_kernelspecs,
    notebook_overview,
)
from jupyter_jcli.workbench._create import _write_new


def test_a_new_notebook_validates_and_loads_with_the_names_and_revs_reported(
    work: Path,
) -> None:
    path = work / "analysis.ipynb"
    outcome = create_notebook(
        path,
        cells=[
            NewCell("# Sales analysis", "markdown"),
            {"source": "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2]})"},
            NewCell("df.describe()", name="describe-sales"),
            {"source": "raw text", "cell_type": "raw", "name": "notes"},
        ],
    )

    assert outcome.path == path
    notebook = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    nbformat.validate(notebook)
    assert (notebook.nbformat, notebook.nbformat_minor) == (4, 5)
    ids = [cell["id"] for cell in notebook.cells]
    assert len(set(ids)) == 4 and all(ids)
    document = Document.load(path)
    assert [v.name for v in document.cells] == [
        "sales-analysis",
        "import-pandas",
        "describe-sales",
        "notes",
    ]
    assert all(view.name_stored for view in document.cells)
    assert [c.to_dict() for c in outcome.cells] == [
        {"index": v.index, "name": v.name, "cell_type": v.cell_type, "rev": v.rev}
        for v in document.cells
    ]
    assert outcome.structure_rev == document.structure_rev
    assert document.cells[1].source == "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2]})"
    assert document.cells[3].cell_type == "raw"


def test_the_kernelspec_and_language_come_from_the_installed_spec(work: Path) -> None:
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    outcome = create_notebook(work / "k.ipynb")

    metadata = json.loads((work / "k.ipynb").read_text(encoding="utf-8"))["metadata"]
    expected = {"name": "python3", "display_name": spec.display_name, "language": spec.language}
    assert metadata["kernelspec"] == expected == outcome.kernelspec
    assert metadata["language_info"] == {"name": spec.language}
    document = outcome.to_dict()
    assert document["operation"] == "create_notebook"
    assert document["cell_count"] == 0 and document["cells"] == []
    assert (document["nbformat"], document["nbformat_minor"]) == (4, 5)


def test_the_file_is_written_as_jupyter_writes_it(work: Path) -> None:
    path = work / "style.ipynb"
    create_notebook(path, cells=[NewCell("a = 1\nb = 2\n")])

    raw = path.read_text(encoding="utf-8")
    notebook = nbformat.reads(raw, as_version=4)
    assert raw == nbformat.writes(notebook) + "\n"
    assert json.loads(raw)["cells"][0]["source"] == ["a = 1\n", "b = 2\n"]


def test_a_created_notebook_takes_mutations_guarded_by_its_structure_rev(work: Path) -> None:
    path = work / "grow.ipynb"
    created = create_notebook(path, cells=[NewCell("x = 1")])

    outcome = add_cell(path, "y = x + 1", expected_rev=created.structure_rev)

    assert [c.name for c in notebook_overview(path).cells] == ["x", "y"]
    assert outcome.stale == ("y",)


def test_an_existing_file_is_never_overwritten(work: Path) -> None:
    existing = copy_fixture("02.08-Sorting.ipynb", work)
    before = tree_state(work)

    with pytest.raises(JcliError) as caught:
        create_notebook(existing, cells=[NewCell("x = 1")])

    assert caught.value.code == ErrorCode.FILE_EXISTS
    assert tree_state(work) == before


def test_a_folder_at_the_path_is_refused_as_existing(work: Path) -> None:
    (work / "dir.ipynb").mkdir()

    with pytest.raises(JcliError) as caught:
        create_notebook(work / "dir.ipynb")

    assert caught.value.code == ErrorCode.FILE_EXISTS


def test_a_file_appearing_before_the_write_is_kept_and_no_temporary_file_remains(
    work: Path,
) -> None:
    target = work / "race.ipynb"
    target.write_bytes(b"someone else's notebook")

    with pytest.raises(JcliError) as caught:
        _write_new(target, {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})

    assert caught.value.code == ErrorCode.FILE_EXISTS
    assert target.read_bytes() == b"someone else's notebook"
    assert sorted(p.name for p in work.iterdir()) == ["race.ipynb"]


def test_a_kernelspec_named_in_other_letter_case_is_found_as_jupyter_client_finds_it(
    work: Path,
) -> None:
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("Python3")  # jupyter_client lowercases the name
    outcome = create_notebook(work / "k.ipynb", kernelspec_name="Python3")

    assert outcome.kernelspec == {
        "name": "Python3",
        "display_name": spec.display_name,
        "language": spec.language,
    }


def test_the_installed_kernelspecs_are_listed_with_where_each_lives() -> None:
    from jupyter_client.kernelspec import KernelSpecManager

    entries = list_kernelspecs()

    assert [entry["name"] for entry in entries] == installed_kernelspecs()
    python3 = next(entry for entry in entries if entry["name"] == "python3")
    assert python3["resource_dir"] == KernelSpecManager().find_kernel_specs()["python3"]
    assert python3["language"] == "python"


def test_a_kernelspec_that_is_not_installed_is_refused_listing_the_installed_ones(
    work: Path,
) -> None:
    with pytest.raises(JcliError) as caught:
        create_notebook(work / "nb.ipynb", kernelspec_name="no-such-kernel-jcli")

    assert caught.value.code == ErrorCode.KERNELSPEC_NOT_FOUND
    assert caught.value.details["kernelspec"] == "no-such-kernel-jcli"
    assert caught.value.details["installed"] == installed_kernelspecs()
    assert "python3" in caught.value.details["installed"]
    assert list(work.iterdir()) == []


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("notes.py", ErrorCode.FILE_TYPE_UNSUPPORTED),
        ("notebook", ErrorCode.FILE_TYPE_UNSUPPORTED),
        ("missing/nb.ipynb", ErrorCode.FILE_NOT_FOUND),
    ],
)
def test_a_path_that_cannot_be_a_new_notebook_is_refused(
    work: Path, name: str, code: ErrorCode
) -> None:
    with pytest.raises(JcliError) as caught:
        create_notebook(work / name)

    assert caught.value.code == code
    assert tree_state(work) == {}


@pytest.mark.parametrize(
    ("cells", "code"),
    [
        ([NewCell("a = 1", name="same"), NewCell("b = 2", name="same")], ErrorCode.NAME_CONFLICT),
        ([NewCell("a = 1", name="Not Valid")], ErrorCode.INVALID_NAME),
        ([NewCell("a = 1", cell_type="heading")], ErrorCode.INVALID_CELL_TYPE),
        ([{"cell_type": "code"}], ErrorCode.USAGE_ERROR),
        ([{"source": "a = 1", "outputs": []}], ErrorCode.USAGE_ERROR),
    ],
)
def test_bad_initial_cells_are_refused_before_anything_is_written(
    work: Path, cells: list[object], code: ErrorCode
) -> None:
    with pytest.raises(JcliError) as caught:
        create_notebook(work / "nb.ipynb", cells=cells)  # type: ignore[arg-type]

    assert caught.value.code == code
    assert tree_state(work) == {}
