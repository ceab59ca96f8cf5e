"""How ``j-cli run script.py`` plans a script (in-process, no kernel): where the paired
notebook of a notebook script is created, and which scripts are refused before anything is
written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.workbench._script import prepare_script

HEADER = """# ---
# jupyter:
#   jupytext:
#     formats: {formats}
# ---

"""
BODY = "# %%\nx = 1\n\n# %%\nprint(x)\n"


def _script(path: Path, formats: str | None, body: str = BODY) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    header = HEADER.format(formats=formats) if formats is not None else ""
    path.write_text(header + body, encoding="utf-8")
    return path


def _code(notebook: Path) -> list[str]:
    document = json.loads(notebook.read_text(encoding="utf-8"))
    return ["".join(cell["source"]) for cell in document["cells"] if cell["cell_type"] == "code"]


def test_a_header_pairing_folders_creates_the_notebook_in_the_notebooks_folder(
    tmp_path: Path,
) -> None:
    script = _script(tmp_path / "scripts" / "a.py", "notebooks///ipynb,scripts///py:percent")
    (tmp_path / "notebooks").mkdir()
    plan = prepare_script(script)
    assert plan.kind == "notebook" and plan.created
    assert plan.notebook_path == (tmp_path / "notebooks" / "a.ipynb").resolve()
    assert _code(plan.notebook_path) == ["x = 1", "print(x)"]
    assert not (tmp_path / "scripts" / "a.ipynb").exists()


def test_a_header_whose_formats_do_not_fit_the_scripts_path_pairs_it_beside_the_script(
    tmp_path: Path,
) -> None:
    script = _script(tmp_path / "elsewhere" / "b.py", "nb//ipynb,src//py:percent")
    plan = prepare_script(script)
    assert plan.created
    assert plan.notebook_path == (tmp_path / "elsewhere" / "b.ipynb").resolve()
    assert _code(plan.notebook_path) == ["x = 1", "print(x)"]


def test_a_second_plan_finds_the_pair_the_first_created_and_creates_nothing(
    tmp_path: Path,
) -> None:
    script = _script(tmp_path / "c.py", None)
    first = prepare_script(script)
    before = first.notebook_path.read_bytes() if first.notebook_path else b""
    second = prepare_script(script)
    assert second.kind == "notebook" and not second.created
    assert second.notebook_path == first.notebook_path
    assert second.notebook_path is not None and second.notebook_path.read_bytes() == before


def test_a_script_without_cell_markers_runs_whole_and_no_notebook_is_written(work: Path) -> None:
    script = _script(work / "plain.py", None, body="x = 1\nprint(x)\n")
    plan = prepare_script(script)
    assert plan.kind == "plain" and plan.notebook_path is None
    assert sorted(p.name for p in work.iterdir()) == ["plain.py"]


def test_a_hydrogen_script_is_refused_as_unsupported_and_nothing_is_written(work: Path) -> None:
    script = _script(work / "h.py", None, body="# %%\nx = 1\n\n# %%\n%time y = 2\n")
    with pytest.raises(NotebookError) as caught:
        prepare_script(script)
    assert caught.value.code == ErrorCode.FILE_TYPE_UNSUPPORTED
    assert caught.value.details["format_name"] == "hydrogen"
    assert sorted(p.name for p in work.iterdir()) == ["h.py"]
