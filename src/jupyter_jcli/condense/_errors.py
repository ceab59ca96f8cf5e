"""Error outputs: ``ename: evalue`` and the traceback frames that matter.

An nbformat ``error`` output holds ``ename``, ``evalue`` and ``traceback``, a list of strings
that Jupyter front ends join with ``\\n`` and print through a terminal emulator (IPython
colours them with ANSI sequences). IPython's layout (``IPython.core.ultratb``) is one entry per
block: an optional rule of dashes, a header with ``Traceback (most recent call last)``, one
entry per frame, the final ``ename: evalue`` line; chained exceptions repeat the pattern after
an entry saying ``The above exception was the direct cause...`` or ``During handling of the
above exception...``. Plain Python tracebacks in a single entry are split on their
``File "..."`` lines.

What is kept of the last (raising) chain: the first frame (where the cell called in), the last
frames in user code, the last frame (where it was raised), and the final error line; earlier
chains are summarised by their final line. Omitted frames are counted in place. Long frames
keep their location line and the lines around the ``---->`` arrow.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyter_jcli.condense._terminal import render_terminal

__all__ = ["ErrorView", "render_error"]

_USER_FRAMES = 2  # last frames in user code kept
_FRAME_LINES = 8  # lines kept of a long frame
_CHAIN = re.compile(
    r"^\s*(The above exception was the direct cause of the following exception"
    r"|During handling of the above exception, another exception occurred)"
)
_HEADER = re.compile(r"Traceback\s*\(most recent call last\)")
_RULE = re.compile(r"^\s*-{10,}\s*$")
_FILE_LINE = re.compile(r'^\s*File "')
_LIBRARY = re.compile(
    r"site-packages|dist-packages|[/\\]lib[/\\]python\d|[/\\]Lib[/\\]|<frozen |"
    r"[/\\]IPython[/\\]core[/\\]"
)
_ARROW = re.compile(r"^\s*-+>")


@dataclass(frozen=True)
class ErrorView:
    """A condensed error: the text and how many frames were left out."""

    text: str
    frames: int
    omitted_frames: int


def _text_of(value: object) -> str:
    return value if isinstance(value, str) else ""


def _split_single(entry: str) -> list[str]:
    """A whole plain-Python traceback in one string, split into header, frames and finals."""
    blocks: list[list[str]] = [[]]
    for line in entry.rstrip("\n").split("\n"):
        if not line.strip():
            continue
        starts_block = _FILE_LINE.match(line) or _HEADER.search(line) or _CHAIN.match(line)
        # An unindented line after a frame's source lines is the chain's final error line.
        ends_frame = (
            not line.startswith((" ", "\t"))
            and bool(blocks[-1])
            and _FILE_LINE.match(blocks[-1][0]) is not None
        )
        if starts_block or ends_frame:
            blocks.append([line])
        else:
            blocks[-1].append(line)
    return ["\n".join(b) for b in blocks if b]


def _is_header(entry: str) -> bool:
    lines = [line for line in entry.split("\n") if line.strip()]
    return bool(lines) and all(_RULE.match(x) or _HEADER.search(x) for x in lines)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _chains(entries: list[str]) -> list[list[str]]:
    chains: list[list[str]] = [[]]
    for entry in entries:
        if _CHAIN.match(entry):
            chains.append([])
        elif entry.strip() and not _RULE.match(entry):
            chains[-1].append(entry)
    return [c for c in chains if c]


def _shorten_frame(frame: str) -> str:
    lines = frame.rstrip("\n").split("\n")
    if len(lines) <= _FRAME_LINES:
        return "\n".join(lines)
    arrow = next((i for i, line in enumerate(lines) if _ARROW.match(line)), None)
    if arrow is None:
        kept = lines[: _FRAME_LINES - 1]
        return "\n".join([*kept, f"  [… {len(lines) - len(kept)} lines …]"])
    start = max(1, arrow - 2)
    stop = min(len(lines), start + _FRAME_LINES - 2)
    out = [lines[0]]
    if start > 1:
        out.append(f"  [… {start - 1} lines …]")
    out.extend(lines[start:stop])
    if stop < len(lines):
        out.append(f"  [… {len(lines) - stop} lines …]")
    return "\n".join(out)


def _select(frames: list[str]) -> list[int]:
    if not frames:
        return []
    user = [i for i, f in enumerate(frames) if not _LIBRARY.search(f.split("\n", 1)[0])]
    keep = {0, len(frames) - 1, *user[-_USER_FRAMES:]}
    return sorted(keep)


def render_error(output: Mapping[str, Any]) -> ErrorView:
    """Condense an nbformat ``error`` output (not yet cut to a budget).

    Args:
        output: the output dict; missing or mistyped fields are tolerated.

    Returns:
        The text: ``ename: evalue``, then the kept frames with ``[… N frames omitted …]``
        in the gaps, then the final traceback line when it says more than ``ename: evalue``.
    """
    ename = _text_of(output.get("ename")) or "Error"
    evalue = render_terminal(_text_of(output.get("evalue")))
    summary = f"{ename}: {evalue}" if evalue else ename
    raw = output.get("traceback")
    entries = (
        [render_terminal(e) for e in raw if isinstance(e, str)] if isinstance(raw, list) else []
    )
    if len(entries) == 1 and "\n" in entries[0].strip():
        entries = _split_single(entries[0])
    chains = _chains(entries)
    lines = [summary]
    if not chains:
        return ErrorView(summary, 0, 0)
    for earlier in chains[:-1]:
        frames = [e for e in earlier if not _is_header(e)]
        final = frames[-1].strip() if frames else ""
        lines.append(
            f"[chained from an earlier exception: {final.splitlines()[0] if final else '?'}"
            f" ({_plural(max(0, len(frames) - 1), 'frame')} not shown)]"
        )
    last = [e for e in chains[-1] if not _is_header(e)]
    final_line = last.pop().strip() if last else ""
    kept = _select(last)
    previous = -1
    for index in kept:
        if index - previous > 1:
            lines.append(f"[… {_plural(index - previous - 1, 'frame')} omitted …]")
        lines.append(_shorten_frame(last[index]))
        previous = index
    omitted = len(last) - len(kept)
    if final_line and final_line.replace(" ", "") != summary.replace(" ", ""):
        lines.append(final_line)
    return ErrorView("\n".join(lines), len(last), omitted)
