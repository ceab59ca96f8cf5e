"""What inline code run on the kernel overwrote: ``code_writes`` (table of cases, after the
rules of ``analysis._overwrites``), ``overwritten_cells`` and ``fresh_cells`` with the
:class:`StateChange` records a run log keeps."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from jupyter_jcli.analysis import (
    CellInput,
    ExecutionRecord,
    StateChange,
    build_graph,
    code_writes,
    fresh_cells,
    overwriting_changes,
    overwritten_cells,
)

NOTEBOOK = [
    ("load", "a = 1"),
    ("derive", "b = a + 1"),
    ("show", "print(b)"),
    ("other", "c = 10"),
    ("counter", "steps = 0\ndef tick():\n    global steps\n    steps += 1"),
    ("report", "print(steps)"),
    ("uses-later", "try:\n    later\nexcept NameError:\n    later = 0"),
]


def graph():  # type: ignore[no-untyped-def]
    return build_graph([CellInput(key, "code", source) for key, source in NOTEBOOK])


@dataclass(frozen=True)
class Case:
    name: str
    code: str
    names: tuple[str, ...] | None
    stale: tuple[str, ...]
    language: str | None = "python"


EVERY = tuple(key for key, _ in NOTEBOOK)
CASES = [
    Case("a_rebinding_stales_its_writer_and_dependents", "b = -1", ("b",), ("derive", "show")),
    Case("an_attribute_read_stales_nothing", "b.real", (), ()),
    Case("a_print_stales_nothing", "print(b, a)", (), ()),
    Case("a_mutation_stales_the_writer", "b.append(1)", ("b",), ("derive", "show")),
    Case("a_del_stales_the_writer_and_all_below", "del a", ("a",), ("load", "derive", "show")),
    Case(
        "a_notebook_function_with_a_global_write_counts",
        "tick()",
        ("steps",),
        ("counter", "report"),
    ),
    Case(
        "a_name_no_cell_writes_stales_its_unresolved_reader",
        "later = 5",
        ("later",),
        ("uses-later",),
    ),
    Case("a_new_name_nobody_reads_stales_nothing", "fresh_name = 1", ("fresh_name",), ()),
    Case(
        "a_mutating_call_inside_a_comprehension_stales_the_writer",
        "[b.append(i) for i in range(2)]",
        ("b",),
        ("derive", "show"),
    ),
    Case(
        "a_mutating_call_whose_value_is_used_stales_the_writer",
        "_ = b.append(1) or 0",
        ("_", "b"),
        ("derive", "show"),
    ),
    Case(
        "a_mutation_through_an_alias_stales_the_aliased_writer",
        "x = b\nx.append(9)",
        ("b", "x"),
        ("derive", "show"),
    ),
    Case(
        "a_subscript_store_through_an_alias_stales_the_aliased_writer",
        "x = b\nx[0] = 9",
        ("b", "x"),
        ("derive", "show"),
    ),
    Case(
        "a_mutating_bound_method_passed_along_stales_the_writer",
        "list(map(b.append, [5]))",
        ("b",),
        ("derive", "show"),
    ),
    Case(
        "an_except_as_name_is_unbound_after_the_handler",
        "try:\n    1/0\nexcept Exception as c:\n    pass",
        ("c",),
        ("other",),
    ),
    Case("sys_modules_is_opaque", "import sys\nsys.modules['__main__'].b = 0", None, EVERY),
    Case("importing_main_is_opaque", "import __main__\n__main__.b = 1", None, EVERY),
    Case("from_sys_import_modules_is_opaque", "from sys import modules", None, EVERY),
    Case("len_and_sorted_stale_nothing", "len(b)\nsorted(b)\nb.real", (), ()),
    Case(
        "a_module_function_named_like_a_method_stales_only_the_module",
        "import numpy as np\nnp.append(b, 1)",
        ("np",),
        (),
    ),
    Case("exec_is_opaque", "exec('b = 2')", None, EVERY),
    Case("globals_is_opaque", "g = globals()\ng['b'] = 2", None, EVERY),
    Case("a_star_import_is_opaque", "from os.path import *", None, EVERY),
    Case("a_magic_the_analyzer_does_not_model_is_opaque", "%load_ext autoreload", None, EVERY),
    Case("reset_is_opaque", "%reset -f", None, EVERY),
    Case("time_writes_what_its_code_writes", "%time b = 2", ("b",), ("derive", "show")),
    Case("a_time_cell_writes_what_its_body_writes", "%%time\nb = 2\n", ("b",), ("derive", "show")),
    Case("prun_writes_what_its_code_writes", "%prun -q b = 2", ("b",), ("derive", "show")),
    Case(
        "a_capture_cell_writes_its_target_and_body",
        "%%capture out\nc = 1",
        ("c", "out"),
        ("other",),
    ),
    Case("timeit_binds_nothing", "%timeit -n1 -r1 b = 2", (), ()),
    Case(
        "timeit_mutating_a_value_stales_its_writer",
        "%timeit b.append(1)",
        ("b",),
        ("derive", "show"),
    ),
    Case(
        "a_timeit_cell_alias_mutation_stales_the_aliased_writer",
        "%%timeit x = b\nx.append(1)",
        ("b", "x"),
        ("derive", "show"),
    ),
    Case("time_on_a_read_stales_nothing", "%time print(b)", (), ()),
    Case("matplotlib_stales_nothing", "%matplotlib inline", (), ()),
    Case("time_around_exec_is_opaque", "%time exec('b = 2')", None, EVERY),
    Case("time_around_main_is_opaque", "%time import __main__", None, EVERY),
    Case("a_shell_escape_binds_no_python_name", "!echo hi", (), ()),
    Case("a_captured_shell_escape_binds_its_target", "b = !echo hi", ("b",), ("derive", "show")),
    Case("a_cell_magic_is_opaque", "%%bash\necho hi", None, EVERY),
    Case("unparseable_code_is_opaque", "b = (", None, EVERY),
    Case("a_non_python_kernel_is_opaque", "print(b)", None, EVERY, language="R"),
    Case("an_unknown_language_is_opaque", "print(b)", None, EVERY, language=None),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_inline_code_overwrites_what_the_rules_say(case: Case) -> None:
    g = graph()
    writes = code_writes(case.code, g, language=case.language)
    assert writes.names == case.names
    assert (writes.opaque is None) == (case.names is not None)
    assert tuple(overwritten_cells(g, writes.names)) == case.stale


def ran_everything(epoch: str) -> list[ExecutionRecord]:
    g = graph()
    return [
        ExecutionRecord(
            node.key, f"rev-{node.key}", epoch, seq, [g.cells[p].key for p in node.parents]
        )
        for seq, node in enumerate(g.cells, start=1)
    ]


REVS = {key: f"rev-{key}" for key, _ in NOTEBOOK}


def test_a_state_change_stales_only_the_cells_that_ran_before_it() -> None:
    g = graph()
    runs = ran_everything("e1")
    change = StateChange(seq=100, epoch="e1", names=("b",), cause="exec b = -1")
    status = fresh_cells(g, runs, "e1", REVS, [change])
    assert [k for k, s in status.items() if s != "fresh"] == ["derive", "show"]
    assert overwriting_changes(g, runs, "e1", [change]) == {"derive": change, "show": change}
    rerun = [*runs, ExecutionRecord("derive", "rev-derive", "e1", 101, ["load"])]
    rerun.append(ExecutionRecord("show", "rev-show", "e1", 102, ["derive"]))
    assert set(fresh_cells(g, rerun, "e1", REVS, [change]).values()) == {"fresh"}


def test_a_state_change_of_another_epoch_counts_for_nothing() -> None:
    g = graph()
    change = StateChange(seq=100, epoch="old", names=None, cause="exec")
    status = fresh_cells(g, ran_everything("e1"), "e1", REVS, [change])
    assert set(status.values()) == {"fresh"}


def test_the_dependents_of_an_overwritten_cell_that_ran_again_stay_stale() -> None:
    g = graph()
    runs = ran_everything("e1")
    change = StateChange(seq=100, epoch="e1", names=("b",), cause="exec b = -1")
    status = fresh_cells(g, [*runs, ExecutionRecord("show", "rev-show", "e1", 101, ["derive"])],
                         "e1", REVS, [change])  # fmt: skip
    assert status["derive"] == "stale" and status["show"] == "stale"


MAGIC_CODES = [
    "%time b = 2",
    "%%time\nb = a * 2\nc = b",
    "%prun tick()",
    "%%capture cap\nb.append(1)",
    "%timeit b.append(1)",
    "x = %time a + 1",
]


@pytest.mark.parametrize("code", MAGIC_CODES)
def test_a_magic_that_runs_code_inline_stales_what_it_would_as_a_cell_edit(code: str) -> None:
    g = graph()
    writes = code_writes(code, g)
    assert writes.names is not None
    as_cell = build_graph(
        [*(CellInput(k, "code", s) for k, s in NOTEBOOK), CellInput("new", "code", code)]
    )
    assert set(as_cell.cells[-1].writes) <= set(writes.names)
