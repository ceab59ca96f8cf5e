"""Managed text blocks: the lines between our begin and end markers, and nothing else.

A block looks like (``#`` is the file's comment prefix)::

    # >>> jupyter-jcli (managed by `j-cli setup`; do not edit) >>>
    ...
    # <<< jupyter-jcli <<<

Setting a block replaces an existing one in place, or appends it (after one blank line);
removing it deletes exactly the marker lines, the lines between them and the one blank line
setup added before it, so set-then-remove gives back the original text.
"""

from __future__ import annotations

import re
from pathlib import Path

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.hosts._files import read_text
from jupyter_jcli.hosts._model import FileChange, SetupError

__all__ = [
    "BLOCK_BEGIN",
    "BLOCK_END",
    "find_block",
    "plan_reference_ignore",
    "remove_block",
    "set_block",
]

BLOCK_BEGIN = ">>> jupyter-jcli (managed by `j-cli setup`; do not edit) >>>"
BLOCK_END = "<<< jupyter-jcli <<<"


def find_block(text: str, prefix: str = "#") -> tuple[int, int] | None:
    """Line indices ``(begin, end)`` of the block's marker lines, None without a block.

    Raises:
        SetupError: ``CONFIG_INVALID`` when a begin marker has no end marker (or the reverse).
    """
    lines = text.splitlines()
    begin_line, end_line = f"{prefix} {BLOCK_BEGIN}", f"{prefix} {BLOCK_END}"
    begins = [i for i, line in enumerate(lines) if line.strip() == begin_line]
    ends = [i for i, line in enumerate(lines) if line.strip() == end_line]
    if not begins and not ends:
        return None
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise SetupError(
            ErrorCode.CONFIG_INVALID,
            "The jupyter-jcli managed block is damaged (unmatched markers); fix it by hand.",
            {"begin_lines": [i + 1 for i in begins], "end_lines": [i + 1 for i in ends]},
        )
    return begins[0], ends[0]


def set_block(text: str | None, body: list[str], prefix: str = "#") -> str:
    """``text`` with the managed block holding exactly ``body`` (lines without newlines)."""
    block = [f"{prefix} {BLOCK_BEGIN}", *body, f"{prefix} {BLOCK_END}"]
    current = text or ""
    newline = "\r\n" if "\r\n" in current else "\n"
    found = find_block(current, prefix)
    lines = current.splitlines()
    if found is not None:
        begin, end = found
        lines[begin : end + 1] = block
        joined = newline.join(lines)
        return joined + newline if current.endswith(("\n", "\r")) or not current else joined
    if not current:
        return newline.join(block) + newline
    separator = "" if current.endswith(("\n", "\r")) else newline
    return current + separator + newline + newline.join(block) + newline


def remove_block(text: str, prefix: str = "#") -> str:
    """``text`` without the managed block (and the blank line setup put before it)."""
    found = find_block(text, prefix)
    if found is None:
        return text
    begin, end = found
    lines = text.splitlines(keepends=True)
    start = begin
    if start > 0 and not lines[start - 1].strip():
        start -= 1
    kept = lines[:start] + lines[end + 1 :]
    return "".join(kept)


def _reference_block(component: str, entries: list[str]) -> re.Pattern[str]:
    lines = [f"# >>> j-cli local {component} >>>", *entries, f"# <<< j-cli local {component} <<<"]
    body = "\n".join(re.escape(line) for line in lines)
    return re.compile(rf"(?m)(?:^\n)?^{body}(?:\n|\Z)")


def plan_reference_ignore(
    folder: Path, blocks: dict[str, list[str]], prune: tuple[Path, ...] = ()
) -> FileChange | None:
    """The change that takes out of ``folder/.gitignore`` the blocks jupyter-jcli 0.9.7's
    ``--local`` setup wrote there (``# >>> j-cli local COMPONENT >>>``, its exact lines, ``# <<<
    j-cli local COMPONENT <<<``, and the blank line it put before), for each ``component ->
    lines`` of ``blocks``; a block with other lines is the person's and stays. A file left empty
    is deleted (that setup deletes it too), with the ``prune`` folders when they are empty.
    None when there is nothing of it.

    Raises:
        SetupError: ``CONFIG_INVALID`` when the file exists but cannot be read as text.
    """
    path = folder / ".gitignore"
    before = read_text(path)
    if before is None:
        return None
    after = before
    for component, entries in blocks.items():
        after = _reference_block(component, entries).sub("", after, count=1)
    if after == before:
        return None
    if not after.strip():
        return FileChange(path, before, None, prune)
    return FileChange(path, before, after)
