"""The README and ``docs/`` hold together: every relative link reaches a file (and a heading,
when it names one), every page of ``docs/`` is in its index, and the list of error codes is
the catalogue's.

The examples of these pages run in ``tests/test_readme.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jupyter_jcli.errors import ErrorCode

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
INDEX = DOCS / "README.md"
ERROR_CODES = DOCS / "reference" / "error-codes.md"

PENDING: frozenset[str] = frozenset()
"""Pages written on other branches at the same time, linked before they land: a link to one
of these may find no file (nor heading) until its branch is merged. Remove an entry once its
page is here."""

_FENCED = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.MULTILINE)
_CODE_ROW = re.compile(r"^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|", re.MULTILINE)


def pages() -> list[Path]:
    """The README and every Markdown page under ``docs/``."""
    return [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text (a link's text for a link) lowercased,
    punctuation but ``-`` and ``_`` dropped, spaces made hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of a Markdown text's headings (a repeated one also as ``-1``, ``-2``...)."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for heading in _HEADING.findall(_FENCED.sub("", text)):
        slug = github_slug(heading)
        count = seen.get(slug, 0)
        found.add(slug if count == 0 else f"{slug}-{count}")
        seen[slug] = count + 1
    return found


def links(text: str) -> list[str]:
    """The link targets of a Markdown text, outside code blocks and code spans."""
    return _LINK.findall(_CODE_SPAN.sub("", _FENCED.sub("", text)))


def broken_links(page: Path, text: str | None = None) -> list[str]:
    """The relative links of ``page`` (its text, or ``text`` as if it were there) that reach no
    file, or no heading of the page named."""
    broken: list[str] = []
    for target in links(page.read_text(encoding="utf-8") if text is None else text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        relative = file.relative_to(REPO).as_posix() if file.is_relative_to(REPO) else None
        if relative in PENDING:
            continue
        page_with_headings = file.suffix == ".md" and file.is_file()
        if not file.exists() or (
            anchor and page_with_headings and anchor not in anchors(file.read_text("utf-8"))
        ):
            broken.append(target)
    return broken


@pytest.mark.parametrize("page", pages(), ids=lambda page: page.relative_to(REPO).as_posix())
def test_every_relative_link_reaches_a_file_and_heading(page: Path) -> None:
    assert broken_links(page) == []


def test_every_page_of_docs_is_in_the_index() -> None:
    linked = {
        (INDEX.parent / target.partition("#")[0]).resolve()
        for target in links(INDEX.read_text(encoding="utf-8"))
    }
    missing = [
        page.relative_to(REPO).as_posix()
        for page in sorted(DOCS.rglob("*.md"))
        if page != INDEX and page.resolve() not in linked
    ]
    assert missing == []


def test_the_pending_pages_are_linked_from_the_index() -> None:
    linked = {
        (INDEX.parent / target).resolve().relative_to(REPO).as_posix()
        for target in links(INDEX.read_text(encoding="utf-8"))
        if not re.match(r"[a-z][a-z0-9+.-]*:", target)
    }
    assert linked >= PENDING


def test_the_error_code_list_is_the_catalogue() -> None:
    listed = _CODE_ROW.findall(ERROR_CODES.read_text(encoding="utf-8"))
    assert len(listed) == len(set(listed)), "a code listed twice"
    catalogue = {code.value for code in ErrorCode}
    assert sorted(catalogue - set(listed)) == [], "add these codes to docs/reference/error-codes.md"
    assert sorted(set(listed) - catalogue) == [], "these codes are not in ErrorCode"


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("Live kernels (`j-cli kernel`, `j-cli run`)", "live-kernels-j-cli-kernel-j-cli-run"),
        (
            "More commands: `vars`, `exec --display-mode`",
            "more-commands-vars-exec---display-mode",
        ),
        ("Paired `.py` and `.ipynb`: when", "paired-py-and-ipynb-when"),
    ],
)
def test_anchors_are_githubs(heading: str, slug: str) -> None:
    assert github_slug(heading) == slug


def test_a_link_to_a_missing_page_or_heading_is_found() -> None:
    pending = " ".join(f"[d](../../{name}#any)" for name in sorted(PENDING))  # not yet merged
    text = (
        "[a](missing.md) [b](command-line.md#no-such-heading) [c](command-line.md#cell-names)"
        f" {pending} `[e](code-span.md)` [f](https://example.org/x.md)"
    )
    page = DOCS / "guides" / "a-new-page.md"
    assert broken_links(page, text) == ["missing.md", "command-line.md#no-such-heading"]
