"""The notebook the person sees (issue 24), in a real browser: JupyterLab with
jupyter-collaboration in Debian's headless Chromium (marker ``server``). The person has the
notebook open; the agent, through our collaborative store (``CollabStore``: a cell added by
``StoreDocument.add_cell``, its output streamed through ``live_outputs``), adds a cell and
streams its output into it; the person's page shows the new cell and each chunk of its output
while it streams, without a reload and without a dialog (JupyterLab's "file changed on disk"
one among them), also after the server saved the file. A screenshot of the page is kept under
``test-artifacts/browser/`` (the run's summary prints its path).

Every wait is bounded; the browser, its driver and the server are always ended.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_helpers import PAGE_LOAD_WAIT, chromium, chromium_paths
from server_helpers import RunningServer, running_server, write_notebook

# A declared timeout above the default 300 s starts it first on a pytest-xdist worker
# (tests/conftest.py), so it never runs alone at the end of a parallel run.
pytestmark = [pytest.mark.server, pytest.mark.timeout(360)]

NOTEBOOK = "live.ipynb"
PERSON_SOURCE = "x = 1"
AGENT_SOURCE = "for i in range(1, 6):\n    print(f'chunk {i} of 5')"
CHUNKS = [f"chunk {i} of 5\n" for i in range(1, 6)]
CHUNK_GAP = 0.4
"""Seconds between two chunks of the agent's output (five chunks: about 2 s of streaming)."""
WAIT = 60.0
"""Seconds any one thing may take to show (in the page, the room or the file)."""

CELLS_JS = """
return Array.from(
    document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')
).map(cell => ({
    source: (cell.querySelector('.jp-InputArea .cm-content') || {}).innerText || '',
    output: (cell.querySelector('.jp-OutputArea') || {}).innerText || '',
}));
"""
"""The open notebook's cells as the person sees them: each cell's source and output text."""

WATCH_JS = """
window.__jcliPage = arguments[0];
const title = dialog => (dialog.querySelector('.jp-Dialog-header') || dialog).innerText.trim();
window.__jcliDialogs = Array.from(document.querySelectorAll('.jp-Dialog')).map(title);
new MutationObserver(records => {
    for (const record of records) {
        for (const node of record.addedNodes) {
            const element = node.nodeType === 1 ? node : null;
            const dialog = element && (element.matches('.jp-Dialog') ? element
                : element.querySelector('.jp-Dialog'));
            if (dialog) {
                window.__jcliDialogs.push(title(dialog));
            }
        }
    }
}).observe(document.body, {childList: true, subtree: true});
"""
"""Mark the page (a reload loses the mark) and record the title of every dialog shown from
now on."""

PAGE_LOADING = "Loading"
"""The title of the docprovider's own notice that the page's first sync of the room took over
5 s ("The document is taking some time to load"): seen on a loaded CI machine before the
agent did anything; it is about the page's loading, not about a change, so it is the one
dialog allowed."""


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[RunningServer]:
    """``jupyter lab`` with collaboration on a root holding the person's notebook."""
    if chromium_paths() is None:
        pytest.skip("Chromium and its driver are not installed (.ci/run installs them)")
    root = tmp_path / "root"
    root.mkdir()
    write_notebook(root, [PERSON_SOURCE], name=NOTEBOOK.removesuffix(".ipynb"))
    with running_server(root, tmp_path / "work", kind="lab") as server:
        yield server


def wait_for(what: str, check: Callable[[], Any], timeout: float = WAIT) -> Any:
    """Poll ``check`` until it returns something true (returned), at most ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:g} s: {what}")
        time.sleep(0.1)


def agent(server: RunningServer, cache: Path, sent: threading.Event, seen: threading.Event) -> None:
    """The agent, through our collaborative store: add a code cell at the end of the
    notebook (``StoreDocument.add_cell``, one transaction on the room's document), then
    stream its output into it through the store's live-outputs sink, chunk by chunk as a
    running cell's iopub ``stream`` messages arrive, and finish with the final outputs. After
    the first chunk it waits until the page shows it, so the page is seen showing output
    while the cell still runs."""
    from jupyter_jcli.notebook.store import CollabStore, open_notebook

    with CollabStore(server.url, server.token, timeout=WAIT, base_dir=cache) as store:
        ref = store.ref(NOTEBOOK)
        added = open_notebook(ref, store=store).add_cell(AGENT_SOURCE, position="end")
        assert added.cell is not None
        cell_id = store.read(ref).notebook["cells"][added.cell.index]["id"]
        with store.live_outputs(ref, cell_id) as sink:
            sink.message("execute_input", {"code": AGENT_SOURCE, "execution_count": 1})
            sink.message("stream", {"name": "stdout", "text": CHUNKS[0]})
            sent.set()
            if not seen.wait(WAIT):
                raise AssertionError("the page did not show the first chunk")
            for chunk in CHUNKS[1:]:
                time.sleep(CHUNK_GAP)
                sink.message("stream", {"name": "stdout", "text": chunk})
            final = {"output_type": "stream", "name": "stdout", "text": "".join(CHUNKS)}
            sink.finish([final], 1)
            assert not sink.lost


def run_in_thread(work: Callable[[], Any]) -> tuple[threading.Thread, list[BaseException]]:
    """Run ``work`` in a thread; its exception, if any, lands in the returned list."""
    errors: list[BaseException] = []

    def target() -> None:
        try:
            work()
        except BaseException as error:
            errors.append(error)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, errors


def test_person_sees_the_agents_cell_and_its_streamed_output(
    lab: RunningServer, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.wait import WebDriverWait

    artifacts = request.config.rootpath / "test-artifacts" / "browser"
    artifacts.mkdir(parents=True, exist_ok=True)
    screenshot = artifacts / "lab-live.png"
    screenshot.unlink(missing_ok=True)

    with chromium(tmp_path / "profile") as driver:

        def cells() -> list[dict[str, str]]:
            return list(driver.execute_script(CELLS_JS))

        try:
            driver.get(f"{lab.url}lab/tree/{NOTEBOOK}?token={lab.token}")
            WebDriverWait(driver, PAGE_LOAD_WAIT).until(
                expected_conditions.presence_of_element_located(
                    (By.CSS_SELECTOR, ".jp-NotebookPanel .jp-Cell .cm-content")
                )
            )
            wait_for(
                "the person's notebook open",
                lambda: [cell["source"] for cell in cells()] == [PERSON_SOURCE],
                PAGE_LOAD_WAIT,
            )
            driver.execute_script(WATCH_JS, "before-the-agent")

            sent, seen = threading.Event(), threading.Event()
            running, errors = run_in_thread(lambda: agent(lab, tmp_path / "cache", sent, seen))
            assert sent.wait(WAIT) or errors, "the agent did not add its cell"
            assert not errors, errors
            first = wait_for(
                "the agent's cell and its first chunk in the page",
                lambda: [cell for cell in cells() if cell["output"].strip() == CHUNKS[0].strip()],
            )
            assert first[0]["source"] == AGENT_SOURCE
            seen.set()
            wait_for(
                "every chunk in the page",
                lambda: [c for c in cells() if c["output"].strip() == "".join(CHUNKS).strip()],
            )
            running.join(WAIT)
            assert not running.is_alive(), "the agent did not finish"
            assert not errors, errors

            # The server saves the room to the file; the page must not take that for an
            # outside change.
            saved = lab.root / NOTEBOOK
            wait_for(
                "the server's save of the agent's cell and output",
                lambda: _saved_output(saved) == "".join(CHUNKS),
            )
            shown = cells()
            assert [cell["source"] for cell in shown] == [PERSON_SOURCE, AGENT_SOURCE]
            assert shown[1]["output"].strip() == "".join(CHUNKS).strip()
            assert driver.execute_script("return window.__jcliPage") == "before-the-agent"
            dialogs = driver.execute_script("return window.__jcliDialogs")
            assert [title for title in dialogs if title != PAGE_LOADING] == []
            shown_now = driver.execute_script(
                "return Array.from(document.querySelectorAll('.jp-Dialog-header'))"
                ".map(header => header.innerText.trim())"
            )
            assert [title for title in shown_now if title != PAGE_LOADING] == []
        finally:
            driver.save_screenshot(str(screenshot))
            request.node.user_properties.append(("artifact", str(screenshot)))


def _saved_output(path: Path) -> str | None:
    """The saved stdout text of the notebook's last cell, or None."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError):
        return None
    outputs = cells[-1].get("outputs", []) if len(cells) > 1 else []
    text = "".join(
        "".join(output.get("text", "")) for output in outputs if output.get("name") == "stdout"
    )
    return text or None
