"""Cell-name lists and counts in j-cli text: bounded, and in agreement with their nouns."""

from __future__ import annotations

from jupyter_jcli.cli._document_render import NAMES_SHOWN, cell_names
from jupyter_jcli.cli._render import counted


def test_a_list_of_ten_thousand_names_shows_the_first_ones_and_counts_the_others() -> None:
    names = [f"df-{k}" for k in range(10_000)]
    text = cell_names(names)
    assert text.count("`") == 2 * NAMES_SHOWN
    assert text.startswith("`df-0`, `df-1`")
    assert f"and {10_000 - NAMES_SHOWN:,} more" in text
    assert len(text) < 400


def test_a_short_list_is_shown_whole_and_an_empty_one_as_a_dash() -> None:
    assert cell_names(["code", "data"]) == "`code`, `data`"
    assert cell_names([f"c{k}" for k in range(NAMES_SHOWN)]).count("`") == 2 * NAMES_SHOWN
    assert cell_names([]) == "-"


def test_counts_agree_with_their_nouns() -> None:
    assert counted(1, "cell") == "1 cell"
    assert counted(2, "cell") == "2 cells"
    assert counted(0, "line") == "0 lines"
    assert counted(12_345, "step") == "12,345 steps"
    assert counted(3, "index", "indices") == "3 indices"
