"""Servers whose disk is not ours, for the contents-API store's tests (marker ``server``):
a plain Jupyter Server without collaboration (``contents_server``) and a real JupyterHub 6
with one user server (``jupyterhub``, ``hub_user_env``).

Import the fixtures into a test module (``from remote_servers import contents_server``).

The Hub (``start_hub``): ``python -m jupyterhub`` on 127.0.0.1 (free ports for the proxy,
its API and the Hub), the DummyAuthenticator allowing one user, the
SimpleLocalProcessSpawner running ``jupyterhub-singleuser`` as the current user with its
root in a temporary home folder, configurable-http-proxy from npm (installed once into a
cached prefix by ``hosts_helpers.npm_install``), and a service with the ``admin`` role whose
token (from config) starts the user's server and asks the Hub's REST API for an API token of
the user: the token a person copies from the Hub's token page. Every wait is bounded; the
teardown stops the Hub (which stops the user server and the proxy) and kills whatever of
them is left.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from server_helpers import NO_COLLABORATION, RunningServer, free_port, running_server

HUB_USER = "ana"
"""The Hub's one user."""
CHP_VERSION = "5.3.0"
"""The configurable-http-proxy release installed from npm."""
HUB_START_WAIT = 90.0
"""Seconds the Hub (with its proxy) and then the user's server may take to answer."""
HUB_STOP_WAIT = 30.0
"""Seconds the Hub may take to stop its user server and proxy after SIGTERM."""


@pytest.fixture(scope="session")
def contents_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """A Jupyter Server on 127.0.0.1 without real-time collaboration, its root a temporary
    folder that no test uses as a local notebook folder."""
    work = tmp_path_factory.mktemp("contents-server")
    root = work / "root"
    root.mkdir()
    with running_server(root, work, extra_args=NO_COLLABORATION) as server:
        yield server


@dataclass
class RunningHub:
    """A JupyterHub and its one user server.

    Attributes:
        url: the Hub's public URL (``http://127.0.0.1:PORT/``).
        user: the user's name.
        user_url: the user server's base URL through the proxy (``.../user/NAME/``).
        token: an API token of the user, made through the Hub's REST API.
        root: the user server's root folder (its home).
        process: the Hub process.
        log: the Hub's log file (its proxy and the user server log there too).
    """

    url: str
    user: str
    user_url: str
    token: str
    root: Path
    process: subprocess.Popen[bytes]
    log: Path
    admin_token: str
    work: Path

    def stop(self) -> None:
        """Stop the Hub (SIGTERM: it stops the user server and the proxy), then kill what is
        left of the three."""
        leftovers = _pids(self.work)
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(HUB_STOP_WAIT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(HUB_STOP_WAIT)
        for pid in leftovers | _pids(self.work):
            _kill(pid)


def _pids(work: Path) -> set[int]:
    """The pids of the proxy and the user server the Hub recorded."""
    found = set()
    for name in ("jupyterhub-proxy.pid", "user-server.pid"):
        with contextlib.suppress(OSError, ValueError):
            found.add(int((work / name).read_text().strip()))
    return found


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)  # both were started in a session of their own


def _config(work: Path, chp: Path, admin_token: str) -> tuple[Path, int]:
    port, hub_port, api_port = free_port(), free_port(), free_port()
    home = work / "home" / "{username}"
    singleuser = Path(sys.executable).with_name("jupyterhub-singleuser")
    lines = [
        f"c.JupyterHub.bind_url = 'http://127.0.0.1:{port}'",
        f"c.JupyterHub.hub_bind_url = 'http://127.0.0.1:{hub_port}'",
        f"c.ConfigurableHTTPProxy.api_url = 'http://127.0.0.1:{api_port}'",
        f"c.ConfigurableHTTPProxy.command = [{str(chp)!r}]",
        f"c.ConfigurableHTTPProxy.pid_file = {str(work / 'jupyterhub-proxy.pid')!r}",
        f"c.JupyterHub.db_url = 'sqlite:///{work / 'jupyterhub.sqlite'}'",
        f"c.JupyterHub.cookie_secret_file = {str(work / 'cookie_secret')!r}",
        f"c.JupyterHub.pid_file = {str(work / 'jupyterhub.pid')!r}",
        "c.JupyterHub.authenticator_class = 'dummy'",
        f"c.Authenticator.allowed_users = {{{HUB_USER!r}}}",
        "c.JupyterHub.spawner_class = 'simple'",
        f"c.SimpleLocalProcessSpawner.home_dir_template = {str(home)!r}",
        f"c.Spawner.notebook_dir = {str(home)!r}",
        f"c.Spawner.cmd = [{str(singleuser)!r}]",
        f"c.Spawner.args = {[*NO_COLLABORATION, '--ServerApp.allow_root=True']!r}",
        "c.Spawner.ip = '127.0.0.1'",
        f"c.Spawner.start_timeout = {int(HUB_START_WAIT)}",
        f"c.Spawner.http_timeout = {int(HUB_START_WAIT)}",
        f"c.JupyterHub.services = [{{'name': 'jcli-test', 'api_token': {admin_token!r}}}]",
        "c.JupyterHub.load_roles = [{'name': 'admin', 'services': ['jcli-test']}]",
    ]
    config = work / "jupyterhub_config.py"
    config.write_text("\n".join(lines) + "\n")
    return config, port


def _wait(what: str, hub: subprocess.Popen[bytes], log: Path, ready: object) -> None:
    deadline = time.monotonic() + HUB_START_WAIT
    while time.monotonic() < deadline:
        if hub.poll() is not None:
            raise RuntimeError(f"the Hub exited: {log.read_text()[-4000:]}")
        try:
            if ready():  # type: ignore[operator]
                return
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"{what} did not answer within {HUB_START_WAIT:g} s")


def start_hub(work: Path, chp: Path) -> RunningHub:
    """Start a Hub under ``work``, start its user's server, make the user's API token.

    Raises:
        RuntimeError: the Hub exited, or it or the user server did not answer in time (the
            Hub is stopped then).
    """
    admin_token = secrets.token_hex(16)
    config, port = _config(work, chp, admin_token)
    root = work / "home" / HUB_USER
    root.mkdir(parents=True)
    log = work / "jupyterhub.log"
    with log.open("ab") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(config)],
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=work,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}/"
    hub = RunningHub(url, HUB_USER, f"{url}user/{HUB_USER}/", "", root, process, log,
                     admin_token, work)  # fmt: skip
    try:
        _start_user(hub)
    except BaseException:
        hub.stop()
        raise
    return hub


def _start_user(hub: RunningHub) -> None:
    api = httpx.Client(
        base_url=hub.url + "hub/api/",
        headers={"Authorization": f"token {hub.admin_token}"},
        timeout=30.0,
    )
    with api:
        _wait("the Hub", hub.process, hub.log, lambda: api.get("").status_code == 200)
        if api.get(f"users/{hub.user}").status_code == 404:
            assert api.post(f"users/{hub.user}").status_code == 201
        started = api.post(f"users/{hub.user}/server")
        assert started.status_code in (201, 202), started.text

        def user_ready() -> bool:
            model = api.get(f"users/{hub.user}").json()
            server = model.get("servers", {}).get("", {})
            pid = server.get("state", {}).get("pid")
            if pid:
                (hub.work / "user-server.pid").write_text(str(pid))
            return bool(server.get("ready"))

        _wait("the user's server", hub.process, hub.log, user_ready)
        made = api.post(f"users/{hub.user}/tokens", json={"note": "jupyter-jcli tests"})
        assert made.status_code == 201, made.text
        hub.token = made.json()["token"]


@pytest.fixture(scope="session")
def jupyterhub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningHub]:
    """A real JupyterHub 6 on 127.0.0.1 with its user's server started (module docstring)."""
    from hosts.hosts_helpers import npm_install

    chp = npm_install({"configurable-http-proxy": CHP_VERSION})
    binary = chp / "node_modules" / ".bin" / "configurable-http-proxy"
    hub = start_hub(tmp_path_factory.mktemp("jupyterhub"), binary)
    try:
        yield hub
    finally:
        hub.stop()


@pytest.fixture
def hub_user_env(jupyterhub: RunningHub, monkeypatch: pytest.MonkeyPatch) -> RunningHub:
    """The Hub, with the user's server URL and token in ``JUPYTER_JCLI_SERVER_URL`` and
    ``JUPYTER_JCLI_SERVER_TOKEN``, as a user pointing jupyter-jcli at their server sets
    them."""
    from jupyter_jcli.kernels import SERVER_TOKEN_ENV, SERVER_URL_ENV

    monkeypatch.setenv(SERVER_URL_ENV, jupyterhub.user_url)
    monkeypatch.setenv(SERVER_TOKEN_ENV, jupyterhub.token)
    return jupyterhub


def hub_log_tail(hub: RunningHub) -> str:
    """The newest lines of the Hub's log, for a failing assertion."""
    return json.dumps(hub.log.read_bytes()[-4000:].decode("utf-8", "replace"))
