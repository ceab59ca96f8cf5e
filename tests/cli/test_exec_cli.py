"""``j-cli exec``, ``j-cli run script.py`` and ``j-cli output show|clean`` on real kernels."""

from __future__ import annotations

import base64
import json
import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from click.testing import CliRunner
from jcli_helpers import Run, run_cli, tiny_png

from jupyter_jcli.cli import run
from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.notebook.snapshots import CACHE_DIR_ENV
from jupyter_jcli.runs import MAX_RUNS_ENV

PNG_CODE = (
    "import base64\nfrom IPython.display import Image, display\n"
    f"display(Image(data=base64.b64decode({base64.b64encode(tiny_png(5, 4)).decode()!r})))\n"
    "print('plotted')"
)


@pytest.fixture(autouse=True)
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def run_with_stdin(text: str, *args: str) -> Run:
    runner = CliRunner()
    with runner.isolation(input=text) as streams:
        code = run(list(args))
        sys.stdout.flush()
        return Run(code, streams[0].getvalue().decode(), "")


def notebook(folder: Path, sources: list[str]) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    path = folder / "nb.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.mark.kernel
def test_short_text_comes_back_inline_and_creates_no_folder(here: Path) -> None:
    document = run_cli("-j", "exec", "--code", "print('hi')\n6 * 7").json()
    assert document["operation"] == "exec" and document["ok"] is True
    assert document["inline"] is True and "output_manifest" not in document  # null: left out
    assert document["run"]["status"] == "ok" and document["run"]["execution_count"] == 1
    assert [o["output_type"] for o in document["outputs"]] == ["stream", "execute_result"]
    assert document["summary"]["text"].endswith("42")
    assert document["kernel"]["cwd"] == str(here)
    assert list(here.iterdir()) == []


@pytest.mark.kernel
def test_an_error_exits_1_with_its_name_and_value(here: Path) -> None:
    result = run_cli("-j", "exec", "--code", "1 / 0")
    assert result.exit_code == 1
    document = result.json()
    assert document["ok"] is False and document["run"]["status"] == "error"
    assert document["run"]["ename"] == "ZeroDivisionError"
    assert "ZeroDivisionError" in document["summary"]["text"]


@pytest.mark.kernel
def test_an_image_is_saved_as_a_file_and_read_back_with_output_show(here: Path) -> None:
    document = run_cli("-j", "exec", "--code", PNG_CODE).json()
    assert "inline" not in document and "outputs" not in document  # false, null: left out
    manifest = Path(document["output_manifest"])
    assert manifest.is_absolute() and manifest.parent.parent == here / ".j-cli" / "outputs"
    [image] = document["files"]
    assert Path(image["path"]).read_bytes() == tiny_png(5, 4)
    assert "iVBOR" not in manifest.read_text("utf-8")
    assert str(manifest) in document["notice"]
    listing = run_cli("-j", "output", "show", manifest).json()
    assert [o["output_type"] for o in listing["outputs"]] == ["display_data", "stream"]
    read = run_cli("-j", "output", "show", manifest, "--output", str(image["output_index"])).json()
    assert read["selected"]["mime_type"] == "image/png"
    assert (read["selected"]["width"], read["selected"]["height"]) == (5, 4)
    assert base64.b64decode(read["selected"]["data"]) == tiny_png(5, 4)
    Path(image["path"]).unlink()
    broken = run_cli("-j", "output", "show", manifest, "--output", "0")
    assert broken.exit_code == 1 and broken.json()["code"] == ErrorCode.OUTPUT_DATA_INVALID
    plain = run_cli("-j", "output", "show", manifest, "--output", "0", "--mime", "text/plain")
    assert plain.json()["selected"]["data"].startswith("<IPython.core.display.Image")
    assert run_cli("-j", "output", "show", manifest, "--output", "1").json()["stream"]["data"] == (
        "plotted\n"
    )


@pytest.mark.kernel
def test_a_short_html_display_is_rich_so_it_is_saved_and_read_back_as_html(here: Path) -> None:
    code = (
        "from IPython.display import HTML, Markdown, display\n"
        "display(HTML('<b>bold</b>'))\ndisplay(Markdown('*md*'))"
    )
    document = run_cli("-j", "exec", "--code", code).json()
    assert "inline" not in document and "outputs" not in document  # saved: no inline outputs
    manifest = document["output_manifest"]
    html = run_cli("-j", "output", "show", manifest, "--output", "0", "--mime", "text/html")
    assert html.json()["selected"]["data"] == "<b>bold</b>"
    markdown = run_cli("-j", "output", "show", manifest, "--output", "1", "--mime", "text/markdown")
    assert markdown.json()["selected"]["data"] == "*md*"


@pytest.mark.kernel
def test_ten_thousand_lines_are_saved_and_summarized_within_the_budget(here: Path) -> None:
    code = "for i in range(10_000):\n    print('line', i)"
    source = here / "many.py"
    source.write_text(code, "utf-8")
    document = run_cli("-j", "exec", "--code-file", source).json()
    assert "inline" not in document and document["output_count"] == 1
    summary = document["summary"]
    assert summary["truncated"] is True and len(summary["text"]) <= 4_000
    assert "line 0\n" in summary["text"] and "line 9999" in summary["text"]
    assert "j-cli output show" in summary["text"]  # the cut names the read of the rest
    manifest = document["output_manifest"]
    page = run_cli(
        "-j", "output", "show", manifest, "--output", "0", "--offset", "7", "--limit", "7"
    ).json()
    assert page["stream"]["data"] == "line 1\n" and page["stream"]["next_offset"] == 14
    assert page["stream"]["total_characters"] == sum(len(f"line {i}\n") for i in range(10_000))


@pytest.mark.kernel
def test_code_from_stdin_runs_on_the_notebooks_kernel_and_the_notebook_is_untouched(
    here: Path,
) -> None:
    path = notebook(here, ["value = 41"])
    assert run_cli("-j", "run", path, "--all").exit_code == 0
    before = path.read_bytes()
    code = "print(__import__('os').getcwd())"
    document = run_with_stdin(code, "-j", "exec", str(path), "--code-file", "-").json()
    assert document["notebook_path"] == str(path) and document["ok"] is True
    assert document["outputs"][0]["text"] == [f"{here}\n"]
    assert path.read_bytes() == before
    missing = run_cli("-j", "exec", path, "--code", "value + 1").json()
    assert missing["run"]["ename"] == "NameError"  # a fresh kernel per command (no live one)
    assert path.read_bytes() == before


def test_exec_needs_exactly_one_source_of_code(here: Path) -> None:
    for args in ([], ["--code", "1", "--code-file", "x.py"]):
        result = run_cli("-j", "exec", *args)
        assert result.exit_code == 2 and result.json()["code"] == ErrorCode.USAGE_ERROR


@pytest.mark.kernel
def test_each_saved_run_applies_retention_but_never_to_itself(
    here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MAX_RUNS_ENV, "1")
    first = run_cli("-j", "exec", "--code", PNG_CODE).json()
    second = run_cli("-j", "exec", "--code", PNG_CODE).json()
    assert second["retention"]["deleted"] == 1
    assert not Path(first["output_manifest"]).exists()
    assert Path(second["output_manifest"]).exists()
    dry = run_cli("-j", "output", "clean", "--dry-run", "--max-runs", "0").json()
    assert dry["would_delete"] == [str(Path(second["output_manifest"]).parent)]
    done = run_cli("-j", "output", "clean", "--days", "7", "--max-runs", "0").json()
    assert done["deleted"] == dry["would_delete"]
    assert not Path(second["output_manifest"]).exists()


@pytest.mark.kernel
def test_a_plain_script_runs_whole_and_writes_no_notebook(here: Path) -> None:
    script = here / "plain.py"
    script.write_text("x = 1\nprint(x)\n\ny = x + 1\nprint(y)\n", "utf-8")
    document = run_cli("-j", "run", script).json()
    assert document["operation"] == "run_script" and document["path"] == str(script)
    assert document["outputs"][0]["text"] == ["1\n", "2\n"]
    assert sorted(p.name for p in here.iterdir()) == ["plain.py"]
    refused = run_cli("-j", "run", script, "--all")
    assert refused.exit_code == 2 and refused.json()["code"] == ErrorCode.USAGE_ERROR


@pytest.mark.kernel
def test_a_percent_script_runs_cell_by_cell_into_its_paired_notebook_created_when_absent(
    here: Path,
) -> None:
    script = here / "analysis.py"
    script.write_text("# %%\nx = 20\n\n# %%\nprint(x + 1)\n\n# %%\nx * 2\n", "utf-8")
    document = run_cli("-j", "run", script).json()
    assert document["ok"] is True
    assert [c["status"] for c in document["run"]["cells"]] == ["ok", "ok", "ok"]
    saved = nbformat.read(here / "analysis.ipynb", as_version=4)
    assert [c.execution_count for c in saved.cells] == [1, 2, 3]
    assert saved.cells[1].outputs[0]["text"] == "21\n"
    assert saved.cells[2].outputs[0]["data"]["text/plain"] == "40"
    again = run_cli("-j", "run", script).json()  # the pair exists now: reused, not replaced
    assert again["ok"] is True and again["run"]["notebook_path"] == str(here / "analysis.ipynb")
    assert not (here / ".j-cli").exists()


def test_a_light_script_with_markers_is_refused_before_anything_is_written(here: Path) -> None:
    script = here / "light.py"
    script.write_text("# +\nx = 1\n# -\n", "utf-8")
    result = run_cli("-j", "run", script)
    assert result.exit_code == 1 and result.json()["code"] == ErrorCode.FILE_TYPE_UNSUPPORTED
    assert sorted(p.name for p in here.iterdir()) == ["light.py"]


def test_output_show_of_something_else_is_refused(here: Path) -> None:
    (here / "m.json").write_text(json.dumps({"managed_by": "x"}), "utf-8")
    result = run_cli("-j", "output", "show", here / "m.json")
    assert result.exit_code == 1 and result.json()["code"] == ErrorCode.RUN_MANIFEST_INVALID


def test_a_run_the_reference_saved_is_shown_then_cleaned_and_then_not_found(here: Path) -> None:
    run_id = "3ec8a7f2-a257-4d32-8c96-94b3d262d49a"  # written by jupyter-jcli 0.9.7's exec
    fixture = Path(__file__).parents[1] / "fixtures" / "runs" / "jcli-0.9.7" / run_id
    folder = here / ".j-cli" / "outputs" / run_id
    shutil.copytree(fixture, folder)
    manifest = folder / "manifest.json"
    listing = run_cli("-j", "output", "show", manifest).json()
    assert listing["output_count"] == 4 and listing["source"]["format"] == "jupyter-jcli-0.9.7"
    image = run_cli("-j", "output", "show", manifest, "--output", "1").json()["selected"]
    assert base64.b64decode(image["data"]) == (folder / "output-1.png").read_bytes()
    text = run_cli("output", "show", manifest, "--output", "2", "--mime", "text/html")
    assert text.exit_code == 0 and text.stdout.startswith("<b>bold</b> table")
    dry = run_cli("-j", "output", "clean", "--dry-run", "--days", "0").json()
    assert dry["would_delete"] == [str(folder)] and manifest.exists()
    done = run_cli("-j", "output", "clean", "--days", "0").json()
    assert done["deleted"] == [str(folder)] and not folder.exists()
    gone = run_cli("-j", "output", "show", manifest)
    assert gone.exit_code == 1 and gone.json()["code"] == ErrorCode.OUTPUT_NOT_FOUND


@pytest.mark.kernel
def test_outputs_that_cannot_be_saved_still_answer_their_summary_with_the_reason(
    here: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (here / ".j-cli").symlink_to(elsewhere)
    result = run_cli("-j", "exec", "--code", PNG_CODE)
    assert result.exit_code == 1
    document = result.json()
    assert document["ok"] is True and "output_manifest" not in document
    assert document["save_error"]["code"] == ErrorCode.RUN_FOLDER_UNSAFE
    assert "plotted" in document["summary"]["text"]
    assert list(elsewhere.iterdir()) == []


@pytest.mark.kernel
def test_a_short_exec_answer_leaves_out_the_fields_that_carry_nothing(here: Path) -> None:
    result = run_cli("-j", "exec", "--code", "print('short')")
    document = result.json()
    assert document["ok"] is True and document["outputs"][0]["text"] == ["short\n"]
    for key in ("path", "notebook_path", "output_manifest", "files", "notice", "effect"):
        assert key not in document, key
    assert set(document["run"]) == {"status", "execution_count", "duration_s", "epoch"}
    assert "summary" not in document  # inline streams: the outputs are their own text
