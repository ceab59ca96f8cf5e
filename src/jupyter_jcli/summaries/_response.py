"""The answer side: the model's text parsed defensively into per-cell summaries.

The model is asked for one JSON object keyed by cell key (see ``_prompt.SYSTEM_PROMPT``).
This parser tolerates a code fence or prose around the object, and takes entries one by one:
an entry that is missing, not an object, or lacks a non-empty ``tldr`` fails for its cell
only. Texts are flattened to one line each and cut to the model's bounds; a leading
:data:`~jupyter_jcli.summaries._model.FALLBACK_MARK` is removed so that the mark stays a
reliable sign of a fallback.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jupyter_jcli.summaries._model import (
    DESCRIPTION_MAX,
    OUTPUT_SUMMARY_MAX,
    TLDR_MAX,
    Summary,
    one_line,
)

__all__ = ["ParsedAnswer", "parse_answer"]


@dataclass(frozen=True)
class ParsedAnswer:
    """What one answer gave.

    Attributes:
        summaries: model summaries by key, for the entries that were valid.
        error: why the answer as a whole was unusable (``None`` if it parsed).
    """

    summaries: dict[str, Summary]
    error: str | None


def _json_object(text: str) -> Any:
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0]
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    start = stripped.find("{")
    if start < 0:
        raise ValueError("no JSON object in the answer")
    value, _end = json.JSONDecoder().raw_decode(stripped[start:])
    return value


def _text(entry: Mapping[str, Any], field: str, limit: int) -> str | None:
    value = entry.get(field)
    if not isinstance(value, str):
        return None
    flat = one_line(value, limit)
    while flat.startswith("*"):
        flat = flat[1:].lstrip()
    return flat


def parse_answer(text: str, keys: Sequence[str], model: str) -> ParsedAnswer:
    """Parse a model answer for the cells ``keys``.

    Args:
        text: the joined text blocks of the answer.
        keys: the keys the request asked about.
        model: the model that answered (recorded in each summary).

    Returns:
        The valid entries, and an error text if nothing could be parsed at all.
    """
    try:
        document = _json_object(text)
    except (ValueError, RecursionError) as err:
        return ParsedAnswer({}, f"the answer is not JSON ({err})")
    if not isinstance(document, Mapping):
        return ParsedAnswer({}, f"the answer is a JSON {type(document).__name__}, not an object")
    summaries: dict[str, Summary] = {}
    for key in keys:
        entry = document.get(key)
        if not isinstance(entry, Mapping):
            continue
        tldr = _text(entry, "tldr", TLDR_MAX)
        description = _text(entry, "description", DESCRIPTION_MAX)
        output_summary = _text(entry, "output_summary", OUTPUT_SUMMARY_MAX)
        if not tldr or description is None or output_summary is None:
            continue
        summaries[key] = Summary(
            key=key,
            tldr=tldr,
            description=description,
            output_summary=output_summary,
            source="llm",
            model=model,
        )
    return ParsedAnswer(summaries, None)
