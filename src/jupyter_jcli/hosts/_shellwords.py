"""A linear-time shell word splitter for the guard (standard library only).

It gives the tokens that ``shlex.shlex(text, posix=True, punctuation_chars=True)`` with
``whitespace_split = True`` and no comment characters gives (POSIX quoting: ``'...'`` literal,
``"..."`` where a backslash escapes only ``"`` and ``\\``, a backslash outside quotes escapes the
next character; a run of ``();<>|&`` is one operator token), but in time linear in the text.
``shlex`` builds each token one character at a time (``token = token + char``), which is
quadratic in the token's length: a 1 MB shell word took half a minute, far beyond a hook's time
limit. Here whole runs are matched by regular expressions with no backtracking and a token is
joined once.
"""

from __future__ import annotations

import re

__all__ = ["split_words"]


# One alternative per lexical element; none can backtrack more than one character.
_ELEMENT = re.compile(
    r"""
      (?P<space>[ \t\r\n]+)
    | (?P<operator>[();<>|&]+)
    | (?P<plain>[^ \t\r\n'"\\();<>|&]+)
    | '(?P<single>[^']*)'
    | "(?P<double>[^"\\]*(?:\\.[^"\\]*)*)"
    | \\(?P<escaped>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_DOUBLE_ESCAPE = re.compile(r"\\([\\\"])")


def split_words(text: str) -> list[str] | None:
    """Split a shell command line into words and operator tokens, as POSIX ``shlex`` does.

    Args:
        text: the command line.

    Returns:
        The tokens, in order (an operator run such as ``&&`` or ``2>&1``'s ``>&`` is one token;
        ``''`` gives an empty word); None when a quote is not closed or the text ends in a lone
        backslash (where ``shlex`` raises ``ValueError``). Time and memory are linear in
        ``len(text)``.
    """
    tokens: list[str] = []
    pieces: list[str] = []
    in_word = False
    position = 0
    end = len(text)
    while position < end:
        match = _ELEMENT.match(text, position)
        if match is None:  # an unclosed quote or a trailing backslash
            return None
        position = match.end()
        kind = match.lastgroup
        if kind in ("space", "operator"):
            if in_word:
                tokens.append("".join(pieces))
                pieces, in_word = [], False
            if kind == "operator":
                tokens.append(match.group(kind))
            continue
        in_word = True
        if kind == "double":
            pieces.append(_DOUBLE_ESCAPE.sub(r"\1", match.group(kind)))
        else:
            pieces.append(match.group(kind or "plain"))
    if in_word:
        tokens.append("".join(pieces))
    return tokens
