"""The JSON text of a Python value handed to the core (a request or an inference chunk given as
an object), written so that the core's parser reports whatever is wrong with the value exactly as
it would for JSON text: one reader, one set of errors."""

from __future__ import annotations

import json
from typing import Any, cast

__all__ = ["json_text"]

_CUT_DEPTH = 256
"""Nesting kept by `_cut_below`: beyond the parser's limit (128), well within Python's."""


def json_text(value: object) -> str:
    """`value` as JSON text for the core's parser.

    NaN and infinities are written as Python writes them (not JSON: the parser refuses them); a
    string holding a lone surrogate, which has no UTF-8, is written with escapes (the parser
    refuses the escaped surrogate); a value nested deeper than Python recurses, far deeper than
    the parser accepts, is cut below the parser's depth limit, so it fails where the whole value's
    JSON would, with the same error. Values JSON has no form for raise `TypeError`.
    """
    try:
        text = json.dumps(value, ensure_ascii=False)
    except RecursionError:
        return json_text(_cut_below(value, _CUT_DEPTH))
    if text.isascii():  # O(1): the common case needs no check
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value)  # every non-ASCII character escaped, the lone surrogate too
    return text


def _cut_below(value: object, depth: int) -> object:
    """`value` with every object or array nested `depth` levels down replaced by `null`."""
    if not isinstance(value, dict | list | tuple):
        return value
    if depth == 0:
        return None
    if isinstance(value, dict):
        items = cast(dict[Any, Any], value).items()
        return {key: _cut_below(item, depth - 1) for key, item in items}
    return [_cut_below(item, depth - 1) for item in cast(list[Any] | tuple[Any, ...], value)]
