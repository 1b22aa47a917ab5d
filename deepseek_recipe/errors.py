"""The exceptions of deepseek_recipe: one hierarchy under `RecipeError`."""

from __future__ import annotations

import json
from typing import Any, cast

__all__ = [
    "ConversionError",
    "EncodeError",
    "ImageError",
    "RecipeError",
    "RequestParseError",
    "TokenizerError",
]


class RecipeError(ValueError):
    """Base class of every error deepseek_recipe raises on bad input."""


class TokenizerError(RecipeError):
    """A tokenizer could not be loaded (invalid or unsupported `tokenizer.json`), or was given an
    unknown token id."""


INVALID_JSON_PREFIX = "invalid JSON request: "
"""How the message of a `RequestParseError` for a body that is not JSON starts (the reference's
wording; too deep a nesting is one of them)."""


class RequestParseError(RecipeError):
    """A request body is not valid JSON or not a request of its protocol (wrong types, missing
    fields). The official API has no documented status for this stage."""

    @property
    def is_invalid_json(self) -> bool:
        """Whether the body is not JSON at all, rather than JSON of the wrong shape."""
        return str(self).startswith(INVALID_JSON_PREFIX)


class ConversionError(RecipeError):
    """A well-formed request the official API rejects: carries its HTTP status and error body."""

    def __init__(self, message: str, status_code: int, body: str | dict[str, Any]) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.body: dict[str, Any] = (
            cast(dict[str, Any], json.loads(body)) if isinstance(body, str) else body
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.status_code, self.body))


class EncodeError(RecipeError):
    """A rendered prompt could not be encoded (a special-token spelling is not in the tokenizer)."""


class ImageError(RecipeError):
    """An image could not be fetched, decoded or resolved (V4.1 image input).

    `kind` names the reason as the reference does (`TooManyImages`, `ImageTooLarge`,
    `UnsupportedMediaType`, `Decode`, `Fetch`, `DestinationRejected`, ...) and `retryable` says
    whether retrying the same operation may succeed. The official API's HTTP status for these
    errors is not known, so none is attached.
    """

    def __init__(self, message: str, kind: str, retryable: bool = False) -> None:
        super().__init__(message)
        self.kind = kind
        self.retryable = retryable

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.kind, self.retryable))
