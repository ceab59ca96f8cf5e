"""The setup ledger: what ``j-cli setup`` added to each config file, so ``--remove`` takes back
exactly that and an entry under our name that setup did not write is recognised as someone
else's.

Where it lives (one JSON file per scope, written and deleted together with the configs):

- project scope: ``PROJECT/.j-cli/setup-state.json`` (``.j-cli/`` is what ``j-cli setup git``
  ignores);
- user scope: ``$XDG_STATE_HOME/jupyter-jcli/setup-state.json`` (``~/.local/state/...``; the
  platform's user state folder elsewhere).

Shape::

    {"schema_version": 1,
     "hosts": {HOST: {CONFIG_PATH: {
         "created": true,                                  # setup created the file
         "ending": "",                   # else: the line breaks its text ended with (TOML, git)
         "containers": [["mcpServers"], ...],              # key paths setup created
         "entries": {"mcpServers/jupyter-mcp": {...}},    # the exact value setup wrote
         "items": {"enabledMcpjsonServers": ["jupyter-mcp"]}}}}}   # list items setup added

A record only ever grows by what setup itself wrote; ``--remove`` drops the host's records and the
file goes once no host has any. A ledger that is missing or unreadable counts as empty: then only
an entry exactly equal to the one setup would write now counts as ours.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any, TypedDict, cast

from jupyter_jcli.hosts._files import read_text
from jupyter_jcli.hosts._model import FileChange, Scope, SetupError

__all__ = ["STATE_FILE", "FileRecord", "Ledger", "load_ledger", "state_path"]

STATE_FILE = "setup-state.json"


class FileRecord(TypedDict, total=False):
    """What setup added to one config file (see the module docstring)."""

    created: bool
    ending: str
    containers: list[list[str]]
    entries: dict[str, Any]
    items: dict[str, list[str]]


def state_path(scope: Scope, root: Path | None) -> Path:
    """The ledger file of ``scope``."""
    return scope.path(root, f".j-cli/{STATE_FILE}", _user_state_file)


def _user_state_file() -> Path:
    import platformdirs

    return Path(platformdirs.user_state_dir("jupyter-jcli", appauthor=False)) / STATE_FILE


class Ledger:
    """The ledger of one scope, loaded once per setup run and planned as one more file change."""

    def __init__(self, path: Path, before: str | None, data: dict[str, Any]) -> None:
        self.path = path
        self.before = before
        self._data = data
        self._original = copy.deepcopy(data)

    def record(self, host: str, config: Path) -> FileRecord:
        """The (mutable) record of ``config`` under ``host``, created empty when missing."""
        hosts = self._data.setdefault("hosts", {})
        files = hosts.setdefault(host, {})
        return cast(FileRecord, files.setdefault(str(config), {}))

    def peek(self, host: str, config: Path) -> FileRecord:
        """The record of ``config`` under ``host`` (an empty one when missing; not stored)."""
        found = self._data.get("hosts", {}).get(host, {}).get(str(config))
        return cast(FileRecord, found) if isinstance(found, dict) else FileRecord()

    def forget(self, host: str, config: Path) -> None:
        """Drop the record of ``config`` under ``host``."""
        files = self._data.get("hosts", {}).get(host)
        if isinstance(files, dict):
            files.pop(str(config), None)

    def change(self) -> FileChange | None:
        """The ledger file's own change, None when nothing changed."""
        hosts = self._data.get("hosts", {})
        for host in list(hosts):
            for config in list(hosts[host]):
                record = hosts[host][config]
                if not any(isinstance(v, str) or v for v in record.values()):
                    del hosts[host][config]
            if not hosts[host]:
                del hosts[host]
        if self._data == self._original:
            return None
        if not hosts:
            if self.before is None:
                return None
            return FileChange(self.path, self.before, None, (self.path.parent,))
        text = json.dumps(self._data, indent=2, sort_keys=True) + "\n"
        return None if text == self.before else FileChange(self.path, self.before, text)


def load_ledger(scope: Scope, root: Path | None) -> Ledger:
    """Read the ledger of ``scope`` (empty when missing or unreadable)."""
    path = state_path(scope, root)
    try:
        before = read_text(path)
    except SetupError:
        before = None
    data: dict[str, Any] = {"schema_version": 1, "hosts": {}}
    if before is not None:
        try:
            loaded = json.loads(before)
        except ValueError:
            loaded = None
        if isinstance(loaded, dict) and isinstance(loaded.get("hosts"), dict):
            data = loaded
    if before is not None and not os.path.isfile(path):
        before = None
    return Ledger(path, before, data)
