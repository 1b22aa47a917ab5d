"""The exceptions of deepseek_recipe: one hierarchy under `RecipeError`."""

__all__ = ["RecipeError", "TokenizerError"]


class RecipeError(ValueError):
    """Base class of every error deepseek_recipe raises on bad input."""


class TokenizerError(RecipeError):
    """A tokenizer could not be loaded (invalid or unsupported `tokenizer.json`), or was given an
    unknown token id."""
