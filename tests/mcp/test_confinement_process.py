"""Through the real servers over stdio (the MCP SDK's client): a jupytext pair reaching
outside ``--root`` is neither read nor written (issue 9 item 2), and a FIFO or device named
``*.ipynb`` gets a code at once from every tool, the server answering afterwards (item 4)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

import anyio
import pytest
import readonly_client
from workbench_client import (
    NOTEBOOKS,
    PLOTS_NB,
    call,
    error_code,
    module_params,
    ok,
    open_session,
    server_env,
)

CALL_SECONDS = 30
"""Bound on one tool call: a call that blocks on a FIFO fails the test instead of hanging."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _notebook(word: str, formats: str | None = None) -> str:
    metadata = {"jupytext": {"formats": formats}} if formats else {}
    cell = {
        "cell_type": "code",
        "id": "c0",
        "metadata": {},
        "execution_count": None,
        "source": f"print('{word}')",
        "outputs": [],
    }
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": metadata, "cells": [cell]})


def _pair_layout(tmp_path: Path, formats: str) -> tuple[Path, Path, Path]:
    root, outside = (tmp_path / "root").resolve(), (tmp_path / "outside").resolve()
    root.mkdir()
    outside.mkdir()
    notebook = root / "nb.ipynb"
    notebook.write_text(_notebook("INSIDE", formats), encoding="utf-8")
    os.utime(notebook, ns=(1_000_000_000, 1_000_000_000))  # older than the text file
    text = outside / "nb.py"
    text.write_text("# %%\nprint('OUTSIDE')\n", encoding="utf-8")
    return root, notebook, text


@pytest.mark.anyio
@pytest.mark.parametrize("link", [False, True], ids=["formats-outside", "symlinked-pair"])
async def test_a_pair_reaching_outside_the_root_is_neither_shown_nor_overwritten(
    tmp_path: Path, link: bool
) -> None:
    formats = "ipynb,py:percent" if link else "ipynb,../outside//py:percent"
    root, notebook, text = _pair_layout(tmp_path, formats)
    if link:
        (root / "nb.py").symlink_to(text)
    before = text.read_bytes()
    params = module_params("--root", str(root), env=server_env(tmp_path / "cache"))
    async with open_session(params, tmp_path / "server.log") as session:
        overview = await ok(session, "notebook_overview", path=str(notebook))
        assert "OUTSIDE" not in json.dumps(overview)
        [cell] = overview["cells"]
        code = await error_code(
            session,
            "update_cell",
            path=str(notebook),
            name=cell["name"],
            expected_rev=cell["rev"],
            source="print('EDITED')",
        )
        assert code == "PATH_NOT_ALLOWED"
        cells = await ok(session, "read_cells", path=str(notebook))
        assert "OUTSIDE" not in json.dumps(cells)
    assert text.read_bytes() == before
    assert "EDITED" not in notebook.read_text(encoding="utf-8")


def _special_files(root: Path) -> list[tuple[Path, str]]:
    """A FIFO in the root, and a link to ``/dev/zero`` (a device outside the root: refused
    as such before it is opened; the command line refuses it as a device)."""
    fifo = root / "pipe.ipynb"
    os.mkfifo(fifo)
    zero = root / "zero.ipynb"
    zero.symlink_to("/dev/zero")
    return [(fifo, "NOTEBOOK_READ_FAILED"), (zero, "PATH_NOT_ALLOWED")]


def _release(fifo: Path) -> None:
    """Open the FIFO's write end once, so a reader that blocked on it (a failure) returns."""
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


@pytest.mark.anyio
async def test_every_workbench_tool_refuses_a_fifo_or_device_at_once_and_keeps_answering(
    tmp_path: Path,
) -> None:
    root = (tmp_path / "root").resolve()
    root.mkdir()
    shutil.copyfile(NOTEBOOKS / PLOTS_NB, root / PLOTS_NB)
    specials = _special_files(root)
    params = module_params("--root", str(root), env=server_env(tmp_path / "cache"))
    try:
        async with open_session(params, tmp_path / "server.log") as session:
            for special, expected in specials:
                path = str(special)
                for tool, arguments in (
                    ("notebook_overview", {"path": path}),
                    ("read_cells", {"path": path}),
                    ("search_cells", {"path": path, "query": "x"}),
                    ("add_cell", {"path": path, "source": "x = 1"}),
                    ("execute_cells", {"path": path, "names": ["a"]}),
                ):
                    with anyio.fail_after(CALL_SECONDS):
                        code = await error_code(session, tool, **arguments)
                    assert code == expected, (tool, path)
            with anyio.fail_after(CALL_SECONDS):
                overview = await ok(session, "notebook_overview", path=PLOTS_NB)
            assert overview["cells"]
    finally:
        _release(specials[0][0])


@pytest.mark.anyio
async def test_the_output_reader_refuses_a_fifo_or_device_at_once_and_keeps_answering(
    tmp_path: Path,
) -> None:
    root = readonly_client.populate_root(tmp_path / "root")
    specials = _special_files(root)
    params = readonly_client.module_params("--root", str(root))
    try:
        async with readonly_client.open_session(params, tmp_path / "server.log") as session:
            for special, expected in specials:
                with anyio.fail_after(CALL_SECONDS):
                    result, document = await call(
                        session, readonly_client.TOOL, file_path=str(special), cell_index=0
                    )
                assert result.is_error
                assert document["code"] == expected
            with anyio.fail_after(CALL_SECONDS):
                result, document = await call(
                    session, readonly_client.TOOL, file_path=readonly_client.TEXT_NB, cell_index=5
                )
            assert not result.is_error
    finally:
        _release(specials[0][0])
