"""Fixtures of the kernel tests: one real Jupyter Server for the session (marker ``server``).

The server's root is pytest's base temporary folder, so every test's ``tmp_path`` notebook
has a server path; it runs on 127.0.0.1 with a random token and is always stopped.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator

import pluggy
import pytest

from server_helpers import RunningServer, log_tails, running_server


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pluggy.Result[pytest.TestReport], None]:
    """A failed test that used a Jupyter Server shows the newest lines of the server's log
    (a kernel start or a handshake that timed out is explained there, e.g. Jupyter Server's
    "Timeout waiting for kernel_info reply")."""
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        funcargs = getattr(item, "funcargs", {})
        for title, text in log_tails(funcargs.values()):
            report.sections.append((title, text))


@pytest.fixture(scope="session")
def jupyter_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """A running ``jupyter server`` shared by the session's server tests (do not stop it;
    tests that stop or restart a server start their own)."""
    root, work = tmp_path_factory.getbasetemp(), tmp_path_factory.mktemp("jupyter-server")
    with running_server(root, work) as server:
        yield server
