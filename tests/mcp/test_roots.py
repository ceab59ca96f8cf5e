"""Trusted roots and path safety (jupyter_jcli.mcp._roots), in process, on real folders."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jupytext
import pytest

from jupyter_jcli.errors import ErrorCode, JcliError
from jupyter_jcli.mcp._roots import (
    ensure_inside_roots,
    ensure_pair_inside_roots,
    find_root,
    resolve_in_roots,
    roots_from_paths,
    roots_from_uris,
)

NOTEBOOK = Path(__file__).parent.parent / "fixtures" / "notebooks" / "text_outputs_and_images.ipynb"


def _code(excinfo: pytest.ExceptionInfo[JcliError]) -> str:
    return str(excinfo.value.code)


@pytest.fixture
def two_roots(tmp_path: Path) -> tuple[Path, Path]:
    a = tmp_path / "a"
    b = tmp_path / "b"
    (a / "sub").mkdir(parents=True)
    b.mkdir()
    (a / "only_a.ipynb").write_text("{}", encoding="utf-8")
    (a / "both.ipynb").write_text("{}", encoding="utf-8")
    (b / "both.ipynb").write_text("{}", encoding="utf-8")
    (tmp_path / "outside.ipynb").write_text("{}", encoding="utf-8")
    return a.resolve(), b.resolve()


def test_roots_from_paths_resolves_symlinks_and_drops_duplicates(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    assert roots_from_paths([real, link, str(real)]) == (real.resolve(),)


def test_roots_from_paths_refuses_a_missing_root(tmp_path: Path) -> None:
    with pytest.raises(JcliError) as excinfo:
        roots_from_paths([tmp_path / "missing"])
    assert _code(excinfo) == ErrorCode.FILE_NOT_FOUND


def test_roots_from_uris_keeps_local_file_uris_only(tmp_path: Path) -> None:
    spaced = tmp_path / "with space"
    spaced.mkdir()
    uris = [
        spaced.as_uri(),  # percent-encoded space
        f"file://localhost{tmp_path.as_posix()}",
        "https://example.com/project",
        "file://otherhost/share",
        "file://",
    ]
    assert roots_from_uris(uris) == (spaced.resolve(), tmp_path.resolve())


def test_no_roots_is_roots_required(tmp_path: Path) -> None:
    with pytest.raises(JcliError) as excinfo:
        resolve_in_roots(str(tmp_path / "x.ipynb"), ())
    assert _code(excinfo) == ErrorCode.ROOTS_REQUIRED
    with pytest.raises(JcliError) as excinfo:
        ensure_inside_roots(tmp_path, ())
    assert _code(excinfo) == ErrorCode.ROOTS_REQUIRED


def test_absolute_path_inside_a_root_resolves(two_roots: tuple[Path, Path]) -> None:
    a, b = two_roots
    assert resolve_in_roots(str(a / "only_a.ipynb"), [a, b]) == a / "only_a.ipynb"
    # `..` that stays inside is fine: only the resolved location counts.
    assert resolve_in_roots(str(a / "sub" / ".." / "only_a.ipynb"), [a]) == a / "only_a.ipynb"


def test_absolute_path_elsewhere_is_not_allowed_whether_or_not_it_exists(
    two_roots: tuple[Path, Path],
) -> None:
    a, _ = two_roots
    for path in (a.parent / "outside.ipynb", a.parent / "missing.ipynb", Path("/etc/passwd")):
        with pytest.raises(JcliError) as excinfo:
            resolve_in_roots(str(path), [a])
        assert _code(excinfo) == ErrorCode.PATH_NOT_ALLOWED
        assert excinfo.value.details["roots"] == [str(a)]


def test_dotdot_cannot_escape_a_root(two_roots: tuple[Path, Path]) -> None:
    a, _ = two_roots
    for path in ("../outside.ipynb", str(a / ".." / "outside.ipynb"), "sub/../../outside.ipynb"):
        with pytest.raises(JcliError) as excinfo:
            resolve_in_roots(path, [a])
        assert _code(excinfo) == ErrorCode.PATH_NOT_ALLOWED


def test_symlink_inside_a_root_pointing_outside_is_not_allowed(
    two_roots: tuple[Path, Path],
) -> None:
    a, _ = two_roots
    link = a / "escape.ipynb"
    link.symlink_to(a.parent / "outside.ipynb")
    dir_link = a / "up"
    dir_link.symlink_to(a.parent, target_is_directory=True)
    for path in (str(link), "escape.ipynb", "up/outside.ipynb"):
        with pytest.raises(JcliError) as excinfo:
            resolve_in_roots(path, [a])
        assert _code(excinfo) == ErrorCode.PATH_NOT_ALLOWED


def test_symlink_inside_a_root_pointing_inside_is_followed(two_roots: tuple[Path, Path]) -> None:
    a, _ = two_roots
    (a / "alias.ipynb").symlink_to(a / "only_a.ipynb")
    assert resolve_in_roots("alias.ipynb", [a]) == a / "only_a.ipynb"


def test_relative_path_matching_one_root_resolves(two_roots: tuple[Path, Path]) -> None:
    a, b = two_roots
    assert resolve_in_roots("only_a.ipynb", [a, b]) == a / "only_a.ipynb"


def test_relative_path_in_two_roots_is_ambiguous(two_roots: tuple[Path, Path]) -> None:
    a, b = two_roots
    with pytest.raises(JcliError) as excinfo:
        resolve_in_roots("both.ipynb", [a, b])
    assert _code(excinfo) == ErrorCode.PATH_AMBIGUOUS
    assert sorted(excinfo.value.details["matches"]) == sorted(
        [str(a / "both.ipynb"), str(b / "both.ipynb")]
    )


def test_the_same_file_through_nested_roots_is_one_match(two_roots: tuple[Path, Path]) -> None:
    a, _ = two_roots
    (a / "sub" / "nb.ipynb").write_text("{}", encoding="utf-8")
    assert resolve_in_roots("sub/nb.ipynb", [a, a / "sub"]) == a / "sub" / "nb.ipynb"


def test_relative_path_matching_nothing_is_file_not_found(two_roots: tuple[Path, Path]) -> None:
    a, b = two_roots
    with pytest.raises(JcliError) as excinfo:
        resolve_in_roots("missing.ipynb", [a, b])
    assert _code(excinfo) == ErrorCode.FILE_NOT_FOUND
    with pytest.raises(JcliError) as excinfo:
        resolve_in_roots("", [a, b])
    assert _code(excinfo) == ErrorCode.FILE_NOT_FOUND


def test_a_new_file_resolves_under_the_single_root_without_must_exist(
    two_roots: tuple[Path, Path],
) -> None:
    a, b = two_roots
    assert resolve_in_roots("new.ipynb", [a], must_exist=False) == a / "new.ipynb"
    with pytest.raises(JcliError) as excinfo:
        resolve_in_roots("new.ipynb", [a, b], must_exist=False)
    assert _code(excinfo) == ErrorCode.PATH_AMBIGUOUS
    with pytest.raises(JcliError) as excinfo:
        resolve_in_roots("../new.ipynb", [a], must_exist=False)
    assert _code(excinfo) == ErrorCode.PATH_NOT_ALLOWED


def test_a_file_root_allows_exactly_that_file(two_roots: tuple[Path, Path]) -> None:
    a, _ = two_roots
    file_root = a / "only_a.ipynb"
    assert ensure_inside_roots(file_root, [file_root]) == file_root
    assert find_root(a / "both.ipynb", [file_root]) is None
    with pytest.raises(JcliError) as excinfo:
        ensure_inside_roots(a / "both.ipynb", [file_root])
    assert _code(excinfo) == ErrorCode.PATH_NOT_ALLOWED


def test_find_root_is_by_path_components_not_string_prefix(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    assert find_root(tmp_path / "proj-other" / "x.ipynb", [root]) is None
    assert find_root(root / "x.ipynb", [root]) == root


def _write_py_pair(notebook_dir: Path, py_dir: Path, formats: str | None = None) -> Path:
    notebook = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    if formats is not None:
        notebook.setdefault("metadata", {})["jupytext"] = {"formats": formats}
    notebook_dir.mkdir(parents=True, exist_ok=True)
    py_dir.mkdir(parents=True, exist_ok=True)
    (notebook_dir / "nb.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    text = jupytext.writes(jupytext.reads(json.dumps(notebook), fmt="ipynb"), fmt="py:percent")
    py_path = py_dir / "nb.py"
    py_path.write_text(text, encoding="utf-8")
    return py_path


def test_a_py_paired_inside_the_root_passes(tmp_path: Path) -> None:
    root = (tmp_path / "proj").resolve()
    py_path = _write_py_pair(root, root)
    assert ensure_pair_inside_roots(py_path, [root]) == root / "nb.ipynb"


def test_a_py_inside_a_root_paired_with_a_notebook_outside_is_not_allowed(
    tmp_path: Path,
) -> None:
    proj = tmp_path / "proj"
    py_path = _write_py_pair(
        proj / "notebooks", proj / "scripts", formats="notebooks//ipynb,scripts//py:percent"
    )
    root = (proj / "scripts").resolve()
    assert resolve_in_roots("nb.py", [root]) == py_path.resolve()
    with pytest.raises(JcliError) as excinfo:
        ensure_pair_inside_roots(py_path.resolve(), [root])
    assert _code(excinfo) == ErrorCode.PATH_NOT_ALLOWED
    assert str(proj / "notebooks") not in json.dumps(excinfo.value.to_dict())


def test_checks_write_nothing(two_roots: tuple[Path, Path]) -> None:
    a, b = two_roots
    before = sorted(os.walk(a.parent))
    resolve_in_roots("only_a.ipynb", [a, b])
    with pytest.raises(JcliError):
        resolve_in_roots("missing.ipynb", [a, b])
    assert sorted(os.walk(a.parent)) == before


@pytest.mark.parametrize("must_exist", [True, False])
@pytest.mark.parametrize("path", ["nb\0.ipynb", "sub/\0", "/abs/nb\0.ipynb"])
def test_a_nul_byte_in_a_path_is_a_usage_error(
    two_roots: tuple[Path, Path], path: str, must_exist: bool
) -> None:
    with pytest.raises(JcliError) as caught:
        resolve_in_roots(path, two_roots, must_exist=must_exist)
    assert caught.value.code == ErrorCode.USAGE_ERROR


def test_a_nul_byte_in_an_absolute_check_is_a_usage_error(two_roots: tuple[Path, Path]) -> None:
    with pytest.raises(JcliError) as caught:
        ensure_inside_roots(str(two_roots[0] / "x\0.ipynb"), two_roots)
    assert caught.value.code == ErrorCode.USAGE_ERROR


def test_a_name_too_long_for_the_system_is_file_not_found(two_roots: tuple[Path, Path]) -> None:
    for path in ("a" * 5000 + ".ipynb", ("b" * 200 + "/") * 30 + "x.ipynb"):
        with pytest.raises(JcliError) as caught:
            resolve_in_roots(path, two_roots)
        assert caught.value.code == ErrorCode.FILE_NOT_FOUND


def test_a_root_uri_holding_a_nul_byte_is_skipped(tmp_path: Path) -> None:
    assert roots_from_uris([f"file://{tmp_path}/a%00b", tmp_path.as_uri()]) == (tmp_path.resolve(),)
