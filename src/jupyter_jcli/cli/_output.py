"""``j-cli output show|clean``: read the saved outputs of a run, and apply retention.

``show MANIFEST`` lists a run's outputs (the protocol's directory); ``--output K`` reads one
with the options and codes of ``j-cli notebook output`` (the same library code:
:mod:`jupyter_jcli.outputs.manifest`). ``clean`` deletes the complete runs of
``./.j-cli/outputs`` past the retention rules (``--dry-run`` reports only); see
:mod:`jupyter_jcli.runs`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import click

from jupyter_jcli.cli._emit import echo, emit_json, json_mode, ok_document
from jupyter_jcli.cli._notebook import read_window_options
from jupyter_jcli.cli._params import FILE_PATH, single

__all__ = ["output"]


@click.group("output")
def output() -> None:
    """Run outputs saved under ./.j-cli/outputs/ by `j-cli exec` and plain script runs."""


@output.command("show")
@click.argument("manifests", metavar="MANIFEST...", nargs=-1, required=True, type=FILE_PATH)
@single("--output", "output_index", type=int, metavar="K", help="Read output K (zero-based).")
@read_window_options
def show_command(
    *,
    manifests: tuple[str, ...],
    output_index: int | None,
    options: dict[str, Any],
) -> None:
    """List a run's outputs (MANIFEST: its manifest.json or folder), or read one with --output.

    Several MANIFESTs (as a shell expands .j-cli/outputs/*/manifest.json) list each run's
    outputs, in the order given (-j: one document, {"runs": [listing, ...]}); --output reads
    from one MANIFEST. Reads as `j-cli notebook output` does: a text page, an image, JSON or
    a traceback.
    """
    from jupyter_jcli.errors import UsageError
    from jupyter_jcli.outputs.manifest import open_manifest

    if output_index is None and options:
        raise UsageError("--mime, --supported-mime, --offset and --limit need --output K.")
    if output_index is not None and len(manifests) > 1:
        raise UsageError(
            f"--output K reads from one run, but {len(manifests)} MANIFESTs were given: "
            "give the one to read.",
            {"manifests": list(manifests)},
        )
    runs = [(manifest, open_manifest(manifest)) for manifest in manifests]  # all, or none
    if output_index is None:
        listings = [(manifest, run.list_outputs()) for manifest, run in runs]
        if json_mode():
            if len(listings) == 1:
                emit_json(listings[0][1])
            else:
                emit_json(ok_document(runs=[listing for _, listing in listings]))
            return
        for number, (manifest, listing) in enumerate(listings):
            if number:
                echo("")
            _listing_lines(listing, manifest)
        return
    manifest, run = runs[0]
    result = run.read_output(output_index, **options)
    if json_mode():
        emit_json(result)
    else:
        _render(result, manifest)


def _show(manifest: str, *extra: str) -> str:
    from jupyter_jcli.cli._render import j_cli

    return j_cli("output", "show", manifest, *extra)


def _listing_lines(listing: Mapping[str, Any], manifest: str) -> None:
    from jupyter_jcli.cli._render import output_summary

    source = listing.get("source") or {}
    count = listing.get("output_count", 0)
    plural = "" if count == 1 else "s"
    echo(f"run {source.get('run_id')} ({source.get('created')}): {count} output{plural}")
    for entry in listing.get("outputs") or []:
        kind = str(entry.get("output_type", "?"))
        echo(f"  {entry.get('output_index'):>3}  {kind:<16} {output_summary(entry)}")
    if count:
        echo(f"read one: {_show(manifest, '--output', '0')}")


def _render(result: Mapping[str, Any], manifest: str) -> None:
    from jupyter_jcli.cli._render import echo_read, next_page

    index = str((result.get("source") or {}).get("output_index", 0))
    read = partial(_show, manifest, "--output", index)
    echo_read(result, f"output {index}", lambda window: next_page(window, read))


@output.command("clean")
@click.option("--dry-run", is_flag=True, help="Report what would be deleted; delete nothing.")
@single("--days", type=float, metavar="D", help="Delete runs older than D days (default 7).")
@single("--max-runs", type=int, metavar="N", help="Keep the newest N runs (default 50).")
def clean_command(*, dry_run: bool, days: float | None, max_runs: int | None) -> None:
    """Delete complete runs in ./.j-cli/outputs older than --days or beyond the newest
    --max-runs ($JCLI_OUTPUT_RETENTION_DAYS, $JCLI_OUTPUT_MAX_RUNS). Anything incomplete,
    unknown or symlinked is kept and reported."""
    import os
    from pathlib import Path

    from jupyter_jcli.runs import clean_runs

    report = clean_runs(
        Path(os.path.realpath(os.getcwd())), days=days, max_runs=max_runs, dry_run=dry_run
    )
    if json_mode():
        emit_json(report.to_dict())
        return
    verb = "would delete" if dry_run else "deleted"
    if report.folder is None:
        echo("no .j-cli/outputs here: nothing to clean")
        return
    echo(f"{report.folder}: {report.runs} runs, {verb} {len(report.deleted)}")
    for path in report.deleted:
        echo(f"  {verb} {path}")
    for kept in report.kept:
        echo(f"  kept {kept.path}: {kept.reason}{' (' + kept.detail + ')' if kept.detail else ''}")
