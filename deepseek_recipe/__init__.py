"""deepseek-recipe: DeepSeek V4 / V4.1 prompts, tokens and streams, exactly as the official API."""

from deepseek_recipe._native import __version__
from deepseek_recipe.errors import (
    ConversionError,
    EncodeError,
    ImageError,
    RecipeError,
    RequestParseError,
    TokenizerError,
)
from deepseek_recipe.images import (
    FetchPolicy,
    ImageQuota,
    ImageResolver,
    ImageSource,
    PreprocessedImage,
    PreprocessOptions,
    ResolveBudget,
    ResolverLimits,
    image_tokens,
    preprocess,
)
from deepseek_recipe.requests import (
    ConversionOptions,
    ConvertedRequest,
    RenderedPrompt,
    convert,
    count_prompt_tokens,
    encode,
    render,
)
from deepseek_recipe.tokenizer import BatchBytes, BatchIds, IncrementalDecoder, Tokenizer

__all__ = [
    "BatchBytes",
    "BatchIds",
    "ConversionError",
    "ConversionOptions",
    "ConvertedRequest",
    "EncodeError",
    "FetchPolicy",
    "ImageError",
    "ImageQuota",
    "ImageResolver",
    "ImageSource",
    "IncrementalDecoder",
    "PreprocessOptions",
    "PreprocessedImage",
    "RecipeError",
    "RenderedPrompt",
    "RequestParseError",
    "ResolveBudget",
    "ResolverLimits",
    "Tokenizer",
    "TokenizerError",
    "__version__",
    "convert",
    "count_prompt_tokens",
    "encode",
    "image_tokens",
    "preprocess",
    "render",
]
