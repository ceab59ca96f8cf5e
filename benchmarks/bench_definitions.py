"""The fixed cost of ``jupyter-mcp`` in a model's context, and the size of a short exec answer.

Run from the repository root with the project's environment::

    uv run python benchmarks/bench_definitions.py [--verbose]

(a) The tool definitions a host puts in the model's context on every turn: for every tool
    ``tools/list`` returns (listed over stdio through the MCP SDK's own client, as a host
    lists them), the JSON (``json.dumps`` defaults, as issue 25 counted) of its ``name``,
    ``description`` and ``inputSchema``; characters summed over the tools. ``--verbose``
    prints each tool's figure.
(b) The answer document of ``j-cli -j exec --code "print('short')"`` (the venv's console
    script in a fresh process, in a temporary folder: a scratch kernel; nothing is written in
    the repository): its characters, the trailing newline excluded.

Targets (issue 25): (a) at most 14,000 characters for its 21 tools, 15,500 since the three
kernel tools of issue 23 (``list_kernels``, ``start_kernel``, ``stop_kernel``); (b) at most
400 characters. Prints a
PASS/FAIL line per target; exit status 1 if one is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

DEFINITIONS_TARGET = 15_500
EXEC_TARGET = 400
SESSION_TIMEOUT = 120
EXEC_TIMEOUT = 300


async def _definitions(root: Path) -> list[tuple[str, int]]:
    """Each tool's name and the characters of its definition, as ``tools/list`` gives it."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "jupyter_jcli.mcp.workbench"], cwd=root
    )
    with anyio.fail_after(SESSION_TIMEOUT), open(os.devnull, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read_stream, write_stream),
            ClientSession(read_stream, write_stream) as session,
        ):
            await session.initialize()
            listed = await session.list_tools()
    sizes = []
    for tool in listed.tools:
        definition = {
            "name": tool.name,
            "description": tool.description,
            "inputSchema": tool.input_schema,
        }
        sizes.append((tool.name, len(json.dumps(definition))))
    return sizes


def _exec_answer(root: Path) -> str:
    """The ``-j exec`` answer document of a one-line print, in ``root``."""
    script = Path(sysconfig.get_path("scripts")) / "j-cli"
    command = [str(script), "-j", "exec", "--code", "print('short')"]
    done = subprocess.run(
        command, cwd=root, capture_output=True, text=True, timeout=EXEC_TIMEOUT, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"j-cli exec failed ({done.returncode}): {done.stdout}{done.stderr}")
    return done.stdout.rstrip("\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="print each tool's figure")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="jcli-bench-") as folder:
        root = Path(folder).resolve()
        sizes = anyio.run(_definitions, root)
        answer = _exec_answer(root)
    total = sum(size for _name, size in sizes)
    if args.verbose:
        for name, size in sorted(sizes, key=lambda item: -item[1]):
            print(f"  {name:<22} {size:>6,}")
        print(f"  exec answer: {answer}")
    checks = [
        (
            f"(a) tool definitions: {total:,} characters for {len(sizes)} tools",
            total <= DEFINITIONS_TARGET,
            f"<= {DEFINITIONS_TARGET:,}",
        ),
        (
            f"(b) j-cli -j exec --code \"print('short')\": {len(answer):,} characters",
            len(answer) <= EXEC_TARGET,
            f"<= {EXEC_TARGET:,}",
        ),
    ]
    for text, passed, target in checks:
        print(f"{'PASS' if passed else 'FAIL'}  {text} (target {target})")
    return 0 if all(passed for _text, passed, _target in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
