"""Freshness against a recorded run log, and the re-run plan."""

from __future__ import annotations

import pytest

from jupyter_jcli.analysis import (
    CellInput,
    ExecutionRecord,
    NotebookGraph,
    build_graph,
    cell_freshness,
    fresh_cells,
    rerun_plan,
)
from jupyter_jcli.errors import AnalysisError, ErrorCode

LIVE = "epoch-live"


class Log:
    """A run log written the way the kernel layer will: one record per execution."""

    def __init__(self, graph: NotebookGraph) -> None:
        self.graph = graph
        self.records: list[ExecutionRecord] = []

    def run(self, key: str, rev: str = "r1", *, epoch: str = LIVE, ok: bool = True) -> None:
        parents = self.graph.parents(key)
        seq = len(self.records) + 1
        self.records.append(ExecutionRecord(key, rev, epoch, seq, tuple(parents), ok))


def _graph() -> NotebookGraph:
    return build_graph(
        [
            CellInput("load", "code", "data = [3, 1, 2]"),
            CellInput("note", "markdown", "# sorted"),
            CellInput("total", "code", "t = sum(data)"),
            CellInput("report", "code", "print(t)"),
            CellInput("other", "code", "z = 1"),
        ]
    )


REVS = {"load": "r1", "total": "r1", "report": "r1", "other": "r1"}


def _ran_in_order(graph: NotebookGraph) -> Log:
    log = Log(graph)
    for key in ("load", "total", "report", "other"):
        log.run(key)
    return log


def test_without_a_live_epoch_nothing_is_fresh() -> None:
    graph = _graph()
    log = _ran_in_order(graph)
    status = fresh_cells(graph, log.records, None, REVS)
    assert status == dict.fromkeys(("load", "total", "report", "other"), "never_run")


def test_cells_run_in_order_on_the_live_epoch_are_fresh() -> None:
    graph = _graph()
    status = fresh_cells(graph, _ran_in_order(graph).records, LIVE, REVS)
    assert status == dict.fromkeys(("load", "total", "report", "other"), "fresh")
    assert "note" not in status


def test_runs_on_another_epoch_do_not_count() -> None:
    graph = _graph()
    log = Log(graph)
    log.run("load", epoch="old")
    log.run("total")
    status = fresh_cells(graph, log.records, LIVE, REVS)
    assert status["load"] == "never_run"
    assert status["total"] == "stale"


def test_a_parent_that_ran_again_makes_its_descendants_stale() -> None:
    graph = _graph()
    log = _ran_in_order(graph)
    log.run("load")
    status = fresh_cells(graph, log.records, LIVE, REVS)
    assert status == {"load": "fresh", "total": "stale", "report": "stale", "other": "fresh"}


def test_an_edited_cell_and_its_descendants_are_stale() -> None:
    graph = _graph()
    status = fresh_cells(graph, _ran_in_order(graph).records, LIVE, {**REVS, "total": "r2"})
    assert status == {"load": "fresh", "total": "stale", "report": "stale", "other": "fresh"}


def test_a_failed_run_is_an_error_and_its_children_are_not_fresh() -> None:
    graph = _graph()
    log = _ran_in_order(graph)
    log.run("total", ok=False)
    status = fresh_cells(graph, log.records, LIVE, REVS)
    assert status["total"] == "error"
    assert status["report"] == "stale"
    # edited after the failure: it is stale, not in error
    assert fresh_cells(graph, log.records, LIVE, {**REVS, "total": "r2"})["total"] == "stale"


def test_a_child_that_ran_before_its_parent_is_stale() -> None:
    graph = _graph()
    log = Log(graph)
    log.run("total")
    log.run("load")
    assert fresh_cells(graph, log.records, LIVE, REVS)["total"] == "stale"


def test_a_changed_parent_set_makes_a_cell_stale() -> None:
    with_more = build_graph(
        [
            CellInput("load", "code", "data = [3, 1, 2]"),
            CellInput("more", "code", "data = [9]"),
            CellInput("total", "code", "t = sum(data)"),
        ]
    )
    log = Log(with_more)
    for key in ("load", "more", "total"):
        log.run(key)
    # "more" is deleted: every remaining rev and run order is unchanged, but "total" ran
    # with the data of "more", which the kernel still holds
    without = build_graph(
        [CellInput("load", "code", "data = [3, 1, 2]"), CellInput("total", "code", "t = sum(data)")]
    )
    status = fresh_cells(without, log.records, LIVE, {"load": "r1", "total": "r1"})
    assert status == {"load": "fresh", "total": "stale"}
    assert fresh_cells(
        with_more, log.records, LIVE, dict.fromkeys(("load", "more", "total"), "r1")
    ) == dict.fromkeys(("load", "more", "total"), "fresh")


def test_a_missing_rev_is_refused() -> None:
    graph = _graph()
    with pytest.raises(AnalysisError) as exc:
        fresh_cells(graph, [], LIVE, {"load": "r1"})
    assert exc.value.code == ErrorCode.CELL_NOT_FOUND


def test_rerun_plan_runs_every_non_fresh_cell_in_document_order() -> None:
    graph = _graph()
    log = _ran_in_order(graph)
    log.run("load")
    status = fresh_cells(graph, log.records, LIVE, REVS)
    assert rerun_plan(graph, status) == ["total", "report"]
    assert rerun_plan(graph, dict.fromkeys(REVS, "never_run")) == [
        "load",
        "total",
        "report",
        "other",
    ]


def test_rerun_plan_for_targets_takes_only_their_ancestors() -> None:
    graph = _graph()
    status = dict.fromkeys(REVS, "never_run")
    assert rerun_plan(graph, status, ["total"]) == ["load", "total"]
    assert rerun_plan(graph, status, ["other"]) == ["other"]


def _mutating() -> NotebookGraph:
    return build_graph(
        [
            CellInput("make", "code", "items = []"),
            CellInput("step", "code", "k = 2"),
            CellInput("grow", "code", "items.append(k)"),
            CellInput("count", "code", "n = len(items)"),
        ]
    )


def test_rerun_plan_replays_the_writer_of_a_mutation_that_already_ran() -> None:
    graph = _mutating()
    log = Log(graph)
    for key in ("make", "step", "grow", "count"):
        log.run(key)
    log.run("step")  # grow and count become stale; re-running grow alone would append twice
    revs = dict.fromkeys(("make", "step", "grow", "count"), "r1")
    status = fresh_cells(graph, log.records, LIVE, revs)
    # make is fresh by its own run, but the plan replays it: it reads stale, saying why
    assert status == {"make": "stale", "step": "fresh", "grow": "stale", "count": "stale"}
    assert rerun_plan(graph, status) == ["make", "grow", "count"]
    causes = cell_freshness(graph, log.records, LIVE, revs).causes
    assert causes == {"make": "grow reads items before writing it and re-runs"}


def test_rerun_plan_does_not_replay_for_a_mutation_that_never_ran() -> None:
    graph = _mutating()
    log = Log(graph)
    log.run("make")
    log.run("step")
    revs = dict.fromkeys(("make", "step", "grow", "count"), "r1")
    status = fresh_cells(graph, log.records, LIVE, revs)
    assert status["grow"] == "never_run"
    assert rerun_plan(graph, status) == ["grow", "count"]


def test_a_cell_that_read_a_name_after_a_later_cell_rebound_it_is_stale_and_says_why() -> None:
    graph = build_graph(
        [
            CellInput("ten", "code", "total = 10"),
            CellInput("avg", "code", "avg = total / 2"),
            CellInput("zero", "code", "total = 0"),
        ]
    )
    log = Log(graph)
    for key in ("ten", "avg", "zero"):
        log.run(key)
    revs = dict.fromkeys(("ten", "avg", "zero"), "r1")
    assert set(fresh_cells(graph, log.records, LIVE, revs).values()) == {"fresh"}
    log.run("avg")  # `j-cli run --cell avg`: it read total = 0, not the 10 above it
    freshness = cell_freshness(graph, log.records, LIVE, revs)
    assert freshness.statuses == {"ten": "stale", "avg": "stale", "zero": "stale"}
    assert freshness.causes["avg"] == "read total after zero rebound it"
    assert set(freshness.causes) == {"ten", "avg", "zero"}
    assert rerun_plan(graph, freshness.statuses) == ["ten", "avg", "zero"]
