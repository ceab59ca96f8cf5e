"""``j-cli run FILE``: the -j contract, exit statuses, text output, the bundled example."""

from __future__ import annotations

import json
import os
import shlex
import shutil
from pathlib import Path

import nbformat
import pytest
from jcli_helpers import EXAMPLE, run_cli

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.workbench import compact


def notebook(folder: Path, sources: list[str], name: str = "nb") -> Path:
    cells = [
        {"cell_type": "code", "id": f"c{i}", "metadata": {}, "source": source,
         "execution_count": None, "outputs": []}
        for i, source in enumerate(sources)
    ]  # fmt: skip
    path = folder / f"{name}.ipynb"
    document = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return path


def names(path: Path) -> list[str]:
    from jupyter_jcli.notebook.document import Document

    return [view.name for view in Document.load(path).cells]


def process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.kernel
def test_run_all_json_document_outputs_saved_and_kernel_shut_down(tmp_path: Path) -> None:
    path = notebook(tmp_path, ["a = 20", "print(a + 1)", "a * 2"])
    run = run_cli("-j", "run", path, "--all")
    assert run.exit_code == 0, run.stdout
    document = run.json()
    assert (document["status"], document["operation"], document["mode"]) == ("ok", "run", "all")
    assert document["ok"] is True
    result = document["run"]
    assert result["operation"] == "execute_cells" and result["kernel_started"] is True
    assert [c["status"] for c in result["cells"]] == ["ok", "ok", "ok"]
    assert result["cells"][1]["outputs"]["text"].endswith("\n21\n")
    overview = document["overview"]  # read after the run's kernel stopped: none is live
    assert {c["status"] for c in overview["cells"]} == {"never_run"}
    assert "epoch" not in overview["kernel"]  # null: left out of a -j run answer
    saved = nbformat.read(path, as_version=4)
    nbformat.validate(saved)
    assert [c.execution_count for c in saved.cells] == [1, 2, 3]
    assert process_gone(result["kernel"]["pid"])


@pytest.mark.kernel
def test_a_failing_cell_exits_1_with_the_document_naming_it(tmp_path: Path) -> None:
    path = notebook(tmp_path, ["x = 1", "x / 0", "y = 2"])
    first, failing, last = names(path)
    run = run_cli("-j", "run", path)
    assert run.exit_code == 1
    document = run.json()
    assert document["status"] == "ok" and document["mode"] == "stale" and not document["ok"]
    assert document["run"]["operation"] == "run_stale"
    assert document["run"]["stopped_at"] == failing
    assert document["run"]["still_stale"] == [failing, last]
    statuses = {c["name"]: c["status"] for c in document["run"]["cells"]}
    assert statuses == {first: "ok", failing: "error", last: "skipped"}


@pytest.mark.kernel
def test_the_text_summary_groups_the_cells_not_fresh_by_the_overviews_status(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["x = 1", "1 / 0", "y = 2"])
    first, failing, last = names(path)
    run = run_cli("run", path, "--keep")
    try:
        assert run.exit_code == 1
        lines = run.stdout.splitlines()
        assert f"not fresh (2): error `{failing}`; never_run `{last}`" in lines
        overview = run_cli("-j", "notebook", "overview", path).json()
        shown = {c["name"]: c["status"] for c in overview["cells"]}
        assert shown == {first: "fresh", failing: "error", last: "never_run"}
    finally:
        run_cli("kernel", "stop", path)


@pytest.mark.kernel
def test_a_failing_cell_has_an_auto_name_that_is_not_a_word_and_is_quoted_in_lists(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["1 / 0"])
    (failing,) = names(path)
    assert failing != "code" and failing.startswith("expr-")
    run = run_cli("-j", "run", path, "--keep")
    try:
        assert run.json()["run"]["still_stale"] == [failing]
        text = run_cli("run", path).stdout.splitlines()
        assert f"not fresh (1): error `{failing}`" in text
    finally:
        run_cli("kernel", "stop", path)


@pytest.mark.kernel
def test_a_dying_kernel_exits_1_with_kernel_died(tmp_path: Path) -> None:
    path = notebook(tmp_path, ["import os\nos._exit(3)"])
    run = run_cli("-j", "run", path, "--all")
    assert run.exit_code == 1
    error = run.json()["run"]["error"]
    assert error["code"] == ErrorCode.KERNEL_DIED and error["details"]["cell"] == names(path)[0]


@pytest.mark.kernel
def test_what_a_dying_cell_printed_is_shown_and_saved(tmp_path: Path) -> None:
    # the sleep lets ipykernel's I/O thread send "bye" before the process ends (os._exit
    # right after a print can lose it inside the kernel, before any client sees it)
    dying = "import os, time\nprint('bye', flush=True)\ntime.sleep(1)\nos._exit(1)"
    path = notebook(tmp_path, ["x = 1", dying, "y = 2"])
    first, dies, last = names(path)
    run = run_cli("-j", "run", path, "--all")
    assert run.exit_code == 1
    document = run.json()
    cells = {c["name"]: c for c in document["run"]["cells"]}
    assert [cells[n]["status"] for n in (first, dies, last)] == ["ok", "died", "skipped"]
    assert document["run"]["error"]["code"] == ErrorCode.KERNEL_DIED
    assert cells[dies]["outputs"]["text"].endswith("bye\n")
    assert cells[dies]["written"] is True
    saved = nbformat.read(path, as_version=4)
    assert saved.cells[1].outputs == [nbformat.v4.new_output("stream", name="stdout", text="bye\n")]
    assert saved.cells[1].execution_count == 2
    # statuses describe the live kernel; it died, so nothing ran on a live kernel
    statuses = {c["name"]: c["status"] for c in document["overview"]["cells"]}
    assert statuses == {first: "never_run", dies: "never_run", last: "never_run"}
    text = run_cli("run", path, "--cell", dies)
    assert text.exit_code == 1
    assert "bye" in text.stdout.split("died", 1)[1].split("\n\n", 1)[0]


@pytest.mark.kernel
def test_run_text_writes_output_cut_hints_as_j_cli_commands(tmp_path: Path) -> None:
    import shlex

    path = notebook(tmp_path, ["for i in range(20000):\n    print(f'line {i}')"])
    run = run_cli("run", path, "--all")
    assert run.exit_code == 0
    assert "read_notebook_output" not in run.stdout
    hint = next(line for line in run.stdout.splitlines() if "j-cli notebook output" in line)
    command = shlex.split(hint[hint.index("j-cli notebook output") :].rstrip("]… "))
    assert command[:4] == ["j-cli", "notebook", "output", str(path)]
    exact = run_cli("-j", *command[1:]).json()
    offset = int(command[command.index("--offset") + 1])
    limit = int(command[command.index("--limit") + 1])
    printed = "".join(f"line {i}\n" for i in range(20000))
    assert exact["status"] == "ok"
    assert offset > 0
    assert exact["stream"]["data"] == printed[offset : offset + limit]
    as_json = run_cli("-j", "run", path, "--all").json()  # the JSON form keeps the tool call
    assert (
        "read_notebook_output cell_index=0 output_index=0"
        in as_json["run"]["cells"][0]["outputs"]["text"]
    )


@pytest.mark.kernel
def test_the_overview_closing_a_run_is_one_page_naming_the_next_as_a_j_cli_command(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["x = 1"])
    document = json.loads(path.read_text(encoding="utf-8"))
    document["cells"] += [
        {"cell_type": "markdown", "id": f"m{i}", "metadata": {}, "source": f"note {i}"}
        for i in range(120)
    ]
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    doc = run_cli("-j", "run", path).json()
    overview = doc["overview"]
    assert (overview["cell_count"], len(overview["cells"])) == (121, 100)
    assert overview["status_summary"] == {"never_run": 1}  # the run's kernel is gone
    next_page = shlex.join(["j-cli", "notebook", "overview", str(path), "--start", "100"])
    assert overview["next_call"] == next_page.replace("j-cli ", "j-cli -j ", 1)
    following = run_cli(*shlex.split(overview["next_call"])[1:]).json()
    assert (compact(following["kernel"]), following["status_summary"]) == (
        overview["kernel"],
        overview["status_summary"],
    )  # the next page judges the statuses as the first one did
    text = run_cli("run", path)
    assert text.exit_code == 0
    assert f"{path}: 121 cells (1 never_run)" in text.stdout
    assert f"… 21 more cells: {next_page}" in text.stdout.splitlines()


@pytest.mark.kernel
def test_a_run_on_a_kept_kernel_closes_with_the_overview_the_next_page_continues(
    tmp_path: Path,
) -> None:
    path = notebook(tmp_path, ["x = 1", *[f"y{i} = {i}" for i in range(104)]])
    doc = run_cli("-j", "run", path, "--keep").json()
    try:
        overview = doc["overview"]
        assert overview["status_summary"] == {"fresh": 105}
        following = run_cli(*shlex.split(overview["next_call"])[1:]).json()
        assert {c["status"] for c in following["cells"]} == {"fresh"}
        assert following["kernel"]["epoch"] == overview["kernel"]["epoch"] is not None
    finally:
        run_cli("kernel", "stop", path)


@pytest.mark.kernel
def test_run_cell_only_runs_only_the_named_cells_in_order(tmp_path: Path) -> None:
    path = notebook(tmp_path, ["v = 'a'", "v += 'b'", "print(v)"])
    first, second, third = names(path)
    run = run_cli("-j", "run", path, "--cell", first, "--cell", third, "--only", "--timeout", "30")
    assert run.exit_code == 0
    assert run.json()["run"]["not_fresh_parents"] == [second]
    cells = run.json()["run"]["cells"]
    assert [c["name"] for c in cells] == [first, third]
    assert cells[1]["outputs"]["text"].endswith("\na\n")
    saved = nbformat.read(path, as_version=4)
    assert [c.execution_count for c in saved.cells] == [1, None, 2]


@pytest.mark.kernel
def test_the_bundled_example_runs_end_to_end_in_text_mode(tmp_path: Path) -> None:
    path = tmp_path / EXAMPLE.name
    shutil.copyfile(EXAMPLE, path)
    run = run_cli("run", path)
    assert run.exit_code == 0, run.stdout[-2000:] + run.stderr[-2000:]
    code_cells = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code_cells)
    assert f"ran {len(code_cells)} cells on a new kernel" in run.stdout
    assert f"({len(code_cells)} never_run)" in run.stdout  # its kernel stopped at the end
    assert "no kernel is live now" in run.stdout
    assert "image/png" in run.stdout and "[table: 3 rows x 6 columns" in run.stdout
    assert len(run.stdout) < 20_000  # condensed: the notebook itself is larger
    assert len(run.stdout) < path.stat().st_size
    nbformat.validate(nbformat.read(path, as_version=4))


def test_run_refuses_two_modes_and_reports_missing_things(tmp_path: Path) -> None:
    path = notebook(tmp_path, ["a = 1"])
    both = run_cli("-j", "run", path, "--all", "--cell", "a")
    assert both.exit_code == 2 and both.json()["code"] == ErrorCode.USAGE_ERROR
    missing = run_cli("-j", "run", tmp_path / "nope.ipynb")
    assert missing.exit_code == 1 and missing.json()["code"] == ErrorCode.FILE_NOT_FOUND
    unknown = run_cli("-j", "run", path, "--cell", "no-such-cell")
    assert unknown.exit_code == 1 and unknown.json()["code"] == ErrorCode.CELL_NOT_FOUND
    timeout = run_cli("-j", "run", path, "--timeout", "0")
    assert timeout.exit_code == 2 and timeout.json()["code"] == ErrorCode.USAGE_ERROR


@pytest.mark.kernel
def test_a_timeout_that_kills_the_kernel_says_so_in_text_and_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("jupyter_jcli.kernels._request.SETTLE_TIMEOUT", 1.5)
    ignores = (
        "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "print('ignoring', flush=True)\ntime.sleep(600)"
    )
    path = notebook(tmp_path, ["x = 1", ignores])
    first, stuck = names(path)
    run = run_cli("-j", "run", path, "--all", "--timeout", "1")
    assert run.exit_code == 1
    result = run.json()["run"]
    assert result["error"]["code"] == ErrorCode.KERNEL_KILLED
    assert result["error"]["details"]["cell"] == stuck
    assert result["cells"][1]["status"] == "timeout" and result["cells"][1]["kernel_killed"]
    assert result["still_stale"] == [first, stuck]
    text = run_cli("run", path, "--cell", stuck, "--timeout", "1")
    assert text.exit_code == 1
    header = next(line for line in text.stdout.splitlines() if line.startswith(f"[1] `{stuck}`"))
    assert "timeout, kernel killed" in header
    assert "error KERNEL_KILLED" in text.stdout


@pytest.mark.kernel
def test_a_cell_removed_while_it_runs_is_reported_not_saved(tmp_path: Path) -> None:
    def removing(name: str) -> Path:  # the cell plays JupyterLab: it deletes itself
        remover = (
            f"import json\nnb = json.load(open('{name}.ipynb'))\n"
            "nb['cells'] = [c for c in nb['cells'] if 'REMOVE-ME' not in ''.join(c['source'])]\n"
            f"json.dump(nb, open('{name}.ipynb', 'w'))  # REMOVE-ME"
        )
        return notebook(tmp_path, [remover, "y = 2"], name)

    text = run_cli("run", removing("text"), "--all")
    assert text.exit_code == 0
    assert "outputs not saved: the cell was removed while it ran" in text.stdout
    run = run_cli("-j", "run", removing("json"), "--all").json()["run"]
    assert [c.get("not_written_reason") for c in run["cells"]] == ["cell_removed", None]
    assert [c.get("written", False) for c in run["cells"]] == [False, True]


@pytest.mark.kernel
def test_kernel_overrides_a_kernelspec_that_is_not_installed(tmp_path: Path) -> None:
    path = notebook(tmp_path, ["1 + 1"])
    document = json.loads(path.read_text(encoding="utf-8"))
    document["metadata"]["kernelspec"] = {"name": "python2", "display_name": "Python 2"}
    path.write_text(json.dumps(document), encoding="utf-8")
    refused = run_cli("-j", "run", path)
    assert refused.exit_code == 1
    error = refused.json()
    assert error["code"] == ErrorCode.KERNELSPEC_NOT_FOUND
    assert error["details"]["kernelspec"] == "python2"
    assert "python3" in error["details"]["installed"]
    assert "--kernel" in error["details"]["hint"]
    run = run_cli("-j", "run", path, "--kernel", "python3")
    assert run.exit_code == 0
    assert run.json()["run"]["kernel"]["kernelspec_name"] == "python3"
    assert nbformat.read(path, as_version=4).metadata.kernelspec.name == "python2"


@pytest.mark.kernel
def test_a_stopped_runs_text_summary_counts_the_cells_that_ran_of_all(tmp_path: Path) -> None:
    from jcli_helpers import never_run_notebook

    path = never_run_notebook(tmp_path, ["x = 1", "1 / 0", "y = 2", "z = 3"])
    run = run_cli("run", path)
    assert run.exit_code == 1
    (summary,) = [line for line in run.stdout.splitlines() if line.startswith("ran ")]
    assert summary.startswith("ran 2 of 4 cells on a new kernel")
    assert summary.endswith(": 1 ok, 1 error, 2 skipped")
