"""Many notebooks on one Jupyter Server: ``execute_cells`` overhead with 4 concurrent agents
on 20 notebooks (each its own kernel) against one agent on one notebook, and whether every
output and edit landed where it belongs (issue 26, item 5).

One real ``jupyter server`` is started here on 127.0.0.1 with a token (as the server tests
start it), its root a temporary folder of generated notebooks. Each agent is one real
``jupyter-mcp --server-url URL --server-root ROOT`` process (token through
``JUPYTER_JCLI_SERVER_TOKEN``), driven over stdio by the MCP SDK's own client; the agents'
clients share this process's event loop. Every notebook has four cells::

    setup  NB = "nb07"
    ping   n = globals().get("n", 0) + 1; print(f"TOK|{NB}|ping|{n}")   (the kernel's count)
    work   w = 12; print("TOK|nb07|work|12")                             (rewritten each round)
    dep    print(f"TOK|{NB}|dep|{w}")                                    (reads work's w)

An agent first runs ``run_stale`` on each of its notebooks (this starts the kernels; not
measured), waits until every agent has done so, then for ``--rounds`` rounds, on each of its
notebooks in turn: ``update_cell`` of ``work`` with a new iteration number (``expected_rev``:
the rev the previous edit returned), ``run_stale`` (re-runs ``work`` and ``dep``) and
``execute_cells`` of ``ping``, whose wall time minus the cell's own ``duration_s`` (the
kernel's execute time as the workbench measured it) is the overhead figure. The single
figure is the same loop by one agent on one notebook on the same server, half of it before
the concurrent phase and half after (load from elsewhere on the machine hits both alike);
it makes as many ``execute_cells`` calls as one concurrent agent. With ``--parallel`` each
agent works on its notebooks at once (concurrent tool calls in one session, as a host making
parallel tool calls): outputs of several notebooks then cross one ``jupyter-mcp`` together.

Printed: p50/p90 overhead of both, p90(many)/p90(single) against the goal (at most 2x; a
slow figure is printed as MISSED but does not change the exit status), the peak RSS
(``VmHWM``) of the ``jupyter-mcp`` processes, the load average. Checked, exit status 1 if
any fails: each answer's outputs carry their own notebook's and cell's token; after the run,
in every saved notebook, every output is in the cell that printed it, ``work``'s source is
the last one its agent wrote and its output and ``dep``'s are of that iteration, ``ping``'s
count is the number of times the agent ran it (one kernel per notebook, no execution lost or
run twice), no kernel was seen by two notebooks; the server's ``/api/kernels`` is empty
once the agents exit, and no kernel or ``jupyter-mcp`` process outlives the run.

    uv run python benchmarks/bench_many_notebooks.py     # --notebooks 20 --agents 4 --rounds 6
    uv run python benchmarks/bench_many_notebooks.py --notebooks 4 --agents 2 --rounds 2
    uv run python benchmarks/bench_many_notebooks.py --parallel
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import nbformat
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from server_helpers import RunningServer, start_server

GOAL_RATIO = 2.0
CALL_TIMEOUT = 180.0
"""Seconds one tool call may take (the first ``run_stale`` starts a kernel)."""
RUN_TIMEOUT = 1800.0
"""Seconds the whole measurement may take."""
START_ATTEMPTS = 3
"""Tries of an agent's first ``run_stale`` on a notebook: a kernel start may time out
(``KERNEL_START_FAILED``, 60 s) when 20 kernels start at once on a loaded machine; the agent
tries again, as a model would, and the retries are printed."""
CLEANUP_WAIT = 30.0
"""Seconds the server's kernels and our processes may take to go once the agents exit."""
CELLS = ("setup", "ping", "work", "dep")
TOKEN = re.compile(r"TOK\|([a-z0-9-]+)\|([a-z0-9-]+)\|(-?\d+)")


def sources(notebook: str, iteration: int) -> dict[str, str]:
    """The four cells' sources of ``notebook`` with ``work`` at ``iteration``."""
    return {
        "setup": f'NB = "{notebook}"',
        "ping": 'n = globals().get("n", 0) + 1\nprint(f"TOK|{NB}|ping|{n}")',
        "work": f'w = {iteration}\nprint("TOK|{notebook}|work|{iteration}")',
        "dep": 'print(f"TOK|{NB}|dep|{w}")',
    }


def write_notebook(folder: Path, notebook: str) -> Path:
    """``folder/<notebook>.ipynb`` with the four named cells at iteration 0."""
    document = nbformat.v4.new_notebook()
    document.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    for name, source in sources(notebook, 0).items():
        cell = nbformat.v4.new_code_cell(source)
        cell.metadata["jupyter_mcp"] = {"name": name}
        document.cells.append(cell)
    path = folder / f"{notebook}.ipynb"
    nbformat.write(document, path)
    return path


@dataclass
class Expected:
    """What one agent did to one notebook, as its answers said."""

    notebook: str
    iteration: int = 0
    work_source: str = ""
    ping_runs: int = 0
    kernel_ids: set[str] = field(default_factory=set)


def tokens(text: str) -> list[tuple[str, str, int]]:
    """Every ``TOK|notebook|cell|value`` in ``text``."""
    return [(nb, cell, int(value)) for nb, cell, value in TOKEN.findall(text)]


def output_text(output: dict[str, Any]) -> str:
    """All text an nbformat output carries (stream text, every text MIME type, traceback)."""
    parts: list[str] = []
    text = output.get("text", "")
    parts.append("".join(text) if isinstance(text, list) else str(text))
    for mime, value in (output.get("data") or {}).items():
        if mime.startswith("text/"):
            parts.append("".join(value) if isinstance(value, list) else str(value))
    parts.extend(output.get("traceback") or [])
    return "\n".join(parts)


def check_saved(notebook: dict[str, Any], expected: Expected) -> list[str]:
    """Problems of one saved notebook (nbformat JSON) against what its agent did: cells
    lost or added, an output in a cell (or notebook) that did not print it, ``work``'s
    source not the last one written, outputs not of the last iteration, ``ping``'s count not
    the number of runs. Empty when all is well."""
    name = expected.notebook
    cells = notebook.get("cells", [])
    names = [cell.get("metadata", {}).get("jupyter_mcp", {}).get("name") for cell in cells]
    if names != list(CELLS):
        return [f"{name}: cells {names}, expected {list(CELLS)}"]
    problems: list[str] = []
    want = {"ping": expected.ping_runs, "work": expected.iteration, "dep": expected.iteration}
    for cell, cell_name in zip(cells, names, strict=True):
        found: list[tuple[str, str, int]] = []
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                problems.append(f"{name}/{cell_name}: an error output")
            found.extend(tokens(output_text(output)))
        for token in found:
            if token[:2] != (name, cell_name):
                problems.append(f"{name}/{cell_name}: output {token} belongs elsewhere")
        if cell_name == "setup":
            if found:
                problems.append(f"{name}/setup: outputs {found}, expected none")
            continue
        if [value for *_, value in found] != [want[cell_name]]:
            problems.append(f"{name}/{cell_name}: outputs {found}, expected {want[cell_name]}")
    source = cells[CELLS.index("work")].get("source", "")
    if ("".join(source) if isinstance(source, list) else source) != expected.work_source:
        problems.append(f"{name}/work: source is not the last one written (edit lost)")
    return problems


def check_answer(notebook: str, document: dict[str, Any]) -> tuple[dict[str, int], list[str]]:
    """The values each cell of one ``execute_cells``/``run_stale`` answer printed, and the
    problems: a cell not ``ok``, an output token of another notebook or cell, no token."""
    values: dict[str, int] = {}
    problems: list[str] = []
    for cell in document.get("cells", []):
        cell_name = cell["name"]
        if cell["status"] != "ok":
            problems.append(f"{notebook}/{cell_name}: status {cell['status']}")
        found = tokens((cell.get("outputs") or {}).get("text", ""))
        for token in found:
            if token[:2] != (notebook, cell_name):
                problems.append(f"{notebook}/{cell_name}: answer shows {token}")
        if cell_name != "setup" and len(found) != 1:
            problems.append(f"{notebook}/{cell_name}: answer shows {found}, expected one")
        if found:
            values[cell_name] = found[-1][2]
    return values, problems


@dataclass
class Agent:
    """One ``jupyter-mcp`` session and the record of what it did."""

    label: str
    session: ClientSession
    notebooks: list[str]
    expected: dict[str, Expected]
    revs: dict[str, str] = field(default_factory=dict)
    overheads: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    start_retries: int = 0
    """Kernel starts that timed out (``KERNEL_START_FAILED``) and were tried again."""

    async def call(
        self, tool: str, arguments: dict[str, Any], *, tolerate: str | None = None
    ) -> tuple[dict[str, Any], float, str | None]:
        """One tool call: its structured result, wall seconds and error code. An error
        result is a problem (unless its code is ``tolerate``), returned as an empty
        document."""
        started = time.perf_counter()
        with anyio.fail_after(CALL_TIMEOUT):
            result = await self.session.call_tool(tool, arguments)
        wall = time.perf_counter() - started
        if not result.is_error:
            return dict(result.structured_content or {}), wall, None
        first = result.content[0]
        text = first.text if isinstance(first, types.TextContent) else str(first)
        try:
            code = str(json.loads(text)["code"])
        except (ValueError, KeyError, TypeError):
            code = "?"
        if code != tolerate:
            self.problems.append(f"{self.label} {tool} {arguments.get('path')}: {text[:300]}")
        return {}, wall, code

    def _note_run(self, notebook: str, document: dict[str, Any]) -> dict[str, int]:
        expected = self.expected[notebook]
        kernel_id = (document.get("kernel") or {}).get("kernel_id")
        if kernel_id:
            expected.kernel_ids.add(kernel_id)
        values, problems = check_answer(notebook, document)
        self.problems.extend(f"{self.label}: {problem}" for problem in problems)
        if "ping" in values:
            expected.ping_runs += 1
            if values["ping"] != expected.ping_runs:
                self.problems.append(
                    f"{self.label}: {notebook}/ping counted {values['ping']}, "
                    f"expected {expected.ping_runs} (another kernel, or a run lost)"
                )
        return values

    async def warm_up(self) -> None:
        """Read each notebook's revs and run it all (starts its kernel)."""
        for notebook in self.notebooks:
            path = f"{notebook}.ipynb"
            overview, *_ = await self.call("notebook_overview", {"path": path})
            self.revs[notebook] = next(
                cell["rev"] for cell in overview.get("cells", []) if cell["name"] == "work"
            )
            self.expected[notebook].work_source = sources(notebook, 0)["work"]
            for attempt in range(START_ATTEMPTS):
                last = attempt == START_ATTEMPTS - 1
                document, _, code = await self.call(
                    "run_stale", {"path": path}, tolerate=None if last else "KERNEL_START_FAILED"
                )
                if code != "KERNEL_START_FAILED":
                    break
                self.start_retries += 1
            self._note_run(notebook, document)

    async def rounds(self, notebook: str, count: int) -> None:
        """``count`` rounds on one notebook."""
        for _ in range(count):
            await self.round(notebook)

    async def round(self, notebook: str) -> None:
        """Edit ``work``, ``run_stale``, then the measured ``execute_cells`` of ``ping``."""
        path = f"{notebook}.ipynb"
        expected = self.expected[notebook]
        iteration = expected.iteration + 1
        source = sources(notebook, iteration)["work"]
        edited, *_ = await self.call(
            "update_cell",
            {"path": path, "name": "work", "expected_rev": self.revs[notebook], "source": source},
        )
        if edited:
            self.revs[notebook] = edited["cell"]["rev"]
            expected.iteration, expected.work_source = iteration, source
        document, *_ = await self.call("run_stale", {"path": path})
        values = self._note_run(notebook, document)
        for cell_name in ("work", "dep"):
            if edited and values.get(cell_name) != iteration:
                self.problems.append(
                    f"{self.label}: {notebook}/{cell_name} printed {values.get(cell_name)} "
                    f"after the edit to iteration {iteration}"
                )
        document, wall, _ = await self.call("execute_cells", {"path": path, "names": ["ping"]})
        if document:
            self._note_run(notebook, document)
            self.overheads.append(wall - float(document["cells"][0]["duration_s"]))


def _params(server: RunningServer, root: Path, cache: Path) -> StdioServerParameters:
    env = dict(os.environ)
    env["JUPYTER_JCLI_SERVER_TOKEN"] = server.token
    env["JUPYTER_JCLI_CACHE_DIR"] = str(cache)
    env["JUPYTER_MCP_DISABLE_SUMMARIES"] = "1"
    script = Path(sys.executable).with_name("jupyter-mcp")
    command, prefix = (
        (str(script), [])
        if script.exists()
        else (sys.executable, ["-m", "jupyter_jcli.mcp.workbench"])
    )
    return StdioServerParameters(
        command=command,
        args=[*prefix, "--root", str(root), "--server-url", server.url, "--server-root", str(root)],
        env=env,
    )


def _cmdline(entry: Path) -> str:
    """The command line of the process ``/proc/PID`` (any bytes; raises ``OSError`` once
    it is gone)."""
    return (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")


def _children() -> dict[int, str]:
    """This process's child processes: pid to command line."""
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = _cmdline(entry)
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
            found[int(entry.name)] = cmdline
    return found


def _vm_hwm_mb(pid: int) -> float:
    """Peak resident memory of a live process, MB (``VmHWM`` of ``/proc/PID/status``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _mcp_pids() -> set[int]:
    return {
        pid for pid, cmd in _children().items() if "jupyter-mcp" in cmd or ".mcp.workbench" in cmd
    }


@dataclass
class Figures:
    single: list[float]
    many: list[float]
    rss_single_mb: float
    rss_many_mb: list[float]
    expected: dict[str, Expected]
    problems: list[str]
    duration_s: float
    start_retries: int


async def _measure(
    server: RunningServer, root: Path, work: Path, options: argparse.Namespace
) -> Figures:
    names = [f"nb{index:02d}" for index in range(options.notebooks)]
    for notebook in [*names, "solo"]:
        write_notebook(root, notebook)
    expected = {notebook: Expected(notebook) for notebook in [*names, "solo"]}
    problems: list[str] = []
    per_agent = -(-len(names) // options.agents)
    single_rounds = options.rounds * per_agent
    started = time.perf_counter()
    errlog = work / "mcp.log"
    with anyio.fail_after(RUN_TIMEOUT), errlog.open("w", encoding="utf-8") as err:
        async with (
            stdio_client(_params(server, root, work / "cache-solo"), errlog=err) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            (solo_pid,) = _mcp_pids()
            solo = Agent("solo", session, ["solo"], expected)
            await solo.warm_up()
            for _ in range(single_rounds // 2):
                await solo.round("solo")
            agents, peaks = await _many(
                server=server,
                root=root,
                work=work,
                options=options,
                names=names,
                expected=expected,
                err=err,
            )
            for _ in range(single_rounds - single_rounds // 2):
                await solo.round("solo")
            rss_single = _vm_hwm_mb(solo_pid)
    many_overheads = [value for agent in agents for value in agent.overheads]
    problems += solo.problems + [problem for agent in agents for problem in agent.problems]
    return Figures(
        single=solo.overheads,
        many=many_overheads,
        rss_single_mb=rss_single,
        rss_many_mb=peaks,
        expected=expected,
        problems=problems,
        duration_s=time.perf_counter() - started,
        start_retries=solo.start_retries + sum(agent.start_retries for agent in agents),
    )


async def _many(
    *,
    server: RunningServer,
    root: Path,
    work: Path,
    options: argparse.Namespace,
    names: list[str],
    expected: dict[str, Expected],
    err: Any,
) -> tuple[list[Agent], list[float]]:
    """The concurrent phase: one ``jupyter-mcp`` per agent, notebooks dealt round-robin.
    Returns the agents and the peak RSS (MB) of their processes, read once all have
    finished and before any exits."""
    agents: list[Agent] = []
    peaks: list[float] = []
    solo = _mcp_pids()
    all_warm, all_done = anyio.Event(), anyio.Event()
    counts = {"warm": 0, "done": 0}

    async def arrive(key: str, event: anyio.Event) -> None:
        counts[key] += 1
        if counts[key] == options.agents:
            if key == "done":
                peaks.extend(_vm_hwm_mb(pid) for pid in sorted(_mcp_pids() - solo))
            event.set()
        await event.wait()

    async def run_agent(index: int) -> None:
        async with (
            stdio_client(_params(server, root, work / f"cache-{index}"), errlog=err) as (
                read,
                write,
            ),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            agent = Agent(f"agent{index}", session, names[index :: options.agents], expected)
            agents.append(agent)
            await agent.warm_up()
            await arrive("warm", all_warm)
            if options.parallel:
                async with anyio.create_task_group() as calls:
                    for notebook in agent.notebooks:
                        calls.start_soon(agent.rounds, notebook, options.rounds)
            else:
                for _ in range(options.rounds):
                    for notebook in agent.notebooks:
                        await agent.round(notebook)
            await arrive("done", all_done)

    async with anyio.create_task_group() as group:
        for index in range(options.agents):
            group.start_soon(run_agent, index)
    return agents, peaks


def _kernels(server: RunningServer) -> list[dict[str, Any]]:
    with server.client() as client:
        answer: list[dict[str, Any]] = client.get("api/kernels").json()
        return answer


def _after_request(server: RunningServer, figures: Figures, root: Path) -> list[str]:
    """The checks once every agent exited: saved notebooks, kernels, processes."""
    problems: list[str] = []
    seen: dict[str, str] = {}
    for notebook, expected in sorted(figures.expected.items()):
        saved = json.loads((root / f"{notebook}.ipynb").read_text(encoding="utf-8"))
        problems += check_saved(saved, expected)
        if len(expected.kernel_ids) != 1:
            problems.append(f"{notebook}: ran on kernels {sorted(expected.kernel_ids)}")
        for kernel_id in expected.kernel_ids:
            if seen.setdefault(kernel_id, notebook) != notebook:
                problems.append(f"kernel {kernel_id} ran {seen[kernel_id]} and {notebook}")
    deadline = time.monotonic() + CLEANUP_WAIT
    left = _kernels(server)
    while left and time.monotonic() < deadline:
        time.sleep(0.5)
        left = _kernels(server)
    if left:
        problems.append(f"{len(left)} kernel(s) left on the server after the agents exited")
        with server.client() as client:
            for kernel in left:
                client.delete(f"api/kernels/{kernel['id']}")
    while _mcp_pids() and time.monotonic() < deadline:
        time.sleep(0.2)
    if _mcp_pids():
        problems.append(f"jupyter-mcp processes still running: {sorted(_mcp_pids())}")
    return problems


def _orphans(marker: str) -> list[int]:
    """Processes whose command line names ``marker`` (our temporary folder: kernels'
    connection files live in the server's runtime folder under it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cmdline = _cmdline(entry)
            except OSError:
                continue
            if marker in cmdline:
                found.append(int(entry.name))
    return found


_STARTED = time.perf_counter()


def _progress(what: str) -> None:
    print(f"[{time.perf_counter() - _STARTED:6.1f} s] {what}", file=sys.stderr, flush=True)


def _percentile(values: list[float], share: float) -> float:
    return sorted(values)[int(share * (len(values) - 1))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", type=int, default=20)
    parser.add_argument("--agents", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=6, help="rounds over each notebook")
    parser.add_argument(
        "--parallel",
        action="store_true",
        help="each agent works on its notebooks at once (concurrent tool calls in one "
        "session, as a host making parallel tool calls), not one after the other",
    )
    options = parser.parse_args()
    if options.agents < 1 or options.notebooks < options.agents or options.rounds < 2:
        parser.error("need 1 <= agents <= notebooks and rounds >= 2")
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-many-") as folder:
        base = Path(folder).resolve()
        root, work = base / "notebooks", base / "work"
        root.mkdir()
        work.mkdir()
        server = start_server(root, work)
        _progress("Jupyter Server started")
        try:
            figures = anyio.run(_measure, server, root, work, options)
            _progress("agents done")
            problems = figures.problems + _after_request(server, figures, root)
            _progress("saved notebooks and kernels checked")
            server_peak = _vm_hwm_mb(server.process.pid)
        finally:
            server.stop()
            _progress("Jupyter Server stopped")
        deadline = time.monotonic() + CLEANUP_WAIT
        while _orphans(folder) and time.monotonic() < deadline:
            time.sleep(0.5)
        if orphans := _orphans(folder):
            problems.append(f"processes left after the server stopped: {orphans}")
    load_after = os.getloadavg()
    single, many = figures.single, figures.many
    ratio = _percentile(many, 0.9) / _percentile(single, 0.9)
    print(
        f"{options.notebooks} notebooks, {options.agents} agents (one jupyter-mcp each), "
        f"{options.rounds} rounds{' (parallel calls per agent)' if options.parallel else ''}; "
        f"one Jupyter Server; {figures.duration_s:.0f} s"
    )
    print("execute_cells overhead (wall minus the cell's duration_s):")
    for label, values in (("single (1 agent, 1 notebook)", single), ("many", many)):
        print(
            f"    {label:<29} p50 {_percentile(values, 0.5) * 1e3:8.1f} ms   "
            f"p90 {_percentile(values, 0.9) * 1e3:8.1f} ms   ({len(values)} calls)"
        )
    verdict = "MET" if ratio <= GOAL_RATIO else "MISSED"
    print(f"    p90 many / p90 single = {ratio:.2f}x (goal <= {GOAL_RATIO:g}x): {verdict}")
    peaks = ", ".join(f"{value:.0f}" for value in figures.rss_many_mb)
    print(
        f"peak RSS (VmHWM) of jupyter-mcp: agents {peaks} MB; "
        f"single {figures.rss_single_mb:.0f} MB "
        f"(the Jupyter Server: {server_peak:.0f} MB)"
    )
    print(
        "load average (1, 5, 15 min): before "
        + " ".join(f"{value:.1f}" for value in load_before)
        + ", after "
        + " ".join(f"{value:.1f}" for value in load_after)
    )
    print(f"kernel starts tried again after KERNEL_START_FAILED (60 s): {figures.start_retries}")
    print(f"checks ({len(figures.expected)} notebooks saved, answers, kernels, processes):")
    if problems:
        for problem in problems[:40]:
            print(f"    FAIL {problem}")
        if len(problems) > 40:
            print(f"    ... {len(problems) - 40} more")
        return 1
    print(
        "    PASS every output in the cell and notebook that printed it; every final source "
        "the last one written; one kernel per notebook; no kernel or process left"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
