"""The exceptions of deepseek_recipe: one hierarchy under `RecipeError(ValueError)`.

The classes are defined by the native module (so every core error is raised as its class) and
live here by name: `RecipeError`, `RequestParseError` (`is_invalid_json`), `ConversionError`
(`status_code`, `body`), `TokenizerError`, `EncodeError`, `ConstraintError` and `ImageError`
(`kind`, `retryable`). They pickle with their attributes.
"""

from __future__ import annotations

from deepseek_recipe._native import (
    INVALID_JSON_PREFIX,
    ConstraintError,
    ConversionError,
    EncodeError,
    ImageError,
    RecipeError,
    RequestParseError,
    TokenizerError,
)

__all__ = [
    "INVALID_JSON_PREFIX",
    "ConstraintError",
    "ConversionError",
    "EncodeError",
    "ImageError",
    "RecipeError",
    "RequestParseError",
    "TokenizerError",
]
