"""Text mode for a person: tables, pages, image descriptions, the cells list and the tour."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from jcli_helpers import EXAMPLE, NOTEBOOKS, code_cell, png_b64, run_cli, write_notebook

from jupyter_jcli.errors import ErrorCode


def test_outputs_table_lists_types_and_sizes_with_a_hint_to_read_one() -> None:
    run = run_cli("notebook", "outputs", EXAMPLE, "--cell", "18")
    assert run.exit_code == 0
    lines = run.stdout.splitlines()
    assert "cell 18 of" in lines[0]
    assert "execute_result" in lines[2]
    assert "text/html (859 bytes)" in lines[2]
    assert lines[-1].startswith("read one: j-cli notebook output ")


def test_text_page_goes_to_stdout_and_paging_notes_to_stderr(tmp_path: Path) -> None:
    text = "".join(f"row {i}\n" for i in range(1000))
    nb = write_notebook(
        tmp_path / "s.ipynb",
        [code_cell([{"output_type": "stream", "name": "stdout", "text": text}])],
    )
    run = run_cli("notebook", "output", nb, "--cell", "0", "--output", "0", "--limit", "70")
    assert run.exit_code == 0
    assert run.stdout == text[:70] + "\n"
    assert f"characters 0-70 of {len(text)}" in run.stderr
    assert "--offset 70" in run.stderr


def test_an_image_is_described_by_type_size_and_pixels() -> None:
    run = run_cli("notebook", "output", EXAMPLE, "--cell", "24", "--output", "0")
    assert run.exit_code == 0
    assert run.stdout.strip() == "image/png, 3,923 bytes, 362x248 px"
    assert "--save PATH" in run.stderr


def test_an_error_output_shows_name_value_and_a_traceback_without_ansi(tmp_path: Path) -> None:
    error = {
        "output_type": "error",
        "ename": "ZeroDivisionError",
        "evalue": "division by zero",
        "traceback": [
            "\x1b[0;31mZeroDivisionError\x1b[0m  Traceback",
            "\x1b[1;32m----> 1\x1b[0m 1/0",
        ],
    }
    nb = write_notebook(tmp_path / "e.ipynb", [code_cell([error], "1/0")])
    run = run_cli("notebook", "output", nb, "--cell", "0", "--output", "0")
    assert run.stdout.splitlines() == [
        "ZeroDivisionError: division by zero",
        "ZeroDivisionError  Traceback",
        "----> 1 1/0",
    ]


def test_json_values_are_printed_indented(tmp_path: Path) -> None:
    bundle = {"application/json": {"a": [1, 2]}, "application/vnd.custom": "x"}
    nb = write_notebook(
        tmp_path / "j.ipynb",
        [code_cell([{"output_type": "display_data", "metadata": {}, "data": bundle}])],
    )
    run = run_cli("notebook", "output", nb, "--cell", "0", "--output", "0")
    assert json.loads(run.stdout) == {"a": [1, 2]}
    assert "\n  " in run.stdout


def test_cells_lists_one_line_per_cell_with_outputs() -> None:
    doc = run_cli("-j", "notebook", "cells", EXAMPLE).json()
    assert doc["cell_count"] == len(doc["cells"]) == 43
    cell = doc["cells"][24]
    assert cell["cell_type"] == "code"
    assert cell["first_line"] == "%matplotlib inline"
    assert (cell["output_count"], cell["output_types"]) == (1, ["display_data"])
    run = run_cli("notebook", "cells", EXAMPLE)
    lines = run.stdout.splitlines()
    assert len(lines) == 44
    assert "[1 out: display_data]" in lines[25]
    assert lines[25].split()[0] == "24"


def test_cells_keeps_its_columns_aligned_when_a_cell_name_is_longer_than_the_name_column(
    tmp_path: Path,
) -> None:
    from jupyter_jcli.cli._cells import LABEL_WIDTH
    from jupyter_jcli.notebook.names import MAX_NAME_LENGTH

    long = ("a-name-far-longer-than-the-name-column-of-the-cells-table-" + "x" * 40)[
        :MAX_NAME_LENGTH
    ]
    assert len(long) > LABEL_WIDTH
    cells = [
        {"cell_type": "code", "metadata": {"jupyter_mcp": {"name": name}}, "source": src,
         "outputs": [], "execution_count": None}
        for name, src in ((long, "x = 1"), ("y", "y = 2"))
    ]  # fmt: skip
    nb = write_notebook(tmp_path / "long.ipynb", cells)
    assert run_cli("-j", "notebook", "cells", nb).json()["cells"][0]["name"] == long
    lines = run_cli("notebook", "cells", nb).stdout.splitlines()[1:]
    starts = {line.index(src) for line, src in zip(lines, ("x = 1", "y = 2"), strict=True)}
    assert len(starts) == 1  # the first-line column starts at one offset on every line
    name = lines[0].split()[2]
    assert len(name) == LABEL_WIDTH and long.startswith(name[:-1])


def test_cells_of_a_notebook_with_malformed_cells_does_not_fail(tmp_path: Path) -> None:
    nb = write_notebook(
        tmp_path / "m.ipynb",
        [
            {"cell_type": "code", "metadata": {}, "source": "x", "outputs": "not a list"},
            {"cell_type": "markdown", "source": ["# T", "itle"]},
        ],
    )
    doc = run_cli("-j", "notebook", "cells", nb).json()
    assert doc["cells"][0]["output_count"] == 0
    assert doc["cells"][1]["first_line"] == "# Title"


def _paired(tmp_path: Path, source: Path) -> tuple[Path, Path]:
    import jupytext

    notebook = tmp_path / source.name
    shutil.copy(source, notebook)
    script = notebook.with_suffix(".py")
    jupytext.write(jupytext.read(notebook), script, fmt="py:percent")
    return notebook, script


def test_cells_of_a_paired_py_map_each_cell_to_its_notebook_cell(tmp_path: Path) -> None:
    notebook, script = _paired(tmp_path, EXAMPLE)
    doc = run_cli("-j", "notebook", "cells", script).json()
    assert doc["source"]["kind"] == "py"
    assert doc["source"]["paired_notebook"] == str(notebook.resolve())
    nb_cells = run_cli("-j", "notebook", "cells", notebook).json()["cells"]
    assert doc["cell_count"] == len(nb_cells)
    for cell in doc["cells"]:
        assert cell["mapping"] == "content"
        assert nb_cells[cell["notebook_cell_index"]]["first_line"] == cell["first_line"]
    mapped = doc["cells"][24]
    assert (mapped["output_count"], mapped["output_types"]) == (1, ["display_data"])


def test_a_py_cell_edited_after_pairing_is_shown_unmapped(tmp_path: Path) -> None:
    _, script = _paired(tmp_path, EXAMPLE)
    text = script.read_text("utf-8").replace("vec.get_feature_names_out()", "vec.changed()", 1)
    script.write_text(text, "utf-8")
    doc = run_cli("-j", "notebook", "cells", script).json()
    edited = [c for c in doc["cells"] if c["first_line"] == "vec.changed()"]
    assert len(edited) == 1
    assert edited[0]["notebook_cell_index"] is None
    assert edited[0]["mapping_problem"]["code"] == ErrorCode.CELL_MAPPING_UNRELIABLE
    lines = run_cli("notebook", "cells", script).stdout.splitlines()
    assert any("nb:-" in line and "vec.changed()" in line for line in lines)


def test_a_py_without_a_paired_notebook_still_lists_its_cells(tmp_path: Path) -> None:
    script = tmp_path / "alone.py"
    script.write_text("# %%\nx = 1\n\n# %% [markdown]\n# Title\n", "utf-8")
    doc = run_cli("-j", "notebook", "cells", script).json()
    assert doc["cell_count"] == 2
    assert doc["source"]["paired_notebook"] is None
    assert doc["source"]["pairing_problem"]["code"] == ErrorCode.NOTEBOOK_PAIR_NOT_FOUND
    read = run_cli("-j", "notebook", "outputs", script, "--cell", "0")
    assert read.exit_code == 1
    assert read.json()["code"] == ErrorCode.NOTEBOOK_PAIR_NOT_FOUND


def test_outputs_of_a_paired_py_cell_carry_the_mapping_provenance(tmp_path: Path) -> None:
    notebook, script = _paired(tmp_path, EXAMPLE)
    doc = run_cli("-j", "notebook", "output", script, "--cell", "24", "--output", "0").json()
    assert doc["source"]["path"] == str(notebook.resolve())
    assert doc["source"]["mapping"] == "content"
    assert doc["source"]["requested_cell_index"] == 24
    assert doc["selected"]["mime_type"] == "image/png"


def test_show_tours_the_quick_start_notebook_briefly() -> None:
    run = run_cli("notebook", "show", EXAMPLE)
    assert run.exit_code == 0
    assert run.stderr == ""
    out = run.stdout
    assert "showing 13 with outputs" in out
    assert "image/png, 3,923 bytes, 362x248 px" in out  # the plot
    assert "evil  horizon  of  problem  queen" in out  # the pandas table, as text/plain
    assert "<table" not in out
    assert "[0] stream stdout:" in out  # the stream
    assert "[  5.  25. 125.]]" in out
    assert len(out.splitlines()) < 150


def test_show_cuts_long_outputs_and_says_how_to_read_the_rest(tmp_path: Path) -> None:
    text = "".join(f"line {i}\n" for i in range(500))
    table = {"text/html": "<table/>", "text/plain": "".join(f"r{i}\n" for i in range(40))}
    nb = write_notebook(
        tmp_path / "long.ipynb",
        [
            code_cell([{"output_type": "stream", "name": "stdout", "text": text}]),
            code_cell([{"output_type": "execute_result", "execution_count": 2, "metadata": {},
                        "data": table}]),
            code_cell([]),
            code_cell([{"output_type": "display_data", "metadata": {},
                        "data": {"image/png": "not base64!"}}]),
            code_cell([{"output_type": "error", "ename": "E", "evalue": "v",
                        "traceback": [f"\x1b[31mframe {i}\x1b[0m" for i in range(30)]}]),
        ],
    )  # fmt: skip
    run = run_cli("notebook", "show", nb)
    assert run.exit_code == 0
    out = run.stdout
    assert "line 11\n" in out
    assert "line 12\n" not in out
    assert f"showing 12 lines of {len(text):,} characters" in out
    assert f"j-cli notebook output {nb} --cell 0 --output 0" in out
    assert "28 more lines" in out
    assert "--cell 1 --output 0 --mime text/plain" in out
    assert "cell 2" not in out  # no outputs: not shown
    assert f"error {ErrorCode.OUTPUT_DATA_INVALID}" in out  # one bad output, tour goes on
    assert "frame 29" in out
    assert "frame 5\n" not in out
    assert "\x1b" not in out


def test_show_selected_cells_and_json_collects_the_listings(tmp_path: Path) -> None:
    run = run_cli("notebook", "show", EXAMPLE, "--cell", "24", "--cell", "28")
    assert run.stdout.count("── cell") == 2
    doc = run_cli("-j", "notebook", "show", EXAMPLE).json()
    assert doc["status"] == "ok"
    assert [c["source"]["cell_index"] for c in doc["cells"]][:3] == [7, 9, 11]
    assert all(c["status"] == "ok" for c in doc["cells"])
    bad = run_cli("-j", "notebook", "show", EXAMPLE, "--cell", "999")
    assert bad.exit_code == 1
    assert bad.json()["code"] == ErrorCode.CELL_NOT_FOUND


def test_show_of_real_notebooks_with_errors_plots_and_plotly_never_fails() -> None:
    for name in (
        "01.06-Errors-and-Debugging.ipynb",
        "plotly_graphs.ipynb",
        "04.03-Errorbars.ipynb",
    ):
        run = run_cli("notebook", "show", NOTEBOOKS / name)
        assert run.exit_code == 0, run.stderr
        assert "\x1b" not in run.stdout
    errors = run_cli("notebook", "show", NOTEBOOKS / "01.06-Errors-and-Debugging.ipynb").stdout
    assert "ZeroDivisionError" in errors


def test_show_describes_a_png_bundle_in_a_generated_notebook(tmp_path: Path) -> None:
    nb = write_notebook(
        tmp_path / "p.ipynb",
        [code_cell([{"output_type": "display_data", "metadata": {},
                     "data": {"image/png": png_b64(5, 4), "text/plain": "<Figure>"}}])],
    )  # fmt: skip
    assert "image/png, " in run_cli("notebook", "show", nb).stdout
    assert "5x4 px (also text/plain)" in run_cli("notebook", "show", nb).stdout
