"""The declared output schema of ``read_notebook_output`` accepts every result the protocol gives
(the reference shapes: ``stream``/``error`` nested, ``kind: "notebook"``) and refuses the old
flattened ones, checked in-process over every output of the real fixture notebooks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from jupyter_jcli.mcp._readonly_schema import OUTPUT_SCHEMA
from jupyter_jcli.mcp._results import protocol_result
from jupyter_jcli.outputs import read_output
from jupyter_jcli.outputs.notebook import open_notebook

FIXTURES = Path(__file__).parents[1] / "fixtures"
NOTEBOOKS = sorted((FIXTURES / "notebooks").glob("*.ipynb"))
VALIDATOR = Draft202012Validator(OUTPUT_SCHEMA)


def _structured(document: dict[str, Any]) -> Any:
    return protocol_result(document).structured_content


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_listing_and_read_of_a_real_notebook_matches_the_output_schema(path: Path) -> None:
    loaded = open_notebook(path)
    for cell in range(loaded.cell_count):
        listing = loaded.list_outputs(cell)
        VALIDATOR.validate(_structured(listing))
        for output in range(listing["output_count"]):
            for options in ({}, {"offset": 0, "limit": 7}, {"limit": None}):
                if options and listing["outputs"][output]["output_type"] != "stream":
                    continue
                VALIDATOR.validate(_structured(loaded.read_output(cell, output, **options)))


def test_the_reference_fixture_reads_match_the_output_schema() -> None:
    outputs = json.loads((FIXTURES / "outputs" / "reference_mixed_outputs.json").read_text())
    source = {
        "kind": "notebook",
        "path": "/abs/nb.ipynb",
        "cell_index": 0,
        "requested_path": "/abs/nb.ipynb",
        "requested_cell_index": 0,
        "mapping": "direct",
        "cell_type": "code",
    }
    for index, mime in [(0, None), (1, None), (1, "text/html"), (1, "application/json"), (3, None)]:
        document = read_output(outputs, index, source=source, mime_type=mime)
        VALIDATOR.validate(_structured(document))


@pytest.mark.parametrize(
    "flattened",
    [
        {"name": "stdout", "data": "x", "offset": 0},
        {"ename": "E", "evalue": "v", "traceback": []},
        {"stream": {"name": "stdout", "data": "x"}},  # window fields missing
    ],
)
def test_the_output_schema_refuses_the_old_flattened_reads(flattened: dict[str, Any]) -> None:
    document = {
        "schema_version": 1,
        "status": "ok",
        "source": {
            "kind": "notebook",
            "path": "/abs/nb.ipynb",
            "cell_index": 0,
            "requested_path": "/abs/nb.ipynb",
            "requested_cell_index": 0,
            "mapping": "direct",
            "cell_type": "code",
            "output_index": 0,
        },
        "output_type": "stream",
        "available_mime_types": [],
        "metadata": {},
        **flattened,
    }
    assert not VALIDATOR.is_valid(document)
