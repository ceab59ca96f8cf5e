"""What a Jupyter Server costs per execution: ``execute_cells`` on a trivial cell through the
server backend against the local backend, in one run, on one machine.

Both workbenches run the same one-cell notebook (``x = 1``, whose own run time is a few
microseconds, so the wall time of the call is its overhead: reading and writing the notebook,
the kernel round trip, the transport). The server is a real ``jupyter server`` started here
on 127.0.0.1 with a token (as the server tests start it); the local kernel is ipykernel
through ``jupyter_client``. Calls alternate between the two so load on the machine hits both
alike. Prints the medians, the 90th percentiles and the ratio; target: the server's median at
most 2x the local one (exit status 1 if missed).

    uv run python benchmarks/bench_server.py            # --runs 60
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from jupyter_jcli.kernels import KernelPool, ServerConfig, backend_factory
from jupyter_jcli.notebook.document import Document
from jupyter_jcli.workbench import Workbench
from server_helpers import start_server, write_notebook

TARGET_RATIO = 2.0
WARMUP = 5


async def _measure(runs: int, root: Path, config: ServerConfig) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"local": [], "server": []}
    pools = {
        "local": KernelPool(),
        "server": KernelPool(backend_factory=backend_factory(config)),
    }
    paths = {kind: write_notebook(root / kind, ["x = 1"], "trivial") for kind in times}
    cells = {kind: [Document.load(path).cells[0].name] for kind, path in paths.items()}
    async with (
        Workbench(cache_dir=root / "cache-local", pool=pools["local"]) as local,
        Workbench(cache_dir=root / "cache-server", pool=pools["server"]) as server,
    ):
        benches = {"local": local, "server": server}
        for round_ in range(WARMUP + runs):
            for kind, wb in benches.items():
                started = time.perf_counter()
                with anyio.fail_after(120):
                    outcome = await wb.execute_cells(paths[kind], cells[kind])
                elapsed = time.perf_counter() - started
                if not outcome.ok:
                    raise SystemExit(f"{kind}: the trivial cell failed: {outcome.to_dict()}")
                if round_ >= WARMUP:
                    times[kind].append(elapsed)
    return times


def _p90(values: list[float]) -> float:
    return sorted(values)[int(0.9 * (len(values) - 1))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-server-") as folder:
        root = Path(folder).resolve()
        (root / "local").mkdir()
        (root / "server").mkdir()
        server = start_server(root, root / "server-work")
        try:
            times = anyio.run(_measure, args.runs, root, server.config())
        finally:
            server.stop()
    local, remote = statistics.median(times["local"]), statistics.median(times["server"])
    ratio = remote / local
    print(f"execute_cells on 'x = 1', {args.runs} calls each (after {WARMUP} warm-up calls)")
    for kind in ("local", "server"):
        values = times[kind]
        print(
            f"    {kind:<7} median {statistics.median(values) * 1e3:8.2f} ms   "
            f"p90 {_p90(values) * 1e3:8.2f} ms"
        )
    verdict = "PASS" if ratio <= TARGET_RATIO else "FAIL"
    print(f"    server / local = {ratio:.2f}x (target <= {TARGET_RATIO:g}x): {verdict}")
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
