"""deepseek-recipe: DeepSeek V4 / V4.1 requests, prompts, tokens and streams, as the official API does."""

from deepseek_recipe._native import __version__

__all__ = ["__version__"]
