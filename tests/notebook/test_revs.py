"""Cell revs and structure revs: stable content hashes."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys

from jupyter_jcli.notebook.revs import REV_LENGTH, cell_rev, structure_rev


def test_a_rev_is_a_short_sha256_of_type_and_source() -> None:
    rev = cell_rev("code", "x = 1")
    assert re.fullmatch(f"[0-9a-f]{{{REV_LENGTH}}}", rev)
    assert rev == hashlib.sha256(b"code\0x = 1").hexdigest()[:REV_LENGTH]


def test_the_rev_changes_with_source_and_with_cell_type() -> None:
    assert cell_rev("code", "x = 1") != cell_rev("code", "x = 2")
    assert cell_rev("code", "# x") != cell_rev("markdown", "# x")


def test_the_rev_is_the_same_in_another_process() -> None:
    code = "from jupyter_jcli.notebook.revs import cell_rev; print(cell_rev('code', 'x = 1'))"
    other = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert other.stdout.strip() == cell_rev("code", "x = 1")


def test_the_structure_rev_depends_on_order_names_and_revs() -> None:
    base = structure_rev([("a", "111"), ("b", "222")])
    assert base == structure_rev([("a", "111"), ("b", "222")])
    assert base != structure_rev([("b", "222"), ("a", "111")])
    assert base != structure_rev([("a", "111"), ("c", "222")])
    assert base != structure_rev([("a", "111"), ("b", "333")])
    assert base != structure_rev([("a", "111")])
    assert re.fullmatch(f"[0-9a-f]{{{REV_LENGTH}}}", structure_rev([]))
