"""deepseek-recipe: DeepSeek V4 / V4.1 requests, prompts, tokens and streams, as the official API does."""

from deepseek_recipe._native import __version__
from deepseek_recipe.errors import RecipeError, TokenizerError
from deepseek_recipe.tokenizer import IncrementalDecoder, Tokenizer

__all__ = ["__version__"]
__all__ += ["IncrementalDecoder", "RecipeError", "Tokenizer", "TokenizerError"]
