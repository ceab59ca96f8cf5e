"""The in-place JSON editor: the edited text parses to the edited document, only changed members
are rewritten, and an insert followed by its removal gives back the original bytes."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from jupyter_jcli.hosts._jsonedit import patch_json_text, same_json


def _random_value(rng: random.Random, depth: int) -> Any:
    kind = rng.choice(["str", "int", "bool", "null", "list", "dict"] if depth < 3 else ["str"])
    if kind == "str":
        return rng.choice(["a", 'q"uote', "back\\slash", "ü", "{[,:]}", ""])
    if kind == "int":
        return rng.randint(-5, 5)
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "list":
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {f"k{i}": _random_value(rng, depth + 1) for i in range(rng.randint(0, 3))}


def _edit(rng: random.Random, doc: dict[str, Any]) -> None:
    """Add, replace or delete members along a random path, or append/delete list items."""
    node: Any = doc
    while isinstance(node, dict) and node and rng.random() < 0.5:
        child = node[rng.choice(list(node))]
        if not isinstance(child, (dict, list)):
            break
        node = child
    if isinstance(node, dict):
        action = rng.choice(["add", "delete", "replace"])
        if action == "add" or not node:
            node[f"new{rng.randint(0, 9)}"] = _random_value(rng, 1)
        elif action == "delete":
            del node[rng.choice(list(node))]
        else:
            node[rng.choice(list(node))] = _random_value(rng, 1)
    elif node and rng.random() < 0.5:
        del node[rng.randrange(len(node))]
    else:
        node.append(_random_value(rng, 1))


STYLES = [
    json.dumps,
    lambda d: json.dumps(d, separators=(",", ":")),
    lambda d: json.dumps(d, indent=2) + "\n",
    lambda d: json.dumps(d, indent=4, ensure_ascii=False),
    lambda d: json.dumps(d, indent="\t").replace("\n", "\r\n") + "\r\n",
]


@pytest.mark.parametrize("style", range(len(STYLES)))
def test_random_edits_parse_right_and_undo_to_the_same_bytes(style: int) -> None:
    rng = random.Random(1000 + style)
    for _ in range(400):
        old = {f"k{i}": _random_value(rng, 1) for i in range(rng.randint(0, 4))}
        text = STYLES[style](old)
        new = copy.deepcopy(old)
        _edit(rng, new)
        edited = patch_json_text(text, old, new)
        assert same_json(json.loads(edited), new), (text, edited)
        back = patch_json_text(edited, new, old)
        assert same_json(json.loads(back), old), (edited, back)
        if _only_added(old, new):
            assert back == text, (text, edited, back)


def _only_added(old: Any, new: Any) -> bool:
    """Whether ``new`` is ``old`` plus members at the end of objects or items at end of lists."""
    if isinstance(old, dict) and isinstance(new, dict):
        return all(k in new and _only_added(v, new[k]) for k, v in old.items())
    if isinstance(old, list) and isinstance(new, list):
        return len(new) >= len(old) and all(same_json(a, b) for a, b in zip(old, new, strict=False))
    return same_json(old, new)


def test_untouched_members_keep_their_bytes() -> None:
    text = '{\n  "mine": {"a":1,   "b" : [1,2]},\n  "ours": {\n    "x": 1\n  }\n}\n'
    old = json.loads(text)
    new = copy.deepcopy(old)
    new["ours"]["x"] = 2
    new["added"] = {"y": [True]}
    edited = patch_json_text(text, old, new)
    assert edited.startswith('{\n  "mine": {"a":1,   "b" : [1,2]},\n  "ours": {\n    "x": 2\n')
    assert edited.endswith('  "added": {\n    "y": [\n      true\n    ]\n  }\n}\n')
    assert patch_json_text(text, old, old) == text
