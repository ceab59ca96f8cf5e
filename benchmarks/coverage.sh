#!/usr/bin/env bash
# Line coverage of src/ by the test suite, the processes the tests start included.
#
#   benchmarks/coverage.sh                      # the suite without `hosts`, 4 xdist workers
#   benchmarks/coverage.sh tests/kernels -x     # any pytest arguments instead
#
# `[tool.coverage.run]` in pyproject.toml asks coverage.py to measure subprocesses
# (`patch = ["subprocess", ...]`, `parallel = true`): every Python process the run starts
# (the pytest-xdist workers, the kernel supervisors, `j-cli`, the MCP servers, the kernels)
# writes its own `.coverage.*` file. This script joins them and prints two reports:
#
# 1. "tests' own processes": the `coverage run` process and its direct children (the xdist
#    workers), i.e. what an in-process measurement (`coverage run -m pytest`, no subprocess
#    patch) would report;
# 2. "all processes": every data file, subprocesses included (the figure to keep).
#
# The processes are told apart by coverage.py's `process` debug log (pid, parent pid).
# It is not part of `.ci/run`, whose test command stays the README's.
#
# What it cannot see, so the true figure is somewhat higher:
# - a process killed with SIGKILL saves nothing ("isn't a coverage data file" warnings are
#   the half-written files of such processes; combine skips them);
# - an MCP server started by the SDK's `stdio_client` without an `env` gets only the SDK's
#   default environment, without COVERAGE_PROCESS_CONFIG, and is not measured;
# - on Python 3.11, lines run after awaiting a task that was cancelled (an anyio task group
#   cancelled on exit) are not recorded in the frames around it (CPython issue 106749,
#   coverage.py issue 2124): e.g. `cli/_run.py` after `anyio.run` returns.
# Line tracing slows hot loops: timing-bounded tests (pytest-timeout marks) may time out
# under this script on a loaded machine though they pass without it.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$#" -eq 0 ]; then
    set -- -q -n 4 -m "not hosts"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log="$work/processes.log"

python3 -m uv run coverage erase
status=0
COVERAGE_DEBUG=process COVERAGE_DEBUG_FILE="$log" python3 -m uv run coverage run -m pytest "$@" ||
    status=$?

# Split the data files: the first process in the log is `coverage run`'s own.
own=$(python3 - "$log" <<'EOF'
import glob
import re
import sys

parents: dict[int, int] = {}
first = None
with open(sys.argv[1], encoding="utf-8", errors="replace") as log:
    for line in log:
        if m := re.match(r"New process: pid=(\d+),", line):
            first = int(m[1]) if first is None else first
            current = int(m[1])
        elif m := re.match(r"New process parent pid: (\d+)", line):
            parents[current] = int(m[1])
own = {first} | {pid for pid, parent in parents.items() if parent == first}
for name in sorted(glob.glob(".coverage.*")):
    m = re.search(r"\.pid(\d+)\.", name)
    if m and int(m[1]) in own:
        print(name)
EOF
)
files=$(ls .coverage.* 2>/dev/null | wc -l)

echo
echo "== tests' own processes (coverage run and its xdist workers) =="
if [ -z "$own" ]; then
    echo "no data file from the tests' own processes" >&2
    exit 1
fi
# shellcheck disable=SC2086 # one file name a line, none with spaces
python3 -m uv run coverage combine --keep --quiet --data-file="$work/own" $own
python3 -m uv run coverage report --data-file="$work/own" | tail -n 1

echo
echo "== all processes ($files data files) =="
python3 -m uv run coverage combine --quiet
python3 -m uv run coverage report --sort=-miss >"$work/report.txt"
head -n 42 "$work/report.txt"
tail -n 1 "$work/report.txt"
echo "(full table: python3 -m uv run coverage report; pytest exit status $status)"
exit "$status"
