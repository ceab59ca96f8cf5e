"""The transport bound: the compact serialised response must fit ``max_transport_bytes``.

Big values (a text page, base64, a JSON value) are never serialised twice: the response is
serialised once with an empty-string placeholder in their place and their own size, already
known, is added arithmetically.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.outputs._jsonsafe import make_serialisable, protocol_error

__all__ = ["BigValue", "fit_transport"]

_PLACEHOLDER_BYTES = 2  # ``""``
_HINT_MARGIN = 64  # room for fields that change with the page (next_offset, truncated)


class BigValue(NamedTuple):
    """A large value held at ``response[path...]["data"]``.

    Attributes:
        path: keys from the response to the dict holding ``"data"`` (``()`` for the top).
        value: the value, already serialisable.
        json_bytes: its compact serialised size in bytes.
        text_characters: for a text page, its length in code points (enables a limit hint).
        prefix_json_bytes: for a text page, the serialised size (quotes included) of its
            first ``n`` code points; used to check the hint before suggesting it.
    """

    path: tuple[str, ...]
    value: Any
    json_bytes: int
    text_characters: int | None = None
    prefix_json_bytes: Callable[[int], int] | None = None


def _holder(response: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    node = response
    for key in path:
        node = node[key]
    return node


def fit_transport(
    response: dict[str, Any], big: BigValue | None, max_transport_bytes: int
) -> dict[str, Any]:
    """Return the response, made serialisable, once its compact size is known to fit.

    If ``big`` is given, ``response`` must hold an empty-string placeholder at its place; the
    returned response holds the value there.

    Raises:
        OutputProtocolError: ``OUTPUT_TOO_LARGE`` with details ``bytes`` and
            ``max_transport_bytes`` (and ``limit``, a suggested smaller page, for text);
            ``OUTPUT_DATA_INVALID`` when a stored value cannot be serialised at all.
    """
    response, skeleton_bytes = make_serialisable(response)
    total = skeleton_bytes
    if big is not None:
        total += big.json_bytes - _PLACEHOLDER_BYTES
    if total > max_transport_bytes:
        details: dict[str, Any] = {"bytes": total, "max_transport_bytes": max_transport_bytes}
        message = (
            f"The response would be {total} bytes, over the transport limit of "
            f"{max_transport_bytes} bytes."
        )
        hint = _limit_hint(big, max_transport_bytes - skeleton_bytes - _HINT_MARGIN)
        if hint is not None:
            details["limit"] = hint
            message += f" Ask for a smaller page, for example limit={hint}."
        raise protocol_error(ErrorCode.OUTPUT_TOO_LARGE, message, details)
    if big is not None:
        _holder(response, big.path)["data"] = big.value
    return response


_HINT_ROUNDS = 8


def _limit_hint(big: BigValue | None, budget: int) -> int | None:
    """A page length (code points) whose data fits ``budget`` bytes, checked by measuring.

    Starts from the proportional estimate and shrinks it at most 8 times; None when the
    page is not text or nothing fits.
    """
    if big is None or not big.text_characters or big.prefix_json_bytes is None or budget < 1:
        return None
    hint = big.text_characters
    content = big.json_bytes - _PLACEHOLDER_BYTES
    for _ in range(_HINT_ROUNDS):
        hint = min(hint - 1, budget * hint // max(content, 1))
        if hint < 1:
            return None
        content = big.prefix_json_bytes(hint) - _PLACEHOLDER_BYTES
        if content <= budget:
            return hint
    return None
