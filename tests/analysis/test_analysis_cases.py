"""The analysis against tables of worked cases: the shared 51 and our own per-rule tables."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from jupyter_jcli.analysis import (
    CellInput,
    CellStatus,
    ExecutionRecord,
    build_graph,
    cell_freshness,
    rerun_plan,
    stale_after_edit,
)

NameMap = dict[int, frozenset[str]]


@dataclass(frozen=True)
class Rerun:
    """A run-log state and the plan ``rerun_plan`` must give: ``statuses`` by cell index
    (code cells not listed are fresh), ``targets`` (``None``: every code cell)."""

    statuses: dict[int, CellStatus]
    plan: list[int]
    targets: list[int] | None = None


@dataclass(frozen=True)
class Case:
    """One notebook and the expectations the analysis must meet on it.

    Beyond the shared format (defines, uses, mutates, edges, stale_after_edit, unresolved,
    syntax_error) our own table also accepts: history ({cell: [names]}), opaque and wildcard
    ([cell indexes], exact), findings ({cell: [kinds]}, exact per listed cell).
    """

    id: str
    cells: tuple[CellInput, ...]
    defines: NameMap = field(default_factory=dict)
    uses: NameMap = field(default_factory=dict)
    mutates: NameMap = field(default_factory=dict)
    unresolved: NameMap = field(default_factory=dict)
    history: NameMap = field(default_factory=dict)
    edges: frozenset[tuple[int, int]] | None = None
    stale_after_edit: dict[int, list[int]] = field(default_factory=dict)
    syntax_error: frozenset[int] | None = None
    opaque: frozenset[int] | None = None
    wildcard: frozenset[int] | None = None
    findings: dict[int, list[str]] = field(default_factory=dict)
    reads: NameMap = field(default_factory=dict)
    writes: NameMap = field(default_factory=dict)
    rerun: tuple[Rerun, ...] = ()


def _rerun(raw: list[dict[str, Any]] | None) -> tuple[Rerun, ...]:
    return tuple(
        Rerun(
            statuses={int(k): v for k, v in (r.get("statuses") or {}).items()},
            plan=list(r["plan"]),
            targets=r.get("targets"),
        )
        for r in raw or []
    )


def _cell(i: int, raw: Any) -> CellInput:
    if isinstance(raw, str):
        return CellInput(key=f"c{i}", cell_type="code", source=raw)
    ((cell_type, source),) = raw.items()
    return CellInput(key=f"c{i}", cell_type=cell_type, source=source)


def _names(raw: dict[int, list[str]] | None) -> NameMap:
    return {int(k): frozenset(v) for k, v in (raw or {}).items()}


def _indexes(raw: list[int] | None) -> frozenset[int] | None:
    return None if raw is None else frozenset(raw)


def load_cases(path: Path) -> list[Case]:
    """Every case of one YAML table."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    cases = []
    for raw in doc["cases"]:
        edges = raw.get("edges")
        cases.append(
            Case(
                id=raw["id"],
                cells=tuple(_cell(i, c) for i, c in enumerate(raw["cells"])),
                defines=_names(raw.get("defines")),
                uses=_names(raw.get("uses")),
                mutates=_names(raw.get("mutates")),
                unresolved=_names(raw.get("unresolved")),
                history=_names(raw.get("history")),
                edges=None if edges is None else frozenset((p, c) for p, c in edges),
                stale_after_edit={
                    int(k): list(v) for k, v in (raw.get("stale_after_edit") or {}).items()
                },
                syntax_error=_indexes(raw.get("syntax_error")),
                opaque=_indexes(raw.get("opaque")),
                wildcard=_indexes(raw.get("wildcard")),
                findings={int(k): list(v) for k, v in (raw.get("findings") or {}).items()},
                reads=_names(raw.get("reads")),
                writes=_names(raw.get("writes")),
                rerun=_rerun(raw.get("rerun")),
            )
        )
    return cases


TABLES = Path(__file__).parent.parent / "fixtures" / "analysis"
SHARED = load_cases(TABLES / "cases.yaml")
OURS = [
    case
    for table in ("rules.yaml", "reads_before_writes.yaml", "mutations.yaml")
    for case in load_cases(TABLES / table)
]


def test_the_shared_table_has_its_51_cases() -> None:
    assert len(SHARED) == 51
    assert len({c.id for c in SHARED}) == 51


def test_our_table_ids_are_unique_and_distinct_from_the_shared_ones() -> None:
    ids = [c.id for c in OURS]
    assert len(ids) == len(set(ids))
    assert not set(ids) & {c.id for c in SHARED}


@pytest.mark.parametrize("case", SHARED + OURS, ids=lambda c: c.id)
def test_case(case: Case) -> None:
    graph = build_graph(case.cells)
    key = {i: c.key for i, c in enumerate(case.cells)}
    for i, names in case.defines.items():
        assert graph.cells[i].effects.defines == names, f"defines of cell {i}"
    for i, names in case.uses.items():
        assert graph.cells[i].uses == names, f"uses of cell {i}"
    for i, names in case.mutates.items():
        assert graph.cells[i].effects.mutates == names, f"mutates of cell {i}"
    for i, names in case.history.items():
        assert graph.cells[i].effects.history_refs == names, f"history of cell {i}"
    if case.edges is not None:
        assert set(graph.edges) == case.edges
    for edited, expected in case.stale_after_edit.items():
        assert stale_after_edit(graph, [key[edited]]) == [key[i] for i in sorted(expected)], (
            f"stale after editing cell {edited}"
        )
    for i, names in case.unresolved.items():
        assert graph.cells[i].unresolved == names, f"unresolved in cell {i}"
    if case.syntax_error is not None:
        bad = {n.index for n in graph.cells if n.effects.syntax_error is not None}
        assert bad == case.syntax_error
        flagged = {f.index for f in graph.findings if f.kind == "syntax_error"}
        assert flagged == case.syntax_error
    if case.opaque is not None:
        assert {n.index for n in graph.cells if n.effects.is_opaque} == case.opaque
    if case.wildcard is not None:
        assert {n.index for n in graph.cells if n.effects.is_wildcard} == case.wildcard
    for i, names in case.reads.items():
        assert graph.cells[i].reads == names, f"reads of cell {i}"
    for i, names in case.writes.items():
        assert graph.cells[i].writes == names, f"writes of cell {i}"
    for r in case.rerun:
        statuses: dict[str, CellStatus] = {
            n.key: r.statuses.get(n.index, "fresh") for n in graph.cells if n.cell_type == "code"
        }
        targets = None if r.targets is None else [key[i] for i in r.targets]
        assert rerun_plan(graph, statuses, targets) == [key[i] for i in sorted(r.plan)], (
            f"plan for {r.statuses}"
        )
    for i, kinds in case.findings.items():
        assert sorted(f.kind for f in graph.findings if f.index == i) == sorted(kinds), (
            f"findings of cell {i}"
        )


@pytest.mark.parametrize(
    "case", [c for c in SHARED + OURS if c.stale_after_edit], ids=lambda c: c.id
)
def test_the_overview_an_edits_result_and_the_plan_are_one_set(case: Case) -> None:
    """After a run from the top and an edit of one code cell: the cells the overview calls
    not fresh are the edit's stale list and what ``run_stale`` runs; each fresh-by-its-own-run
    cell the plan runs says why."""
    graph = build_graph(case.cells)
    code = [n for n in graph.cells if n.cell_type == "code"]
    records = [
        ExecutionRecord(n.key, "r1", "E", seq, [graph.cells[p].key for p in n.parents])
        for seq, n in enumerate(code)
    ]
    for edited in case.stale_after_edit:
        key = graph.cells[edited].key
        if graph.cells[edited].cell_type != "code":
            continue
        revs = {n.key: "r2" if n.key == key else "r1" for n in code}
        freshness = cell_freshness(graph, records, "E", revs)
        overview = [k for k, status in freshness.statuses.items() if status != "fresh"]
        assert overview == stale_after_edit(graph, [key]), f"editing cell {edited}"
        assert overview == rerun_plan(graph, freshness.statuses), f"editing cell {edited}"
        dependents = {graph.cells[c].key for n in code if n.key in overview for c in n.children}
        for k in overview:
            if k != key and k not in dependents:
                assert k in freshness.causes, f"editing cell {edited}: why does {k} re-run?"
