"""Fixtures of the summary tests: a local Messages API and an environment without credentials."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from fake_messages_api import CREDENTIAL_ENV, HANG_LIMIT, FakeMessagesAPI, handler_for


@pytest.fixture(autouse=True)
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No credentials, profiles, proxies or summary settings from the machine running tests."""
    for name in CREDENTIAL_ENV:
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "anthropic-config"
    config.mkdir()
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(config))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("JUPYTER_JCLI_CACHE_DIR", str(tmp_path / "jcli-cache"))


@pytest.fixture
def api() -> Iterator[FakeMessagesAPI]:
    """A running local Messages API; shut down (and any hanging answer released) after."""
    state = FakeMessagesAPI()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(state))
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=HANG_LIMIT)


@pytest.fixture
def credentials(api: FakeMessagesAPI, monkeypatch: pytest.MonkeyPatch) -> FakeMessagesAPI:
    """A dummy API key and the SDK's base URL pointed at the local API."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-dummy")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
    return api
