"""Fixtures of the browser tests: a failed test shows its Jupyter Server's newest log lines;
the run's summary names the screenshots the tests kept (their paths, under
``test-artifacts/browser/`` in the project's root, which git ignores)."""

from __future__ import annotations

from collections.abc import Generator

import pluggy
import pytest

from server_helpers import log_tails

ARTIFACT = "artifact"
"""The ``user_properties`` key of a file a test kept for people to look at."""

_kept: list[str] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pluggy.Result[pytest.TestReport], None]:
    """A failed test that used a Jupyter Server shows the newest lines of the server's log."""
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        funcargs = getattr(item, "funcargs", {})
        for title, text in log_tails(funcargs.values()):
            report.sections.append((title, text))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Collect the kept files (from pytest-xdist workers too: their reports carry the
    properties)."""
    if report.when == "call":
        _kept.extend(str(value) for key, value in report.user_properties if key == ARTIFACT)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print the path of every kept file."""
    for path in _kept:
        terminalreporter.write_line(f"browser test artifact: {path}")
