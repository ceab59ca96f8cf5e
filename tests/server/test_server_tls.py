"""Every client of the one Jupyter Server module verifies TLS the same way (marker
``server``): a notebook store's requests, as the kernel layer's (``tests/kernels/
test_server_faults.py``), trust a server's certificate only through ``verify`` (a CA bundle)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook.store import ContentsStore
from server_helpers import RunningServer, running_server, write_notebook

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command makes the test certificate")
    root, work = tmp_path_factory.mktemp("tls-root"), tmp_path_factory.mktemp("tls")
    write_notebook(root, ["x = 1"])
    with running_server(root, work, tls=True) as server:
        yield server


def test_a_contents_store_reads_over_tls_with_the_servers_ca_bundle(
    tls_server: RunningServer,
) -> None:
    assert tls_server.cafile is not None
    with ContentsStore(tls_server.url, tls_server.token, verify=str(tls_server.cafile)) as store:
        read = store.read(store.ref("nb.ipynb"))
    assert [cell["source"] for cell in read.notebook["cells"]] == ["x = 1"]


def test_a_contents_store_refuses_a_certificate_it_does_not_trust(
    tls_server: RunningServer, tmp_path: Path
) -> None:
    with (
        ContentsStore(tls_server.url, tls_server.token, base_dir=tmp_path) as store,
        pytest.raises(NotebookError) as caught,
    ):
        store.read(store.ref("nb.ipynb"))
    assert caught.value.code == ErrorCode.SERVER_UNREACHABLE
