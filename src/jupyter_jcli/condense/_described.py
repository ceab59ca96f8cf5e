"""One-line descriptions of outputs a model cannot read as text or see as a raster.

- SVG (``image/svg+xml``): size, ``viewBox``, element count and title.
- Plotly (``application/vnd.plotly.v1+json``, the figure JSON of plotly.py): title, trace
  types and point counts, axis titles.
- Vega and Vega-Lite (``application/vnd.vega.v*+json``, ``application/vnd.vegalite.v*+json``):
  title, mark, encoded fields, inline data rows.
- Jupyter widgets (``application/vnd.jupyter.widget-view+json``, ``{"model_id", "version_major",
  "version_minor"}``; the model's state lives in the notebook metadata or the live kernel, not in
  the output): the model id and the text fallback.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

__all__ = ["describe", "is_described"]

PLOTLY = "application/vnd.plotly.v1+json"
WIDGET = "application/vnd.jupyter.widget-view+json"
SVG = "image/svg+xml"
_VEGA = re.compile(r"^application/vnd\.(vega|vegalite)\.v\d+(\.\d+)*\+json$")
_SVG_ATTR = re.compile(r'\b(width|height|viewBox)\s*=\s*["\']([^"\']{1,60})["\']')
_SVG_TITLE = re.compile(r"<title[^>]*>([^<]{1,200})</title>", re.IGNORECASE)
_SVG_ELEMENT = re.compile(r"<(?![/!?])")
_SVG_SCAN = 2_000_000  # characters of an SVG looked at for its attributes and title
_ONE_LINE = 300


def is_described(mime_type: str) -> bool:
    """True for the MIME types this module describes in one line."""
    return mime_type in (PLOTLY, WIDGET, SVG) or _VEGA.match(mime_type) is not None


def _title(value: object) -> str:
    if isinstance(value, Mapping):
        value = value.get("text")
    return " ".join(value.split())[:120] if isinstance(value, str) else ""


def _points(trace: Mapping[str, Any]) -> int:
    for key in ("x", "y", "values", "z", "lat", "r"):
        value = trace.get(key)
        if isinstance(value, list):
            return len(value)
    return 0


def _plotly(value: object) -> str:
    figure = value if isinstance(value, Mapping) else {}
    data = figure.get("data")
    traces = [t for t in data if isinstance(t, Mapping)] if isinstance(data, list) else []
    layout = figure.get("layout")
    layout = layout if isinstance(layout, Mapping) else {}
    kinds = Counter(str(t.get("type", "scatter")) for t in traces)
    parts = [f"Plotly figure: {len(traces)} trace{'s' if len(traces) != 1 else ''}"]
    if kinds:
        parts[0] += " (" + ", ".join(f"{n} {k}" for k, n in kinds.most_common(6)) + ")"
    parts.append(f"{sum(_points(t) for t in traces):,} points")
    if title := _title(layout.get("title")):
        parts.insert(0, f"'{title}'")
    for axis in ("xaxis", "yaxis"):
        spec = layout.get(axis)
        if isinstance(spec, Mapping) and (name := _title(spec.get("title"))):
            parts.append(f"{axis[0]}: {name}")
    return "; ".join(parts)


def _vega(mime_type: str, value: object) -> str:
    spec = value if isinstance(value, Mapping) else {}
    family = "Vega-Lite" if "vegalite" in mime_type else "Vega"
    parts = [f"{family} chart"]
    if title := _title(spec.get("title")):
        parts.append(f"'{title}'")
    mark = spec.get("mark")
    if isinstance(mark, Mapping):
        mark = mark.get("type")
    if isinstance(mark, str):
        parts.append(f"mark {mark}")
    encoding = spec.get("encoding")
    if isinstance(encoding, Mapping):
        fields = [
            f"{channel}={enc.get('field')}"
            for channel, enc in list(encoding.items())[:8]
            if isinstance(enc, Mapping) and isinstance(enc.get("field"), str)
        ]
        if fields:
            parts.append(", ".join(fields))
    data = spec.get("data")
    if isinstance(data, Mapping) and isinstance(data.get("values"), list):
        parts.append(f"{len(data['values']):,} inline data rows")
    elif isinstance(data, Mapping) and isinstance(data.get("url"), str):
        parts.append(f"data from {data['url'][:80]}")
    layers = spec.get("layer")
    if isinstance(layers, list):
        parts.append(f"{len(layers)} layers")
    return "; ".join(parts)


def _svg(value: object) -> str:
    text = "".join(value) if isinstance(value, list) else value
    if not isinstance(text, str):
        return "SVG image (unreadable value)"
    head = text[:_SVG_SCAN]
    attrs: dict[str, str] = {}
    root = head.find("<svg")
    for match in _SVG_ATTR.finditer(head, max(root, 0), max(root, 0) + 2000):
        attrs.setdefault(match.group(1), match.group(2))
    parts = ["SVG image"]
    if "width" in attrs and "height" in attrs:
        parts.append(f"{attrs['width']} x {attrs['height']}")
    if "viewBox" in attrs:
        parts.append(f"viewBox {attrs['viewBox']}")
    parts.append(f"{len(_SVG_ELEMENT.findall(head)):,} elements")
    parts.append(f"{len(text):,} characters")
    if title := _SVG_TITLE.search(head):
        parts.append(f"title '{' '.join(title.group(1).split())}'")
    return "; ".join(parts)


def _widget(value: object, fallback: str) -> str:
    model = value.get("model_id") if isinstance(value, Mapping) else None
    line = f"Jupyter widget (model {model})" if isinstance(model, str) else "Jupyter widget"
    line += "; its state is not stored in the output"
    first = fallback.strip().split("\n", 1)[0] if fallback else ""
    if first:
        line += f"; text fallback: {first}"
    return line


def describe(mime_type: str, value: object, *, text_fallback: str = "") -> str:
    """One line (at most 300 characters) describing a value of a described MIME type.

    Args:
        mime_type: a type for which :func:`is_described` is True.
        value: the stored value (JSON for Plotly, Vega and widgets; text for SVG).
        text_fallback: the bundle's ``text/plain``, quoted for widgets.
    """
    if mime_type == PLOTLY:
        line = _plotly(value)
    elif mime_type == WIDGET:
        line = _widget(value, text_fallback)
    elif mime_type == SVG:
        line = _svg(value)
    else:
        line = _vega(mime_type, value)
    line = " ".join(line.split())
    return line if len(line) <= _ONE_LINE else line[: _ONE_LINE - 1] + "…"
