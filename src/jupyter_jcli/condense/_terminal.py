"""Terminal semantics for saved text: apply ``\\r`` and ``\\b``, drop every control sequence.

A kernel's stream output is what a program wrote to a terminal. To show a model what a person
would have seen, each line is rendered as a terminal would render it:

- carriage return (``\\r``) moves the cursor to the start of the line; later characters
  overwrite earlier ones (a progress bar redrawn 10,000 times ends as its final state);
- backspace (``\\b``) moves the cursor one column left (never past column 0);
- erase in line (``CSI K``, ``CSI 0 K``, ``CSI 1 K``, ``CSI 2 K``) blanks part of the line;
- every other control sequence is removed, not interpreted: CSI (``ESC [`` or 8-bit ``0x9B``,
  ECMA-48 section 5.4), OSC (``ESC ]``, terminated by BEL or ST, so OSC 8 hyperlinks keep only
  their visible text), DCS/SOS/PM/APC strings (``ESC P``, ``ESC X``, ``ESC ^``, ``ESC _``,
  terminated by ST), nF escapes (``ESC`` + intermediates + final) and single-character escapes
  (``ESC 7``, ``ESC c``, ...), a lone ``ESC``;
- C0 controls other than ``\\n`` and ``\\t``, DEL and the C1 range ``0x80``-``0x9F`` are removed.

Control strings never span a line break: an unterminated OSC or DCS ends at the end of its
line (a terminal would swallow more, but a model should not lose the rest of a log).
"""

from __future__ import annotations

import re

__all__ = ["has_controls", "render_line", "render_terminal", "strip_controls"]

_ESCAPE = re.compile(
    r"""
      (?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?          # CSI
    | (?:\x1b\]|\x9d)[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?        # OSC, BEL or ST ends it
    | (?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c\n]*(?:\x1b\\|\x9c)?  # DCS, SOS, PM, APC
    | \x1b[\x20-\x2f]+[\x30-\x7e]?                                  # nF escape
    | \x1b[\x30-\x7e]?                                              # Fp/Fe/Fs, or a lone ESC
    """,
    re.VERBOSE,
)
# C0 except \t \n \r \b (those are interpreted), DEL, C1.
_CONTROL = re.compile(r"[\x00-\x07\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9f]")
# Anything that makes a line differ from what it shows.
_ANY_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Tokens the line emulator interprets: CR, BS and erase-in-line.
_EMULATED = re.compile(r"(\r|\x08|(?:\x1b\[|\x9b)[012]?K)")
_ERASE = re.compile(r"(?:\x1b\[|\x9b)([012]?)K")
_BLANK = "\x00"  # an erased or skipped cell; written text never holds NUL (it is stripped)


def has_controls(text: str) -> bool:
    """True when ``text`` holds any character that rendering would change or remove."""
    return _ANY_CONTROL.search(text) is not None


def strip_controls(text: str) -> str:
    """Remove escape sequences and controls; keep ``\\n``, ``\\t``, ``\\r`` and ``\\b``."""
    if not has_controls(text):
        return text
    return _CONTROL.sub("", _ESCAPE.sub("", text))


def _overlay(segments: list[str]) -> str:
    """Segments each written from column 0, later over earlier: the visible line."""
    shown = ""
    for segment in reversed(segments):
        if len(segment) > len(shown):
            shown += segment[len(shown) :]
    return shown


def _emulate(line: str) -> str:
    """A one-line terminal: a cell buffer and a cursor, for lines with ``\\b`` or erases."""
    cells: list[str] = []
    cursor = 0
    for token in _EMULATED.split(line):
        if not token:
            continue
        if token == "\r":
            cursor = 0
        elif token == "\x08":
            cursor = max(0, cursor - 1)
        elif (erase := _ERASE.fullmatch(token)) is not None:
            mode = erase.group(1) or "0"
            if mode == "0":
                del cells[cursor:]
            elif mode == "1":
                erased = min(cursor + 1, len(cells))
                cells[:erased] = [_BLANK] * erased
            else:
                cells = [_BLANK] * min(cursor, len(cells))
        else:
            text = _CONTROL.sub("", _ESCAPE.sub("", token))
            if cursor > len(cells):
                cells.extend(_BLANK * (cursor - len(cells)))
            cells[cursor : cursor + len(text)] = text
            cursor += len(text)
    return "".join(cells).rstrip(_BLANK).replace(_BLANK, " ")


def render_line(line: str) -> str:
    """Render one line (no ``\\n`` inside) as a terminal would show it.

    Args:
        line: raw text of one line, as written by the program.

    Returns:
        The visible characters of the line; at most ``len(line)`` characters.
    """
    if not has_controls(line):
        return line
    if "\x08" in line or _ERASE.search(line) is not None:
        return _emulate(line)
    stripped = _CONTROL.sub("", _ESCAPE.sub("", line))
    if "\r" not in stripped:
        return stripped
    return _overlay(stripped.split("\r"))


def render_terminal(text: str) -> str:
    """Render multi-line ``text`` line by line (see :func:`render_line`); ``\\n`` is kept."""
    if not has_controls(text):
        return text
    return "\n".join(render_line(line) for line in text.split("\n"))
