"""The pattern of ``search_cells``: compiling it, refusing costly regexes, matching bounded.

A literal query becomes an escaped, case-insensitive pattern and is matched in this process:
a literal scan is linear in the text. A regular expression (Python :mod:`re` syntax, matched
case-insensitively) is checked first and then matched in a separate, short-lived Python
process with a deadline, because Python's backtracking engine cannot be interrupted:

1. at most :data:`MAX_PATTERN_LENGTH` characters, and it must compile (``re.error`` ->
   ``USAGE_ERROR``, reason ``invalid_regex``);
2. no unbounded repeat inside another repeat (``(a+)+``, ``(\\w*\\s?)*``): the classic
   exponential-backtracking shape is refused before anything runs (reason
   ``nested_quantifier``);
3. the matching process is killed after :data:`REGEX_TIMEOUT` seconds (reason
   ``regex_timeout``): polynomial blow-ups such as ``.*.*.*x`` on a long line are bounded too.

Texts are bounded by the caller (characters per cell and field) and matches by ``limit``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jupyter_jcli.errors import UsageError

__all__ = ["MAX_PATTERN_LENGTH", "REGEX_TIMEOUT", "Pattern", "compile_query"]

MAX_PATTERN_LENGTH = 1_000
"""Longest query, in characters (literal or regex)."""
REGEX_TIMEOUT = 10.0
"""Seconds the regex matching process may run before it is killed (``USAGE_ERROR``)."""

_REPEATS = frozenset({"MAX_REPEAT", "MIN_REPEAT"})
# Runs in a fresh interpreter (-I: isolated, -S: no site), reading one JSON request on stdin.
_WORKER = r"""
import json, re, sys
request = json.loads(sys.stdin.buffer.read())
rx = re.compile(request["pattern"], re.IGNORECASE)
limit = request["limit"]
found = []
for number, text in enumerate(request["texts"]):
    for match in rx.finditer(text):
        if match.end() > match.start():
            found.append([number, match.start(), match.end()])
            if len(found) >= limit:
                break
    if len(found) >= limit:
        break
sys.stdout.write(json.dumps(found))
"""


@dataclass(frozen=True)
class Pattern:
    """A checked, compiled query.

    Attributes:
        query: the query as given.
        regex: whether it is a regular expression (else a literal substring).
        compiled: the case-insensitive compiled pattern.
    """

    query: str
    regex: bool
    compiled: re.Pattern[str]

    def find(self, texts: Sequence[str], limit: int) -> list[tuple[int, int, int]]:
        """The non-empty matches in ``texts``, in order, at most ``limit``.

        Returns:
            ``(text number, start, end)`` triples (character offsets into that text).

        Raises:
            UsageError: ``USAGE_ERROR`` (reason ``regex_timeout``) when regex matching runs
                past :data:`REGEX_TIMEOUT`.
        """
        if limit < 1 or not texts:
            return []
        if self.regex:
            return _find_in_worker(self.query, texts, limit)
        found: list[tuple[int, int, int]] = []
        for number, text in enumerate(texts):
            for match in self.compiled.finditer(text):
                found.append((number, match.start(), match.end()))
                if len(found) >= limit:
                    return found
        return found


def compile_query(query: str, *, regex: bool) -> Pattern:
    """Check and compile a search query (see the module rules).

    Raises:
        UsageError: ``USAGE_ERROR`` for an empty or too long query, an invalid regex
            (details ``reason``: ``invalid_regex``, with ``position``) or a nested
            quantifier (``nested_quantifier``).
    """
    if not isinstance(query, str) or not query:
        raise UsageError("The search query is empty.", {"reason": "empty_query"})
    if len(query) > MAX_PATTERN_LENGTH:
        raise UsageError(
            f"The search query has {len(query)} characters; at most {MAX_PATTERN_LENGTH}.",
            {"reason": "query_too_long", "length": len(query), "limit": MAX_PATTERN_LENGTH},
        )
    if not regex:
        return Pattern(query, False, re.compile(re.escape(query), re.IGNORECASE))
    try:
        compiled = re.compile(query, re.IGNORECASE)
    except re.error as err:
        raise UsageError(
            f"Invalid regular expression {query!r}: {err.msg}"
            + (f" at position {err.pos}" if err.pos is not None else "")
            + ".",
            {"reason": "invalid_regex", "pattern": query, "position": err.pos},
        ) from None
    if _has_nested_repeat(query):
        raise UsageError(
            f"The regular expression {query!r} repeats a group that itself holds an unbounded "
            "repeat (like (a+)+), which can take exponential time; rewrite it without the "
            "nesting.",
            {"reason": "nested_quantifier", "pattern": query},
        )
    return Pattern(query, True, compiled)


def _has_nested_repeat(query: str) -> bool:
    """Whether a repeat that can run more than once contains an unbounded repeat."""
    import importlib

    try:  # the standard library's own regex parser (``sre_parse`` before Python 3.11)
        parser = importlib.import_module("re._parser")
    except ImportError:  # pragma: no cover - Python 3.10
        parser = importlib.import_module("sre_parse")
    parsed = parser.parse(query, re.IGNORECASE)
    return _walk(list(parsed), inside=False, unbounded=parser.MAXREPEAT)


def _walk(items: list[tuple[Any, Any]], *, inside: bool, unbounded: object) -> bool:
    for op, value in items:
        name = str(op)
        if name in _REPEATS:
            _low, high, body = value
            if inside and high == unbounded:
                return True
            if _walk(list(body), inside=inside or high != 1, unbounded=unbounded):
                return True
        elif name == "POSSESSIVE_REPEAT":  # no backtracking into it: safe, but look inside
            if _walk(list(value[2]), inside=False, unbounded=unbounded):
                return True
        else:
            for child in _children(name, value):
                if _walk(child, inside=inside, unbounded=unbounded):
                    return True
    return False


def _children(name: str, value: Any) -> list[list[tuple[Any, Any]]]:
    if name == "SUBPATTERN":
        return [list(value[3])]
    if name == "BRANCH":
        return [list(branch) for branch in value[1]]
    if name in ("ASSERT", "ASSERT_NOT"):
        return [list(value[1])]
    if name == "ATOMIC_GROUP":
        return [list(value)]
    if name == "GROUPREF_EXISTS":
        return [list(part) for part in value[1:] if part is not None]
    return []


def _find_in_worker(query: str, texts: Sequence[str], limit: int) -> list[tuple[int, int, int]]:
    request = json.dumps({"pattern": query, "limit": limit, "texts": list(texts)})
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", _WORKER],
            input=request.encode("utf-8", "surrogatepass"),
            capture_output=True,
            timeout=REGEX_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise UsageError(
            f"The regular expression {query!r} took more than {REGEX_TIMEOUT:g} s on this "
            "notebook (backtracking); make it more specific (anchor it, avoid .*.* runs).",
            {"reason": "regex_timeout", "pattern": query, "timeout": REGEX_TIMEOUT},
        ) from None
    if done.returncode != 0:
        raise UsageError(
            f"The regular expression {query!r} could not be matched: "
            f"{done.stderr.decode('utf-8', 'replace').strip().splitlines()[-1:]}",
            {"reason": "regex_failed", "pattern": query},
        )
    return [(int(n), int(s), int(e)) for n, s, e in json.loads(done.stdout)]
