"""json_fields: the one rule that turns a result dataclass into its JSON object."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from jupyter_jcli._json import json_fields, to_json


@dataclass(frozen=True)
class _Inner:
    n: int

    def to_dict(self) -> dict[str, int]:
        return {"n": self.n}


@dataclass(frozen=True)
class _Result:
    path: Path
    names: tuple[str, ...]
    inner: _Inner | None
    facts: dict[str, tuple[Path, ...]] | None = None
    seconds: float = 0.123456

    @property
    def count(self) -> int:
        return len(self.names)


def _result(facts: dict[str, tuple[Path, ...]] | None = None) -> _Result:
    return _Result(Path("/a/b.ipynb"), ("x", "y"), _Inner(3), facts)


def test_fields_in_declaration_order_as_json() -> None:
    assert json.dumps(json_fields(_result())) == json.dumps(
        {
            "path": "/a/b.ipynb",
            "names": ["x", "y"],
            "inner": {"n": 3},
            "facts": None,
            "seconds": 0.123456,
        }
    )


def test_named_keys_order_properties_values_and_omissions() -> None:
    facts = {"side": (Path("/a/b.py"),)}
    document = json_fields(
        _result(facts), "count seconds facts? names", seconds=0.1235, extra="last"
    )
    assert list(document) == ["count", "seconds", "facts", "names", "extra"]
    assert document == {
        "count": 2,
        "seconds": 0.1235,
        "facts": {"side": ["/a/b.py"]},
        "names": ["x", "y"],
        "extra": "last",
    }
    assert "facts" not in json_fields(_result(), "names facts?")
    assert json_fields(_result(), "names facts") == {"names": ["x", "y"], "facts": None}


def test_a_value_given_for_an_optional_key_is_left_out_when_none() -> None:
    assert json_fields(_result(), "names inner?", inner=None) == {"names": ["x", "y"]}


def test_to_json_converts_nested_values() -> None:
    assert to_json({"a": [Path("/p"), (_Inner(1),)], "b": None}) == {
        "a": ["/p", [{"n": 1}]],
        "b": None,
    }
