"""Terminal rendering: carriage returns, backspaces, and every kind of control sequence."""

from __future__ import annotations

import pytest

from jupyter_jcli.condense._terminal import render_line, render_terminal


def test_a_tqdm_bar_with_ten_thousand_updates_becomes_its_final_line() -> None:
    updates = "".join(
        f"\r{i * 100 // 9999:3d}%|{'#' * (i * 20 // 9999):<20}| {i}/9999" for i in range(10_000)
    )
    rendered = render_terminal(updates + "\n")
    assert rendered == "100%|####################| 9999/9999\n"


def test_carriage_return_overwrites_only_the_characters_written() -> None:
    assert render_line("abcdef\rxy") == "xycdef"
    assert render_line("done\r\n".rstrip("\n")) == "done"


def test_backspaces_move_the_cursor_left_and_overwrite() -> None:
    assert render_line("abc\b\bX") == "aXc"
    assert render_line("\b\bstart") == "start"
    assert render_line("spin |\b/\b-\b\\\bok") == "spin ok"


def test_erase_in_line_blanks_the_rest_of_the_line() -> None:
    assert render_line("100%\r50%\x1b[K") == "50%"
    assert render_line("old text\x1b[2K\rnew") == "new"


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[1;31mred\x1b[0m plain", "red plain"),  # CSI SGR
        ("\x9b31mred", "red"),  # 8-bit CSI
        ("\x1b]8;;https://example.org\x07link\x1b]8;;\x07 after", "link after"),  # OSC 8, BEL
        ("\x1b]8;;https://example.org\x1b\\link\x1b]8;;\x1b\\", "link"),  # OSC 8, ST
        ("\x1b]0;window title\x07text", "text"),  # OSC title
        ("\x1bPq#0;2;0;0;0#1!\x1b\\text", "text"),  # DCS (sixel)
        ("\x1b_private\x1b\\text", "text"),  # APC
        ("\x1b^pm\x1b\\text", "text"),  # PM
        ("\x1bXsos\x1b\\text", "text"),  # SOS
        ("\x1b(Btext\x1b7\x1b8\x1bc", "text"),  # nF charset, DECSC/DECRC, RIS
        ("a\x00b\x07c\x0bd\x0ce\x7ff\x85g", "abcdefg"),  # C0, DEL, C1
        ("tab\tstays", "tab\tstays"),
        ("lone escape at the end\x1b", "lone escape at the end"),
    ],
)
def test_control_sequences_are_removed(raw: str, shown: str) -> None:
    assert render_line(raw) == shown


def test_an_unterminated_osc_ends_at_the_line_break() -> None:
    assert render_terminal("\x1b]8;;http://x\nnext line") == "\nnext line"


def test_rendering_never_lengthens_a_line() -> None:
    samples = ["a\rbb\rccc", "x\b\b\by", "\x1b[2K\x1b[1K\x1b[0K", "abc\x1b[1Kd"]
    for raw in samples:
        assert len(render_line(raw)) <= len(raw)
        assert "\x1b" not in render_line(raw)
