"""Jupyter Enterprise Gateway for the server tests, in its own virtual environment.

Enterprise Gateway 3.3.0 pins ``jupyter-client < 7`` and ``pyzmq < 25``, so it cannot share
the project's environment: :func:`enterprise_gateway_python` creates one for it with
``python -m venv`` and ``pip install`` (PyPI only) under a cache folder
(``$JUPYTER_JCLI_TEST_CACHE``, else ``~/.cache/jupyter-jcli-tests``), once: later runs, and
the other pytest-xdist workers, reuse it (a lock file serialises the creation; a marker file
written last says it is complete). Creating it took 57 s, and 162 s with pip's cache off
(``PIP_NO_CACHE_DIR=1``: every wheel downloaded from PyPI), on the shared 2-core machine;
349 MB installed. It is bounded here by :data:`INSTALL_WAIT`.

:func:`running_enterprise_gateway` starts ``jupyter enterprisegateway`` from that environment
on 127.0.0.1 (:func:`server_helpers.start_server`), its kernels from a test kernelspec folder
(``python3``: ipykernel of the gateway's environment, started by its local process proxy).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from server_helpers import RunningServer, running_server

EG_VERSION = "3.3.0"
REQUIREMENTS = (f"jupyter_enterprise_gateway=={EG_VERSION}", "ipykernel>=6.29,<7")
"""What the gateway's environment holds (ipykernel gives the kernels; EG's own test extra
pins it below 7, whose jupyter-client 8 EG's pins exclude)."""
CACHE_ENV = "JUPYTER_JCLI_TEST_CACHE"
"""Environment variable: the folder of the test suite's cached environments."""
INSTALL_WAIT = 900.0
"""Seconds creating the environment may take (pip's own network timeouts are shorter)."""
LOCK_WAIT = INSTALL_WAIT + 60.0
"""Seconds to wait for another process creating the same environment."""


def cache_folder() -> Path:
    """``$JUPYTER_JCLI_TEST_CACHE``, else ``~/.cache/jupyter-jcli-tests``."""
    given = os.environ.get(CACHE_ENV)
    return Path(given) if given else Path.home() / ".cache" / "jupyter-jcli-tests"


def enterprise_gateway_python(cache: Path | None = None) -> Path:
    """The Python of Enterprise Gateway's own environment, created when missing or
    incomplete (see the module docstring).

    Raises:
        RuntimeError: the environment could not be created (pip's output tail), or another
            process held the lock longer than :data:`LOCK_WAIT` s.
    """
    cache = cache or cache_folder()
    cache.mkdir(parents=True, exist_ok=True)
    version = f"py{sys.version_info.major}{sys.version_info.minor}"
    target = cache / f"enterprise-gateway-{EG_VERSION}-{version}"
    python, marker = target / "bin" / "python", target / "jcli-complete.json"
    wanted = json.dumps(list(REQUIREMENTS))
    with (cache / f"{target.name}.lock").open("w") as lock:
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{target} is locked by another process") from None
                time.sleep(0.5)
        if marker.is_file() and marker.read_text() == wanted and python.exists():
            return python
        shutil.rmtree(target, ignore_errors=True)  # an incomplete or outdated one
        _create(target, python)
        marker.write_text(wanted)
        return python


def _create(target: Path, python: Path) -> None:
    log = target.parent / f"{target.name}.log"
    base = getattr(sys, "_base_executable", sys.executable)
    steps = [
        [base, "-m", "venv", str(target)],
        [str(python), "-m", "pip", "install", "--disable-pip-version-check", *REQUIREMENTS],
    ]
    began = time.monotonic()
    deadline = began + INSTALL_WAIT
    with log.open("wb") as sink:
        for step in steps:
            left = max(deadline - time.monotonic(), 1.0)
            try:
                done = subprocess.run(
                    step, stdout=sink, stderr=subprocess.STDOUT, timeout=left, check=False
                )
            except subprocess.TimeoutExpired:
                done = None
            if done is None or done.returncode != 0:
                tail = log.read_text(errors="replace")[-3000:]
                raise RuntimeError(f"creating {target} failed ({step[:4]}):\n{tail}")
        sink.write(f"created in {time.monotonic() - began:.0f} s\n".encode())


def kernelspec_folder(work: Path, python: Path) -> Path:
    """A ``JUPYTER_PATH`` folder whose ``kernels/python3`` runs ipykernel with ``python``
    (Enterprise Gateway's local process proxy, named as its own kernelspecs do)."""
    folder = work / "jupyter-path"
    spec = folder / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    proxy = "enterprise_gateway.services.processproxies.processproxy.LocalProcessProxy"
    document = {
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (Enterprise Gateway test)",
        "language": "python",
        "metadata": {"process_proxy": {"class_name": proxy}},
    }
    (spec / "kernel.json").write_text(json.dumps(document, indent=1), encoding="utf-8")
    return folder


@contextmanager
def running_enterprise_gateway(
    root: Path, work: Path, env: dict[str, str] | None = None
) -> Iterator[RunningServer]:
    """``jupyter enterprisegateway`` on 127.0.0.1 with a token, running in ``root`` (its
    local kernels start there), the test kernelspec folder first on its ``JUPYTER_PATH``,
    ``env`` added to its environment (``EG_UNAUTHORIZED_USERS``, ...); always stopped."""
    python = enterprise_gateway_python()
    work.mkdir(parents=True, exist_ok=True)
    extra = {"JUPYTER_PATH": str(kernelspec_folder(work, python)), **(env or {})}
    program = [str(python.parent / "jupyter"), "enterprisegateway"]
    with running_server(root, work, kind="enterprisegateway", program=program, env=extra) as server:
        yield server
