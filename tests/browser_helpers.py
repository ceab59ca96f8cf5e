"""A real browser for tests: Debian's headless Chromium driven by its ``chromedriver`` through
selenium, with the driver's path given explicitly (selenium-manager never runs, nothing is
downloaded). :func:`chromium` yields the driver and always ends the browser and the driver
(``quit``, then a kill of the driver's process group: the browser's processes are its
children). Imported as ``browser_helpers`` (``tests/`` is on ``sys.path``).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

BROWSER_ENV = "JCLI_TEST_CHROMIUM"
"""The Chromium program (default: ``chromium`` on ``PATH``, Debian's package)."""
DRIVER_ENV = "JCLI_TEST_CHROMEDRIVER"
"""Its driver (default: ``chromedriver`` on ``PATH``, Debian's ``chromium-driver``)."""

WINDOW = (1280, 900)
"""The browser window's fixed size (CSS pixels), so screenshots compare across runs."""
PAGE_LOAD_WAIT = 120.0
"""Seconds a page may take to load (JupyterLab's bundle on a loaded 2-core machine)."""
_MANAGER_ENV = "SE_MANAGER_PATH"
"""Where selenium looks for selenium-manager first."""


def chromium_paths() -> tuple[str, str] | None:
    """``(browser, driver)``: their programs, or None when either is missing."""
    browser = os.environ.get(BROWSER_ENV) or shutil.which("chromium")
    driver = os.environ.get(DRIVER_ENV) or shutil.which("chromedriver")
    if browser is None or driver is None:
        return None
    return browser, driver


@contextmanager
def chromium(profile: Path) -> Iterator[WebDriver]:
    """Headless Chromium (``--headless=new``, no sandbox, a fixed window size, its own
    ``profile`` folder, no background network), always ended at the end of the block.

    Raises:
        RuntimeError: Chromium or its driver is missing (see :func:`chromium_paths`).
    """
    from selenium import webdriver

    paths = chromium_paths()
    if paths is None:
        raise RuntimeError("chromium and chromedriver are needed (apt-get install chromium-driver)")
    browser, driver_path = paths
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
        f"--user-data-dir={profile}",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-crash-reporter",
        "--disable-breakpad",
    ):
        options.add_argument(argument)
    # The driver in its own process group, so that a kill of the group ends the browser
    # processes it started too, whatever ``quit`` managed.
    service = webdriver.ChromeService(
        executable_path=driver_path, popen_kw={"start_new_session": True}
    )
    # selenium-manager (which may download a browser or a driver) must never run: with the
    # driver's path given it is skipped; should that change, it fails on this missing file
    # instead of downloading anything.
    before = os.environ.get(_MANAGER_ENV)
    os.environ[_MANAGER_ENV] = str(profile / "no-selenium-manager")
    try:
        driver = webdriver.Chrome(options=options, service=service)
    except BaseException:
        if getattr(service, "process", None) is not None:
            _kill_group(service.process)
        raise
    finally:
        if before is None:
            del os.environ[_MANAGER_ENV]
        else:
            os.environ[_MANAGER_ENV] = before
    process = service.process
    try:
        driver.set_page_load_timeout(PAGE_LOAD_WAIT)
        driver.set_script_timeout(30)
        yield driver
    finally:
        try:
            driver.quit()
        finally:
            _kill_group(process)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the process group that ``process`` leads (the driver and what it started)."""
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    with suppress(subprocess.TimeoutExpired):
        process.wait(15)
