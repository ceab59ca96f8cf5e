"""Issue 24's table reversed, through both front ends on a real collaborative server: the
agent is ``jupyter-mcp --server-url URL`` (the MCP SDK's stdio client, as a host) or the
``j-cli ... --server-url URL`` console script; the person is jupyter-nbmodel-client in the
notebook's room (``collab_helpers.Person``, not our code); the Jupyter Server runs
jupyter-collaboration (``server_helpers.running_server``). ``--store auto`` (the default)
picks the room: every read, edit, undo and output write goes through the live document, the
kernel runs on the server, and the file is only ever written by the server's save.

Codes and document state are asserted (the person's view, the file after the server's
save), never message text or timings; every wait is bounded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters
from workbench_client import WAIT_SECONDS, call, open_session, server_env

from collab_helpers import Person, wait_until
from server_helpers import RunningServer, running_server, write_notebook

pytestmark = [pytest.mark.anyio, pytest.mark.server, pytest.mark.kernel]

BIN = Path(sys.executable).parent
SOURCES = ["a = 1", "b = 2", "print(a)"]
TICKS = "import time\nfor i in range(6):\n    print('tick', i, flush=True)\n    time.sleep(0.5)"
FRONT_ENDS = ["mcp", "j-cli"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root = tmp_path_factory.mktemp("live-root").resolve()
    with running_server(root, tmp_path_factory.mktemp("live-work")) as running:
        yield running


class Agent:
    """One agent on the server's notebooks: a ``jupyter-mcp`` session, or ``j-cli`` commands
    (run in the server's root, as a person's terminal next to JupyterLab). :meth:`call`
    takes a workbench tool's name and arguments and returns its JSON document (ok or
    error)."""

    def __init__(
        self, server: RunningServer, cache: Path, session: ClientSession | None = None
    ) -> None:
        self.server, self.session = server, session
        self.env = server_env(cache, JUPYTER_JCLI_SERVER_TOKEN=server.token)

    async def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        if self.session is not None:
            _, document = await call(self.session, tool, **arguments)
            assert isinstance(document, dict)
            return document
        words = _command(tool, arguments)
        return await anyio.to_thread.run_sync(self._jcli, words)

    def _jcli(self, words: list[str]) -> dict[str, Any]:
        done = subprocess.run(
            [str(BIN / "j-cli"), "-j", *words, "--server-url", self.server.url],
            cwd=self.server.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=WAIT_SECONDS,
            check=False,
        )
        document: dict[str, Any] = json.loads(done.stdout)
        return document

    async def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        document = await self.call(tool, **arguments)
        assert document["status"] == "ok", document
        return document


def _command(tool: str, a: dict[str, Any]) -> list[str]:
    """The ``j-cli`` command doing what the workbench tool ``tool`` does."""
    path = a.get("path", a.get("file_path"))
    if tool == "notebook_overview":
        return ["notebook", "overview", path]
    if tool == "read_cells":
        return ["notebook", "read", path]
    if tool == "update_cell":
        return ["cell", "update", path, a["name"], "--expected-rev", a["expected_rev"],
                "--source", a["source"]]  # fmt: skip
    if tool == "add_cell":
        return ["cell", "add", path, "--source", a["source"], "--after", a["after"],
                "--expected-rev", a["expected_rev"]]  # fmt: skip
    if tool == "undo_last":
        return ["notebook", "undo", path]
    if tool == "run_stale":
        return ["run", path, "--keep"]
    if tool == "execute_cells":
        return ["run", path, *[w for n in a["names"] for w in ("--cell", n)], "--only", "--keep"]
    if tool == "read_notebook_output":
        cell = ["--cell", str(a["cell_index"])]
        if "output_index" not in a:
            return ["notebook", "outputs", path, *cell]
        return ["notebook", "output", path, *cell, "--output", str(a["output_index"])]
    raise AssertionError(tool)


@asynccontextmanager
async def agent(front: str, server: RunningServer, cache: Path) -> AsyncIterator[Agent]:
    """An agent of front end ``front`` (``mcp``: a ``jupyter-mcp`` process for the block)."""
    if front == "j-cli":
        yield Agent(server, cache)
        return
    env = server_env(cache, JUPYTER_JCLI_SERVER_TOKEN=server.token)
    params = StdioServerParameters(
        command=str(BIN / "jupyter-mcp"),
        args=["--root", str(server.root), "--server-url", server.url],
        cwd=str(server.root),
        env=env,
    )
    async with open_session(params, cache.parent / f"{cache.name}.log") as session:
        yield Agent(server, cache, session)


@pytest.fixture
def name(tmp_path: Path, server: RunningServer) -> str:
    """A fresh notebook in the server's root, per test."""
    return write_notebook(server.root, SOURCES, tmp_path.name).name


@pytest.fixture
def person(server: RunningServer, name: str) -> Iterator[Person]:
    joined = Person(server.url, server.token, name)
    yield joined
    joined.close()


def _disk(server: RunningServer, name: str) -> list[str] | None:
    """The sources in the saved file (``None`` while the server is writing it)."""
    try:
        notebook = json.loads((server.root / name).read_text(encoding="utf-8"))
    except ValueError:
        return None
    return ["".join(cell["source"]) for cell in notebook["cells"]]


def _saved_cells(server: RunningServer, name: str) -> list[dict[str, Any]] | None:
    try:
        cells: list[dict[str, Any]] = json.loads((server.root / name).read_text(encoding="utf-8"))[
            "cells"
        ]
    except ValueError:
        return None
    return cells


def _texts(cell: dict[str, Any]) -> str:
    return "".join("".join(output.get("text", "")) for output in cell.get("outputs", []))


def _cells(overview: dict[str, Any]) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = overview["cells"]
    return cells


async def _until_read(bot: Agent, name: str, index: int, source: str) -> dict[str, Any]:
    """Read the cells until cell ``index`` has ``source`` (the person's change reached the
    room's server and our copy of the room; bounded), then return that cell."""
    with anyio.fail_after(WAIT_SECONDS):
        while True:
            cell = _cells(await bot.ok("read_cells", path=name))[index]
            if cell["source"] == source:
                return cell
            await anyio.sleep(0.05)


# ---------------------------------------------------------------------- the table, reversed


@pytest.mark.parametrize("front", FRONT_ENDS)
async def test_typing_just_before_an_agent_edit_of_another_cell_is_kept_live_and_on_disk(
    front: str, server: RunningServer, name: str, person: Person, tmp_path: Path
) -> None:
    async with agent(front, server, tmp_path / "cache") as bot:
        show = _cells(await bot.ok("notebook_overview", path=name))[2]
        person.type(0, "\nz = 0")
        await anyio.sleep(0.1)  # the 0.1 s (not a wait for anything)
        await bot.ok("update_cell", path=name, name=show["name"], expected_rev=show["rev"],
                     source="print(a, 'agent')")  # fmt: skip
    wanted = ["a = 1\nz = 0", "b = 2", "print(a, 'agent')"]
    person.wait_for(lambda them: them.sources() == wanted)
    wait_until(lambda: _disk(server, name) == wanted)  # the server's save


@pytest.mark.parametrize("front", FRONT_ENDS)
async def test_the_agent_reads_the_persons_unsaved_change_and_a_stale_rev_is_refused(
    front: str, server: RunningServer, name: str, person: Person, tmp_path: Path
) -> None:
    async with agent(front, server, tmp_path / "cache") as bot:
        before = _cells(await bot.ok("read_cells", path=name))[1]
        person.set_source(1, "b = 'person'")
        seen = await _until_read(bot, name, 1, "b = 'person'")
        assert seen["rev"] != before["rev"]
        refused = await bot.call("update_cell", path=name, name=before["name"],
                                 expected_rev=before["rev"], source="b = 'agent'")  # fmt: skip
        assert refused["status"] == "error" and refused["code"] == "REV_MISMATCH"
        assert refused["details"]["source"] == "b = 'person'"  # the live source
    assert person.sources() == ["a = 1", "b = 'person'", "print(a)"]
    wait_until(lambda: _disk(server, name) == ["a = 1", "b = 'person'", "print(a)"])


@pytest.mark.parametrize("front", FRONT_ENDS)
async def test_the_person_sees_a_running_cells_output_stream_in_before_the_run_ends(
    front: str, server: RunningServer, name: str, person: Person, tmp_path: Path
) -> None:
    await _streams_into_the_persons_view(front, server, name, person, tmp_path)


@pytest.mark.parametrize("front", FRONT_ENDS)
async def test_a_notebook_without_cell_ids_streams_into_the_persons_view_too(
    front: str, server: RunningServer, tmp_path: Path
) -> None:
    # nbformat 4.4 (the bundled example's): the room gives its cells ids but drops them on
    # read, so the run found no id and streamed nothing until the end (a trial's finding).
    path = write_notebook(server.root, SOURCES, f"{tmp_path.name}-v4.4")
    notebook = json.loads(path.read_text(encoding="utf-8"))
    notebook["nbformat_minor"] = 4
    for cell in notebook["cells"]:
        cell.pop("id", None)
    path.write_text(json.dumps(notebook), encoding="utf-8")
    person = Person(server.url, server.token, path.name)
    try:
        await _streams_into_the_persons_view(front, server, path.name, person, tmp_path)
    finally:
        person.close()


async def _streams_into_the_persons_view(
    front: str, server: RunningServer, name: str, person: Person, tmp_path: Path
) -> None:
    person.set_source(1, TICKS)
    seen: list[tuple[str | None, str, float | None]] = []
    watching = threading.Event()
    watching.set()

    def watch() -> None:  # the person's view of cell 1, as often as it can be read
        while watching.is_set():

            def look() -> tuple[str | None, str, float | None]:
                ycell = person.client._doc.ycells[1]
                outputs = [dict(o) for o in ycell["outputs"]]
                text = "".join(str(o.get("text", "")) for o in outputs)
                return ycell.get("execution_state"), text, ycell.get("execution_count")

            seen.append(person.call(look))

    watcher = threading.Thread(target=watch, daemon=True)
    async with agent(front, server, tmp_path / "cache") as bot:
        await _until_read(bot, name, 1, TICKS)  # the person's source
        overview = await bot.ok("notebook_overview", path=name)
        watcher.start()
        try:
            await bot.ok("execute_cells", path=name, names=[_cells(overview)[1]["name"]])
        finally:
            watching.clear()
            watcher.join(10.0)
    full = "".join(f"tick {i}\n" for i in range(6))
    partial = [text for state, text, _ in seen if text and text != full]
    assert partial, "no chunk reached the person before the last one"
    assert any(state == "running" for state, _, _ in seen)
    assert all(full.startswith(text) for _, text, _ in seen)  # chunks merged in order
    final = person.notebook()["cells"][1]
    assert [o["output_type"] for o in final["outputs"]] == ["stream"]  # once, merged
    assert _texts(final) == full and final["execution_count"] is not None
    wait_until(lambda: (_saved_cells(server, name) or [{}, {}])[1].get("outputs") is not None
               and _texts((_saved_cells(server, name) or [{}, {}])[1]) == full)  # fmt: skip


DISPLAYS = """import os, time
from IPython.display import clear_output, display
def seen(what, folder={folder!r}):  # the person's watcher saw it (bounded: 60 s)
    deadline = time.monotonic() + 60
    while not os.path.exists(os.path.join(folder, what)) and time.monotonic() < deadline:
        time.sleep(0.05)
shown = display('v0', display_id=True)
seen("'v0'")
for i in range(1, 4):
    shown.update(f'v{{i}}')
    seen(f"'v{{i}}'")
print('gone', flush=True)
seen('gone')
clear_output(wait=True)
print('kept', flush=True)
time.sleep(0.4)"""


@pytest.mark.parametrize("front", FRONT_ENDS)
async def test_display_updates_and_clear_output_reach_the_person_as_jupyterlab_shows_them(
    front: str, server: RunningServer, name: str, person: Person, tmp_path: Path
) -> None:
    marks = tmp_path / "seen"  # the cell waits for the watcher to see each value it shows
    marks.mkdir()
    source = DISPLAYS.format(folder=str(marks))
    person.set_source(1, source)
    seen: list[list[tuple[str, str]]] = []
    watching = threading.Event()
    watching.set()

    def look() -> list[tuple[str, str]]:
        shown = []
        for output in person.client._doc.ycells[1]["outputs"]:
            data = output.get("data") or {}
            text = str(data.get("text/plain", "")) or str(output.get("text", ""))
            shown.append((str(output.get("output_type")), text))
        return shown

    def watch() -> None:
        while watching.is_set():
            shown = person.call(look)
            seen.append(shown)
            for _, text in shown:
                (marks / text.strip()).touch()

    watcher = threading.Thread(target=watch, daemon=True)
    async with agent(front, server, tmp_path / "cache") as bot:
        cell = await _until_read(bot, name, 1, source)
        watcher.start()
        try:
            await bot.ok("execute_cells", path=name, names=[cell["name"]])
        finally:
            watching.clear()
            watcher.join(10.0)
    displayed = [texts for texts in seen if any(kind == "display_data" for kind, _ in texts)]
    assert all(sum(kind == "display_data" for kind, _ in texts) == 1 for texts in displayed)
    # Updated in place while it ran: one display output, seen with each of its values (the
    # cell showed the next only once the person's copy of the room had this one).
    values = {text for texts in displayed for kind, text in texts if kind == "display_data"}
    assert values == {"'v0'", "'v1'", "'v2'", "'v3'"}
    assert any(("stream", "gone\n") in texts for texts in seen)
    assert person.call(look) == [("stream", "kept\n")]  # cleared at the next output


@pytest.mark.parametrize("front", FRONT_ENDS)
async def test_the_agents_new_and_edited_cells_reach_the_person_in_the_room(
    front: str, server: RunningServer, name: str, person: Person, tmp_path: Path
) -> None:
    async with agent(front, server, tmp_path / "cache") as bot:
        first = _cells(await bot.ok("notebook_overview", path=name))[0]
        await bot.ok("add_cell", path=name, source="c = a + b", after=first["name"],
                     expected_rev=first["rev"])  # fmt: skip
        person.wait_for(lambda them: them.sources() == ["a = 1", "c = a + b", *SOURCES[1:]])
        added = _cells(await bot.ok("notebook_overview", path=name))[1]
        await bot.ok("update_cell", path=name, name=added["name"], expected_rev=added["rev"],
                     source="c = a * b")  # fmt: skip
        person.wait_for(lambda them: them.sources() == ["a = 1", "c = a * b", *SOURCES[1:]])
    wait_until(lambda: _disk(server, name) == ["a = 1", "c = a * b", *SOURCES[1:]])


def _ran(document: dict[str, Any]) -> list[str]:
    """The cells a run_stale (or ``j-cli run``, whose ``run`` it holds) ran."""
    run = document.get("run", document)
    return [cell["name"] for cell in run.get("cells", []) if cell["status"] != "skipped"]


@pytest.mark.parametrize("front", FRONT_ENDS)
async def test_the_persons_edit_makes_its_dependents_stale_for_the_agent(
    front: str, server: RunningServer, name: str, person: Person, tmp_path: Path
) -> None:
    async with agent(front, server, tmp_path / "cache") as bot:
        names = [cell["name"] for cell in _cells(await bot.ok("notebook_overview", path=name))]
        assert _ran(await bot.ok("run_stale", path=name)) == names
        person.set_source(0, "a = 5")
        await _until_read(bot, name, 0, "a = 5")
        if front == "mcp":  # j-cli's read-only overview does not see a server kernel
            after = _cells(await bot.ok("notebook_overview", path=name))
            assert [cell["status"] for cell in after] == ["stale", "fresh", "stale"]
        assert _ran(await bot.ok("run_stale", path=name)) == [names[0], names[2]]
        assert _ran(await bot.ok("run_stale", path=name)) == []
    person.wait_for(lambda them: _texts(them.notebook()["cells"][2]) == "5\n")


@pytest.mark.parametrize("front", FRONT_ENDS)
async def test_undo_on_the_live_document_keeps_the_persons_later_edits(
    front: str, server: RunningServer, name: str, person: Person, tmp_path: Path
) -> None:
    async with agent(front, server, tmp_path / "cache") as bot:
        show = _cells(await bot.ok("notebook_overview", path=name))[2]
        await bot.ok("update_cell", path=name, name=show["name"], expected_rev=show["rev"],
                     source="print(a + 1)")  # fmt: skip
        person.wait_for(lambda them: them.sources()[2] == "print(a + 1)")
        person.set_source(0, "a = 'person'")
        await _until_read(bot, name, 0, "a = 'person'")
        await bot.ok("undo_last", path=name)
    wanted = ["a = 'person'", "b = 2", "print(a)"]
    person.wait_for(lambda them: them.sources() == wanted)
    wait_until(lambda: _disk(server, name) == wanted)


@pytest.mark.parametrize("front", FRONT_ENDS)
async def test_the_saved_output_protocol_reads_the_live_document(
    front: str, server: RunningServer, name: str, person: Person, tmp_path: Path
) -> None:
    def add_output() -> None:  # an output only the room has (e.g. the person ran the cell)
        from pycrdt import Map, Text

        doc = person.client._doc
        with person.client._lock, doc.ydoc.transaction():
            doc.ycells[1]["outputs"].append(
                Map({"output_type": "stream", "name": "stdout", "text": Text("live\n")})
            )

    person.call(add_output)
    async with agent(front, server, tmp_path / "cache") as bot:
        listed = await bot.ok("read_notebook_output", file_path=name, cell_index=1)
        assert listed["status"] == "ok"
        read = await bot.ok("read_notebook_output", file_path=name, cell_index=1,
                            output_index=0)  # fmt: skip
        assert json.dumps(read).count("live\\n") >= 1


# ---------------------------------------------------------------------- faults


@pytest.mark.parametrize("front", FRONT_ENDS)
async def test_the_person_deleting_the_running_cell_leaves_its_outputs_nowhere(
    front: str, server: RunningServer, name: str, person: Person, tmp_path: Path
) -> None:
    person.set_source(1, TICKS)
    async with agent(front, server, tmp_path / "cache") as bot:
        ticks = await _until_read(bot, name, 1, TICKS)
        async with anyio.create_task_group() as tg:
            tg.start_soon(partial_call(bot, "execute_cells", path=name, names=[ticks["name"]]))
            await anyio.to_thread.run_sync(
                lambda: person.wait_for(lambda them: "tick" in _texts(them.notebook()["cells"][1]))
            )
            person.delete(1)
        person.wait_for(lambda them: them.sources() == ["a = 1", "print(a)"])
    for cell in person.notebook()["cells"]:
        assert "tick" not in _texts(cell)
    wait_until(lambda: _disk(server, name) == ["a = 1", "print(a)"])
    assert all("tick" not in _texts(cell) for cell in _saved_cells(server, name) or [])


def partial_call(bot: Agent, tool: str, **arguments: Any) -> Any:
    async def run() -> None:
        await bot.call(tool, **arguments)  # its result: the cell is gone, either code

    return run


async def test_two_agents_and_a_person_on_one_notebook(
    server: RunningServer, name: str, person: Person, tmp_path: Path
) -> None:
    async with AsyncExitStack() as stack:
        one = await stack.enter_async_context(agent("mcp", server, tmp_path / "one"))
        two = await stack.enter_async_context(agent("mcp", server, tmp_path / "two"))
        cells_one = _cells(await one.ok("notebook_overview", path=name))
        cells_two = _cells(await two.ok("notebook_overview", path=name))
        typing = threading.Thread(target=person.type, args=(1, " + 0" * 20))
        typing.start()
        await one.ok("update_cell", path=name, name=cells_one[0]["name"],
                     expected_rev=cells_one[0]["rev"], source="a = 'one'")  # fmt: skip
        await two.ok("update_cell", path=name, name=cells_two[2]["name"],
                     expected_rev=cells_two[2]["rev"], source="print(a, 'two')")  # fmt: skip
        stale = await two.call("update_cell", path=name, name=cells_two[0]["name"],
                               expected_rev=cells_two[0]["rev"], source="a = 'two'")  # fmt: skip
        assert stale["code"] == "REV_MISMATCH"
        await anyio.to_thread.run_sync(typing.join, 30.0)
        wanted = ["a = 'one'", "b = 2" + " + 0" * 20, "print(a, 'two')"]
        person.wait_for(lambda them: them.sources() == wanted)
        for bot in (one, two):  # the person's last keys reach each agent's copy of the room
            await _until_read(bot, name, 1, wanted[1])
            assert [c["source"] for c in _cells(await bot.ok("read_cells", path=name))] == wanted
    wait_until(lambda: _disk(server, name) == wanted)
    assert os.path.exists(server.root / name)


WAITS_FOR = """import os, time
deadline = time.monotonic() + 60
while not os.path.exists({mark!r}) and time.monotonic() < deadline:
    time.sleep(0.05)"""


@pytest.mark.parametrize("front", FRONT_ENDS)
async def test_a_cell_the_person_changed_before_the_run_reached_it_keeps_their_outputs(
    front: str, server: RunningServer, name: str, person: Person, tmp_path: Path
) -> None:
    # The run runs the source it planned; the person's cell now holds other code and the
    # outputs they made for it: the old code's outputs were streamed over them (the result
    # saying they were not written, cell_changed) (a trial's finding).
    mark = tmp_path / "go"
    person.set_source(0, WAITS_FOR.format(mark=str(mark)))

    def their_output() -> None:  # the person's own output of their new source
        from pycrdt import Map, Text

        doc = person.client._doc
        with person.client._lock, doc.ydoc.transaction():
            doc.ycells[2]["outputs"].append(
                Map({"output_type": "stream", "name": "stdout", "text": Text("theirs\n")})
            )

    async with agent(front, server, tmp_path / "cache") as bot:
        await _until_read(bot, name, 0, WAITS_FOR.format(mark=str(mark)))
        async with anyio.create_task_group() as tg:
            done: list[dict[str, Any]] = []

            async def run() -> None:
                done.append(await bot.call("run_stale", path=name))

            tg.start_soon(run)

            def running(them: Person) -> bool:  # cell 0 runs, waiting for the mark
                state = them.call(lambda: them.client._doc.ycells[0].get("execution_state"))
                return bool(state == "running")

            await anyio.to_thread.run_sync(lambda: person.wait_for(running))
            person.set_source(2, "print('person')")
            person.call(their_output)
            mark.touch()
    ran = {cell["name"]: cell for cell in done[0].get("run", done[0])["cells"]}
    assert ran["print-a"]["not_written_reason"] == "cell_changed"
    final = person.notebook()["cells"][2]
    assert (final["source"], _texts(final)) == ("print('person')", "theirs\n")


async def test_a_notebook_deleted_in_jupyterlab_while_jupyter_mcp_has_it_open_is_not_found(
    server: RunningServer, name: str, tmp_path: Path
) -> None:
    # jupyter-mcp keeps the room open; the room outlived the deleted file, so an edit and a
    # run into it reported ok and went nowhere (a trial's finding).
    async with agent("mcp", server, tmp_path / "cache") as bot:
        show = _cells(await bot.ok("notebook_overview", path=name))[2]
        with server.client() as rest:
            assert rest.delete(f"api/contents/{name}").status_code == 204
        edit = await bot.call("update_cell", path=name, name=show["name"],
                              expected_rev=show["rev"], source="print('lost')")  # fmt: skip
        run = await bot.call("run_stale", path=name)
        assert [edit.get("code"), run.get("code")] == ["FILE_NOT_FOUND", "FILE_NOT_FOUND"]
    assert not (server.root / name).exists()


@pytest.mark.parametrize("front", FRONT_ENDS)
async def test_a_cell_the_person_types_into_while_it_runs_gets_its_outputs_and_says_so(
    front: str, server: RunningServer, name: str, person: Person, tmp_path: Path
) -> None:
    # As in JupyterLab, the running cell's outputs stream and finish into it beside the
    # person's typing; the result said not written (cell_changed) (a trial's finding).
    mark = tmp_path / "go"
    waits = WAITS_FOR.format(mark=str(mark)) + "\nprint('done')"
    person.set_source(1, waits)
    async with agent(front, server, tmp_path / "cache") as bot:
        cell = await _until_read(bot, name, 1, waits)
        async with anyio.create_task_group() as tg:
            done: list[dict[str, Any]] = []

            async def run() -> None:
                done.append(await bot.call("execute_cells", path=name, names=[cell["name"]]))

            tg.start_soon(run)

            def running(them: Person) -> bool:
                state = them.call(lambda: them.client._doc.ycells[1].get("execution_state"))
                return bool(state == "running")

            await anyio.to_thread.run_sync(lambda: person.wait_for(running))
            person.type(1, "\n# typed while it ran")
            mark.touch()
    ran = [c for c in done[0].get("run", done[0])["cells"] if c["name"] == cell["name"]][-1]
    assert (ran["status"], ran.get("written"), ran.get("not_written_reason")) == ("ok", True, None)
    final = person.notebook()["cells"][1]
    assert (final["source"], _texts(final)) == (waits + "\n# typed while it ran", "done\n")
