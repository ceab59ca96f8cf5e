"""The Jupyter Server ledger's run log in its own append-only file (``kernels._log_file``, as
the registry's; the size bounds of both are in ``test_registry_run_file.py``): what cannot be
trusted (a torn line, an earlier epoch's runs, a ledger an earlier version wrote) reads as not
run, and the file goes with the entry. The last test runs ``j-cli`` on a real Jupyter Server
(marker ``server``)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path

import pytest
from test_registry_run_file import joined_ledger, run_record
from test_server_cli_trial import jcli

from jupyter_jcli.kernels import ServerLedger, SessionFacts
from server_helpers import RunningServer, write_notebook

URL = "http://127.0.0.1:8888/"


def _keys(ledger: ServerLedger, notebook: Path) -> list[str]:
    return [str(run["key"]) for run in ledger.executions(notebook)]


def test_a_torn_last_line_in_the_ledgers_run_file_reads_as_not_run(tmp_path: Path) -> None:
    ledger, notebook = joined_ledger(tmp_path)
    ledger.record_execution(notebook, run_record("a"))
    with ledger.path(notebook, ".runs").open("ab") as file:
        file.write(b'{"epoch":"e1","key":"torn","ok":tr')
    assert _keys(ledger, notebook) == ["a"]
    assert ledger.record_execution(notebook, run_record("c")) > 0  # not glued to the torn line
    assert _keys(ledger, notebook) == ["a", "c"]


def test_a_restart_or_a_new_epoch_never_brings_an_earlier_epochs_runs_back(
    tmp_path: Path,
) -> None:
    ledger, notebook = joined_ledger(tmp_path)
    ledger.record_execution(notebook, run_record("a"))
    ledger.record_execution(notebook, run_record("b"))
    ledger.start_afresh(notebook)  # the kernel restarted
    assert ledger.executions(notebook) == []
    ledger.record_execution(
        notebook, run_record("c")
    )  # a late record of the old epoch: only itself
    assert _keys(ledger, notebook) == ["c"]
    ledger.record_execution(notebook, run_record("d", epoch="e2"))  # the kernel's newer epoch
    assert _keys(ledger, notebook) == ["d"]
    ledger.record_execution(notebook, run_record("e"))  # e1 again: c is not back
    assert _keys(ledger, notebook) == ["e"]


def test_joining_a_kernel_untrusted_empties_the_run_file_and_a_trusted_join_keeps_it(
    tmp_path: Path,
) -> None:
    ledger, notebook = joined_ledger(tmp_path)
    ledger.record_execution(notebook, run_record("a"))
    ledger.leave(notebook, "k1", "e1", "t1 p1")
    assert ledger.adopt(notebook, "k1", "t1 p1", "e9") == "e1"  # as we left it
    assert _keys(ledger, notebook) == ["a"]
    ledger.leave(notebook, "k1", "e1", "t1 p1")
    assert ledger.adopt(notebook, "k1", "t2 p1", "e1") == "e1"  # ran since: afresh
    assert ledger.executions(notebook) == []  # even on the same epoch id
    assert not ledger.path(notebook, ".runs").exists()


def test_forgetting_the_ledger_entry_removes_its_run_file(tmp_path: Path) -> None:
    ledger, notebook = joined_ledger(tmp_path)
    ledger.record_execution(notebook, run_record("a"))
    assert ledger.path(notebook, ".runs").exists()
    ledger.forget(notebook, "k0")  # a stop of an older kernel of the notebook
    assert _keys(ledger, notebook) == ["a"]
    ledger.forget(notebook, "k1")
    assert not ledger.path(notebook).exists()
    assert not ledger.path(notebook, ".runs").exists()
    assert ledger.executions(notebook) == []
    assert ledger.record_execution(notebook, run_record("b")) == -1  # no kernel of ours joined


def test_forgetting_the_ledger_entry_leaves_none_of_its_files(tmp_path: Path) -> None:
    """The entry's lock file goes with it, as a registry entry's does (the registry's
    locking), so stopped kernels leave nothing behind in the ledger folder."""
    ledger, notebook = joined_ledger(tmp_path)
    ledger.record_execution(notebook, run_record("a"))
    ledger.forget(notebook, "k1")
    assert sorted(ledger.root.iterdir()) == []


def test_a_ledger_an_earlier_version_wrote_reads_its_cells_as_not_run(tmp_path: Path) -> None:
    ledger = ServerLedger(URL, tmp_path / "ledger")
    notebook = tmp_path / "nb.ipynb"
    ledger.root.mkdir(parents=True)
    legacy = {
        "kernel_id": "k1", "epoch": "e1", "seq": 2, "changes": [], "witness": "t1 p1",
        "interrupt": None, "runs": [{**run_record("a"), "seq": 1}, {**run_record("b"), "seq": 2}],
    }  # fmt: skip
    ledger.path(notebook).write_text(json.dumps(legacy))
    assert ledger.read(notebook) is not None  # the kernel is still known, its runs are not
    assert ledger.executions(notebook) == []
    assert ledger.adopt(notebook, "k1", "t1 p1", "e9") == "e1"
    assert ledger.record_execution(notebook, run_record("c")) == 3
    assert _keys(ledger, notebook) == ["c"]
    assert "runs" not in json.loads(ledger.path(notebook).read_bytes())


def test_a_ledger_the_previous_version_wrote_is_found_and_read_the_same(tmp_path: Path) -> None:
    """The files as the version before the shared records store wrote them: the key a digest
    of ``URL \\0 path``, the entry with ``json.dumps``' default separators, the run file."""
    ledger = ServerLedger(URL, tmp_path / "ledger")
    notebook = (tmp_path / "nb.ipynb").resolve()
    key = hashlib.sha256(f"{URL}\0{notebook}".encode()).hexdigest()[:24]
    ledger.root.mkdir(parents=True)
    entry = {
        "kernel_id": "k1", "epoch": "e1", "seq": 2, "runs_compacted": 0, "witness": "t1 p1",
        "changes": [{"seq": 2, "epoch": "e1", "names": ["x"], "cause": "inline code"}],
        "interrupt": {"epoch": "e1", "who": "j-cli pid 5", "command": "j-cli", "reason":
                      "kernel_interrupted", "at": 10.0},
    }  # fmt: skip
    (ledger.root / f"{key}.json").write_text(json.dumps(entry, sort_keys=True))
    (ledger.root / f"{key}.runs").write_text(json.dumps({**run_record("a"), "seq": 1}) + "\n")
    stored = ledger.read(notebook)
    assert stored is not None and (stored.kernel_id, stored.epoch, stored.seq) == ("k1", "e1", 2)
    assert [c["cause"] for c in stored.changes] == ["inline code"]
    assert _keys(ledger, notebook) == ["a"]
    asked = ledger.interrupt_since(notebook, "e1", 0.0)
    assert asked is not None and asked["who"] == "j-cli pid 5"
    assert ledger.adopt(notebook, "k1", "t1 p1", "e9") == "e1"  # the witness as we left it
    assert ledger.record_execution(notebook, run_record("b")) == 3
    assert _keys(ledger, notebook) == ["a", "b"]
    facts = ledger.facts(notebook, "k1", None)  # who created it: not recorded, so none of ours
    assert (facts.keep, facts.started_command) == (True, None)


def test_who_created_a_session_outlasts_an_adopt_that_starts_afresh_and_reads_both_ways(
    tmp_path: Path,
) -> None:
    """``created`` notes the session's keep and command; an adopt that trusts nothing (no
    witness yet) starts the runs afresh but keeps them for the same kernel, not another's; the
    stored entry still has every field the previous version reads (it ignores the new ones)."""
    ledger = ServerLedger(URL, tmp_path / "ledger")
    notebook = (tmp_path / "nb.ipynb").resolve()
    ledger.created(notebook, "k1", keep=False)
    made = ledger.facts(notebook, "k1", None)
    assert made.keep is False and made.started_command  # this process's command line
    assert (made.epoch, made.runs) == (None, 0)
    assert ledger.adopt(notebook, "k1", None, "e1") == "e1"
    ledger.record_execution(notebook, run_record("a"))
    ledger.leave(notebook, "k1", "e1", "t1 p1")
    assert ledger.facts(notebook, "k1", "t1") == dataclasses.replace(made, epoch="e1", runs=1)
    assert ledger.facts(notebook, "k1", "t2").epoch is None  # touched since: not trusted
    assert ledger.facts(notebook, "k2", "t1") == SessionFacts()  # another kernel's entry
    stored = json.loads(ledger.path(notebook).read_bytes())
    previous = {"kernel_id", "epoch", "seq", "runs_compacted", "changes", "witness", "interrupt"}
    assert previous <= set(stored) and (stored["keep"], stored["seq"]) == (False, 1)
    assert ledger.adopt(notebook, "k2", None, "e2") == "e2"  # another kernel: none of ours
    assert ledger.facts(notebook, "k2", None) == SessionFacts()


def test_a_notebook_whose_name_is_not_utf8_has_a_ledger_entry(tmp_path: Path) -> None:
    """Its key digests the name as the file system spells it (``os.fsencode``), as the
    registry's does, where ``str.encode`` refused the name."""
    ledger = ServerLedger(URL, tmp_path / "ledger")
    notebook = tmp_path / os.fsdecode(b"nb-\xff.ipynb")
    assert ledger.adopt(notebook, "k1", None, "e1") == "e1"
    assert ledger.record_execution(notebook, run_record("a")) == 1
    assert _keys(ledger, notebook) == ["a"]


@pytest.mark.server
def test_a_server_kernels_runs_go_to_the_run_file_emptied_at_restart_and_removed_at_stop(
    jupyter_server: RunningServer, tmp_path: Path
) -> None:
    cells = 60
    sources = ["x0 = 0", *(f"x{i} = x{i - 1} + 1" for i in range(1, cells))]
    path = write_notebook(tmp_path, sources, "chain")
    assert jcli(jupyter_server, "kernel", "start", path)[0] == 0
    ledger = ServerLedger(jupyter_server.url)
    try:
        status, first = jcli(jupyter_server, "run", path, "--stale")
        assert (status, first["run"].get("ran_count", 0)) == (0, cells)
        entry = ledger.path(path.resolve())
        assert "runs" not in json.loads(entry.read_bytes())
        assert len(ledger.path(path.resolve(), ".runs").read_bytes().splitlines()) == cells
        status, again = jcli(jupyter_server, "run", path, "--stale")
        assert (status, again["run"].get("ran_count", 0)) == (0, 0)  # fresh through the run file
        assert jcli(jupyter_server, "kernel", "restart", path)[0] == 0
        status, after = jcli(jupyter_server, "run", path, "--stale")
        assert (status, after["run"].get("ran_count", 0)) == (0, cells)
        assert len(ledger.path(path.resolve(), ".runs").read_bytes().splitlines()) == cells
    finally:
        assert jcli(jupyter_server, "kernel", "stop", path)[0] == 0
    assert not entry.exists()
    assert not ledger.path(path.resolve(), ".runs").exists()


def test_a_busy_record_a_killed_process_left_keeps_the_runs_for_a_join_of_that_kernel_process(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    ledger = ServerLedger(URL, tmp_path / "ledger")
    notebook = tmp_path / "nb.ipynb"
    assert ledger.adopt(notebook, "k1", None, "e1", "p1") == "e1"
    ledger.record_execution(notebook, run_record("a"))
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    busy = {"who": "j-cli pid 1", "cell": "b", "since": 0.0, "pid": int(ended.stdout)}
    ledger.set_busy(notebook, "e1", busy)  # as that process recorded it, then was killed
    assert ledger.running(notebook, "e1") is not None
    assert ledger.adopt(notebook, "k1", None, "e9", "p1") == "e1"  # its code may still run
    entry = ledger.read(notebook)
    assert _keys(ledger, notebook) == ["a"] and entry is not None and entry.busy == busy
    assert ledger.adopt(notebook, "k1", None, "e9", "p2") == "e9"  # restarted since: afresh
    assert ledger.executions(notebook) == [] and ledger.running(notebook, "e9") is None
