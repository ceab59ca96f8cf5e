"""The JSON form of a result dataclass: its fields by one rule, instead of a hand-written
dict per class (``to_dict``).

:func:`json_fields` gives the fields in declaration order, or the keys a class names, each
value by :func:`to_json`; a class passes the few values whose JSON form differs (a rounded
duration, a count, a renamed field) as keywords. A class whose keys do not fit on the
line names them in a ``JSON_KEYS`` class variable beside its fields. The bottom layer: it
imports nothing of the package, so every package may use it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = ["json_fields", "to_json"]


def to_json(value: object) -> Any:
    """``value`` as JSON data: a path as its string, a tuple or list as a list and a mapping
    as a dict (their items converted in turn), an object with a ``to_dict`` method as what
    that returns; anything else (``None``, strings, numbers, booleans) as it is."""
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, (tuple, list)):
        return [to_json(item) for item in value]
    if isinstance(value, Mapping):
        return {key: to_json(item) for key, item in value.items()}
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    return value


def json_fields(obj: DataclassInstance, keys: str = "", /, **values: Any) -> dict[str, Any]:
    """The JSON object of the dataclass instance ``obj``.

    Args:
        obj: a dataclass instance.
        keys: the keys, space-separated, in their JSON order: fields or properties of
            ``obj``, or keys of ``values``; a key written ``name?`` is left out when its
            value is ``None``. Empty: every field of ``obj`` in declaration order (those of
            a subclass too: a class with subclasses names its keys).
        values: the JSON value of a key whose form is not :func:`to_json` of the attribute
            (taken as given); a key not in ``keys`` (or not a field) comes last.
    """
    names = keys.split() if keys else [field.name for field in dataclasses.fields(obj)]
    document: dict[str, Any] = {}
    for key in names:
        name = key.removesuffix("?")
        value = values.pop(name) if name in values else to_json(getattr(obj, name))
        if value is not None or name == key:
            document[name] = value
    document.update(values)  # the keys not named
    return document
