"""The correctness checks of ``benchmarks/bench_many_notebooks.py``: a misplaced output, a
lost edit or a lost execution in a saved notebook, and a wrong token in an answer, are each
reported; a notebook as its agent left it passes. Pure: notebooks are nbformat dicts."""

from __future__ import annotations

import copy
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import nbformat
import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_many_notebooks.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_many_notebooks", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


bench = _load()


def _stream(text: str) -> dict[str, Any]:
    return dict(nbformat.v4.new_output("stream", name="stdout", text=text))


def _saved(notebook: str = "nb03", iteration: int = 4, pings: int = 5) -> dict[str, Any]:
    """The notebook as its agent leaves it after ``iteration`` edits and ``pings`` runs."""
    outputs = {
        "setup": [],
        "ping": [_stream(f"TOK|{notebook}|ping|{pings}\n")],
        "work": [_stream(f"TOK|{notebook}|work|{iteration}\n")],
        "dep": [_stream(f"TOK|{notebook}|dep|{iteration}\n")],
    }
    cells = []
    for name, source in bench.sources(notebook, iteration).items():
        cell = nbformat.v4.new_code_cell(source, outputs=outputs[name])
        cell.metadata["jupyter_mcp"] = {"name": name}
        cells.append(cell)
    return dict(nbformat.v4.new_notebook(cells=cells))


def _expected(notebook: str = "nb03", iteration: int = 4, pings: int = 5) -> Any:
    return bench.Expected(
        notebook, iteration, bench.sources(notebook, iteration)["work"], ping_runs=pings
    )


def _swap_outputs(saved: dict[str, Any]) -> None:
    cells = saved["cells"]
    cells[1]["outputs"], cells[3]["outputs"] = cells[3]["outputs"], cells[1]["outputs"]


def _other_notebook(saved: dict[str, Any]) -> None:
    saved["cells"][3]["outputs"] = [_stream("TOK|nb07|dep|4\n")]


def _extra_output(saved: dict[str, Any]) -> None:
    saved["cells"][2]["outputs"].append(_stream("TOK|nb03|ping|6\n"))


def _old_source(saved: dict[str, Any]) -> None:
    saved["cells"][2]["source"] = bench.sources("nb03", 3)["work"]


def _old_output(saved: dict[str, Any]) -> None:
    saved["cells"][2]["outputs"] = [_stream("TOK|nb03|work|3\n")]


def _lost_cell(saved: dict[str, Any]) -> None:
    del saved["cells"][3]


def _output_in_setup(saved: dict[str, Any]) -> None:
    saved["cells"][0]["outputs"] = [_stream("TOK|nb03|setup|0\n")]


def _error_output(saved: dict[str, Any]) -> None:
    saved["cells"][3]["outputs"] = [
        dict(nbformat.v4.new_output("error", ename="NameError", evalue="w", traceback=[]))
    ]


@pytest.mark.parametrize(
    "damage",
    [
        _swap_outputs,
        _other_notebook,
        _extra_output,
        _old_source,
        _old_output,
        _lost_cell,
        _output_in_setup,
        _error_output,
    ],
)
def test_a_damaged_saved_notebook_is_reported(damage: Callable[[dict[str, Any]], None]) -> None:
    saved = _saved()
    damage(saved)
    assert bench.check_saved(saved, _expected())


def test_a_ping_count_other_than_the_runs_is_reported() -> None:
    assert bench.check_saved(_saved(pings=5), _expected(pings=6))


def test_the_notebook_as_its_agent_left_it_passes() -> None:
    assert bench.check_saved(copy.deepcopy(_saved()), _expected()) == []


def _answer(cells: list[tuple[str, str, str]]) -> dict[str, Any]:
    return {
        "cells": [
            {"name": name, "status": status, "outputs": {"text": f"[output 0: stdout]\n{text}"}}
            for name, status, text in cells
        ]
    }


def test_an_answer_with_its_own_tokens_gives_their_values() -> None:
    answer = _answer([("work", "ok", "TOK|nb03|work|4\n"), ("dep", "ok", "TOK|nb03|dep|4\n")])
    assert bench.check_answer("nb03", answer) == ({"work": 4, "dep": 4}, [])


@pytest.mark.parametrize(
    "cells",
    [
        [("dep", "ok", "TOK|nb03|work|4\n")],
        [("dep", "ok", "TOK|nb04|dep|4\n")],
        [("dep", "ok", "")],
        [("dep", "error", "TOK|nb03|dep|4\n")],
    ],
)
def test_an_answer_with_a_foreign_missing_or_failed_output_is_reported(
    cells: list[tuple[str, str, str]],
) -> None:
    assert bench.check_answer("nb03", _answer(cells))[1]
