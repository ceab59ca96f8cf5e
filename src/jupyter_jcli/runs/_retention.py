"""Retention of saved runs: which saved runs may go, and deleting exactly those.

A run is *eligible* when it is a complete, recognized run group and it is older than the
retention age (default 7 days, ``JCLI_OUTPUT_RETENTION_DAYS``) or not among the newest runs
(default 50, ``JCLI_OUTPUT_MAX_RUNS``); the run just saved never is. Recognized means: a
real folder (not a symlink) holding a regular ``manifest.json`` of ours (``managed_by``,
``kind``, ``schema_version``) whose ``status`` is ``complete``, whose ``run_id`` is the
folder's name and whose ``created`` parses, and nothing else but the files its manifest
lists, each a regular file. Runs saved by the reference jupyter-jcli 0.9.7 are recognized
too (read in our shape by :func:`jupyter_jcli.outputs.manifest.parse_manifest`), when their
``source.run_id`` is the folder's name and every raster reference names a file of the run.
Every other entry of ``.j-cli/outputs`` is kept and reported with its reason:

=================  ===========================================================
reason             the entry
=================  ===========================================================
``symlink``        is a symlink, or holds one
``not_a_folder``   is a file or something else that is not a folder
``no_manifest``    has no ``manifest.json`` (a run that did not finish saving)
``not_ours``       has a manifest that is not a run manifest of jupyter-jcli, or not
                   of the run in this folder
``incomplete``     has a manifest whose ``status`` is not ``complete``
``foreign_files``  holds files (or folders) its manifest does not list
``uncertain``      could not be inspected (permissions, a bad ``created`` time)
=================  ===========================================================

A symlinked ``.j-cli`` or ``.j-cli/outputs`` is refused (``RUN_FOLDER_UNSAFE``). There is no
daemon: retention runs after each newly saved run and on ``j-cli output clean``.
"""

from __future__ import annotations

import math
import os
import stat
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from jupyter_jcli._json import json_fields
from jupyter_jcli.errors import (
    SCHEMA_VERSION,
    ErrorCode,
    JcliError,
    NotebookError,
    OutputProtocolError,
    UsageError,
)
from jupyter_jcli.notebook.io import read_text_file
from jupyter_jcli.outputs.manifest import MANIFEST_NAME, parse_manifest
from jupyter_jcli.runs._folders import outputs_folder, remove_saved_run_folder

__all__ = [
    "DEFAULT_MAX_RUNS",
    "DEFAULT_RETENTION_DAYS",
    "MAX_RUNS_ENV",
    "RETENTION_DAYS_ENV",
    "CleanReport",
    "KeptEntry",
    "clean_runs",
    "retention_settings",
]

DEFAULT_RETENTION_DAYS = 7.0
"""Runs older than this many days are eligible."""
DEFAULT_MAX_RUNS = 50
"""Runs beyond the newest this many are eligible."""
RETENTION_DAYS_ENV = "JCLI_OUTPUT_RETENTION_DAYS"
"""Environment variable overriding :data:`DEFAULT_RETENTION_DAYS`."""
MAX_RUNS_ENV = "JCLI_OUTPUT_MAX_RUNS"
"""Environment variable overriding :data:`DEFAULT_MAX_RUNS`."""
MAX_ENTRIES = 10_000
"""The most entries of ``.j-cli/outputs`` one clean looks at (a bound on its work)."""
_MAX_FILES = 1_000

KeepReason = Literal[
    "symlink", "not_a_folder", "no_manifest", "not_ours", "incomplete", "foreign_files",
    "uncertain",
]  # fmt: skip


@dataclass(frozen=True)
class KeptEntry:
    """An entry of ``.j-cli/outputs`` that retention does not touch, and why."""

    path: Path
    reason: KeepReason
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return json_fields(self)


@dataclass(frozen=True)
class _SavedRun:
    path: Path
    run_id: str
    created: float
    names: list[str]


@dataclass
class CleanReport:
    """What one clean found and did.

    Attributes:
        folder: ``.j-cli/outputs`` (None when there is none: nothing to clean).
        dry_run: nothing was deleted; ``deleted`` lists what would be.
        days: the retention age applied, in days.
        max_runs: the number of newest runs kept.
        runs: complete, recognized runs found (before deleting).
        deleted: saved runs deleted (or, with ``dry_run``, eligible).
        kept: entries kept for a reason (:class:`KeptEntry`), including eligible runs that
            could not be removed (``uncertain``).
        truncated: more than :data:`MAX_ENTRIES` entries: only the first were looked at.
    """

    folder: Path | None
    dry_run: bool
    days: float
    max_runs: int
    runs: int = 0
    deleted: list[Path] = field(default_factory=list)
    kept: list[KeptEntry] = field(default_factory=list)
    truncated: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``j-cli output clean``."""
        return {
            "schema_version": SCHEMA_VERSION,
            "status": "ok",
            "operation": "output_clean",
            "folder": None if self.folder is None else str(self.folder),
            "dry_run": self.dry_run,
            "days": self.days,
            "max_runs": self.max_runs,
            "runs": self.runs,
            "deleted" if not self.dry_run else "would_delete": [str(p) for p in self.deleted],
            "kept": [entry.to_dict() for entry in self.kept],
            "truncated": self.truncated,
        }


def _number(name: str, raw: str, *, integer: bool) -> float:
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        value = -1
    if not math.isfinite(value) or value < 0:
        kind = "a non-negative integer" if integer else "a non-negative number of days"
        message = f"{name} must be {kind}, not {raw!r}."
        raise JcliError(ErrorCode.OUTPUT_CLEAN_CONFIG_INVALID, message, {name: raw})
    return value


def retention_settings(days: float | None = None, max_runs: int | None = None) -> tuple[float, int]:
    """The retention age (days) and run count: the arguments, else the environment
    variables, else the defaults.

    Raises:
        UsageError: ``USAGE_ERROR`` for a negative argument.
        JcliError: ``OUTPUT_CLEAN_CONFIG_INVALID`` for an environment value that is not a
            non-negative number (an integer for the run count).
    """
    if days is None:
        raw = os.environ.get(RETENTION_DAYS_ENV, "").strip()
        days = _number(RETENTION_DAYS_ENV, raw, integer=False) if raw else DEFAULT_RETENTION_DAYS
    if max_runs is None:
        raw = os.environ.get(MAX_RUNS_ENV, "").strip()
        max_runs = int(_number(MAX_RUNS_ENV, raw, integer=True)) if raw else DEFAULT_MAX_RUNS
    if days < 0 or max_runs < 0:
        raise UsageError("--days and --max-runs must not be negative.", {"days": days})
    return float(days), int(max_runs)


def _created(value: object) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _not_this_saved_run(manifest: dict[str, Any], folder_name: str) -> str:
    """Why a manifest does not describe the run of its folder ("" when it does): its
    ``run_id`` (and, for a run the reference saved, its ``source.run_id``) must be the
    folder's name, and every raster reference of a reference run must be a file of it."""
    if manifest.get("run_id") != folder_name:
        return f"run_id {manifest.get('run_id')!r} is not the folder's name"
    reference = manifest.get("reference")
    if isinstance(reference, dict):
        if reference.get("source_run_id") != folder_name:
            return f"source.run_id {reference.get('source_run_id')!r} is not the folder's name"
        problems = reference.get("problems") or []
        if problems:
            first = problems[0]
            return f"output {first['output_index']} {first['mime_type']}: {first['reason']}"
    return ""


def _inspect(path: Path) -> _SavedRun | KeptEntry:
    """Classify one entry of ``.j-cli/outputs``."""
    try:
        info = os.lstat(path)
    except OSError as err:
        return KeptEntry(path, "uncertain", err.strerror or str(err))
    if stat.S_ISLNK(info.st_mode):
        return KeptEntry(path, "symlink")
    if not stat.S_ISDIR(info.st_mode):
        return KeptEntry(path, "not_a_folder")
    try:
        names = os.listdir(path)
    except OSError as err:
        return KeptEntry(path, "uncertain", err.strerror or str(err))
    if len(names) > _MAX_FILES:
        return KeptEntry(path, "foreign_files", f"{len(names)} entries")
    if MANIFEST_NAME not in names:
        return KeptEntry(path, "no_manifest")
    kinds: dict[str, int] = {}
    for name in names:
        try:
            kinds[name] = os.lstat(path / name).st_mode
        except OSError as err:
            return KeptEntry(path, "uncertain", f"{name}: {err.strerror or err}")
    links = sorted(name for name, mode in kinds.items() if stat.S_ISLNK(mode))
    if links:
        return KeptEntry(path, "symlink", ", ".join(links[:5]))
    if not stat.S_ISREG(kinds[MANIFEST_NAME]):
        return KeptEntry(path, "no_manifest", "manifest.json is not a regular file")
    try:
        manifest = parse_manifest(read_text_file(path / MANIFEST_NAME), path / MANIFEST_NAME)
    except (NotebookError, OutputProtocolError) as err:
        return KeptEntry(path, "not_ours", str(err.code))
    if manifest.get("status") != "complete":
        return KeptEntry(path, "incomplete", f"status {manifest.get('status')!r}")
    mismatch = _not_this_saved_run(manifest, path.name)
    if mismatch:
        return KeptEntry(path, "not_ours", mismatch)
    listed = {entry["name"] for entry in manifest.get("files", [])} | {MANIFEST_NAME}
    foreign = sorted(
        name for name, mode in kinds.items() if name not in listed or not stat.S_ISREG(mode)
    )
    if foreign:
        return KeptEntry(path, "foreign_files", ", ".join(foreign[:5]))
    created = _created(manifest.get("created"))
    if created is None:
        return KeptEntry(path, "uncertain", "no readable 'created' time")
    return _SavedRun(path, manifest["run_id"], created, sorted(kinds))


def clean_runs(
    cwd: Path,
    *,
    days: float | None = None,
    max_runs: int | None = None,
    dry_run: bool = False,
    keep: Path | None = None,
    now: float | None = None,
) -> CleanReport:
    """Delete the eligible runs of ``<cwd>/.j-cli/outputs`` (see the module docstring).

    Args:
        cwd: the folder whose ``.j-cli/outputs`` is cleaned (absolute).
        days: retention age in days (default: environment, else 7).
        max_runs: newest runs kept (default: environment, else 50).
        dry_run: report only.
        keep: a saved run's folder never eligible (the run just saved).
        now: the current time, seconds since the epoch (default now).

    Raises:
        JcliError: ``RUN_FOLDER_UNSAFE`` (a symlinked ``.j-cli`` or ``outputs``);
            ``USAGE_ERROR`` (a negative argument); ``OUTPUT_CLEAN_CONFIG_INVALID`` (a bad
            environment setting).
    """
    age_days, newest = retention_settings(days, max_runs)
    folder = outputs_folder(cwd, create=False)
    report = CleanReport(folder, dry_run, age_days, newest)
    if folder is None:
        return report
    try:
        with os.scandir(folder) as scan:
            entries: list[Path] = []
            for entry in scan:
                if len(entries) >= MAX_ENTRIES:
                    report.truncated = True
                    break
                entries.append(folder / entry.name)
    except OSError as err:
        report.kept.append(KeptEntry(folder, "uncertain", err.strerror or str(err)))
        return report
    runs: list[_SavedRun] = []
    for path in sorted(entries):
        found = _inspect(path)
        if isinstance(found, KeptEntry):
            report.kept.append(found)
        else:
            runs.append(found)
    report.runs = len(runs)
    cutoff = (time.time() if now is None else now) - age_days * 86_400
    runs.sort(key=lambda run: (run.created, run.run_id), reverse=True)
    for position, run in enumerate(runs):
        if keep is not None and run.path == keep:
            continue
        if position < newest and run.created >= cutoff:
            continue
        if dry_run or remove_saved_run_folder(run.path, run.names):
            report.deleted.append(run.path)
        else:
            report.kept.append(KeptEntry(run.path, "uncertain", "could not be removed"))
    return report
