"""deepseek-recipe: DeepSeek V4 / V4.1 prompts, tokens and streams, exactly as the official API."""

from deepseek_recipe._native import __version__

__all__ = ["__version__"]
