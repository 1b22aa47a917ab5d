"""Preparing a request off the event loop: convert, encode, count images, plan the generation.

This is the CPU-heavy part of a request (an 8 MiB message takes seconds to encode). It runs on a
small pool of worker threads, so the event loop keeps streaming other answers meanwhile: the
native calls release the GIL. The pool's size bounds how much of this work runs at once, and
large bodies may take all but one of its threads, so they never hold up ordinary requests. V4.1
images (fetched from URLs, decoded, resized) are resolved on a pool of their own, so a slow
image host holds up only the requests that name its images.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from starlette.responses import JSONResponse, Response

from deepseek_recipe import (
    ConversionError,
    ConversionOptions,
    ConvertedRequest,
    ImageError,
    ImageResolver,
    RecipeError,
    RequestParseError,
    convert,
)
from deepseek_recipe.images import request_image_sources, request_token_adjustment
from deepseek_recipe.requests import Protocol
from deepseek_recipe.stream import StreamProcessor
from deepseek_recipe_engine.constraints import ConstraintError
from deepseek_recipe_engine.errors import error_response
from deepseek_recipe_engine.model_tokenizers import ModelTokenizers
from deepseek_recipe_engine.recipe_request import generation_request
from deepseek_recipe_engine.request import ConstraintEnforcement, GenerationRequest

__all__ = [
    "LARGE_BODY_BYTES",
    "EncodedRequest",
    "PreparedRequest",
    "RequestPreparer",
    "official_error",
]

LARGE_BODY_BYTES = 256 * 1024
"""Bodies larger than this may take seconds to prepare; they share all but one worker thread."""


@dataclass
class PreparedRequest:
    """A request ready to generate: the engine's request and the processor of its answer."""

    converted: ConvertedRequest
    generation: GenerationRequest
    processor: StreamProcessor
    image_tokens: int
    """Prompt tokens the images add beyond their placeholders (billed, not in the prompt ids)."""


@dataclass
class EncodedRequest:
    """A converted and encoded request whose images are still to be resolved."""

    converted: ConvertedRequest
    prompt_ids: list[int]


class RequestPreparer:
    """Turns request bodies into `PreparedRequest`s, or official error answers, on `threads`
    worker threads (bodies over `LARGE_BODY_BYTES` take at most `threads - 1` of them, one when
    `threads` is 1); requests with images finish on `image_threads` more."""

    def __init__(
        self,
        *,
        tokenizers: ModelTokenizers,
        model_vocab: int | None,
        options: ConversionOptions,
        context_limit: int,
        enforcement: ConstraintEnforcement,
        max_completion_tokens: int | None,
        image_resolver: ImageResolver,
        threads: int,
        image_threads: int,
    ) -> None:
        self.tokenizers = tokenizers
        self.model_vocab = model_vocab  # the backend model's ids (None: unknown)
        self.options = options
        self.context_limit = context_limit
        self.enforcement: ConstraintEnforcement = enforcement
        self.max_completion_tokens = max_completion_tokens
        self.image_resolver = image_resolver
        threads = max(1, threads)
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="prepare-request")
        self._image_pool = ThreadPoolExecutor(
            max(1, image_threads), thread_name_prefix="resolve-images"
        )
        self._large_slots = asyncio.Semaphore(max(1, threads - 1))

    async def prepare(self, body: bytes, protocol: Protocol) -> PreparedRequest | Response:
        """The prepared request, or the official error for an invalid one."""
        loop = asyncio.get_running_loop()
        if len(body) <= LARGE_BODY_BYTES:
            result = await loop.run_in_executor(self._pool, self._prepare, body, protocol)
        else:
            async with self._large_slots:
                result = await loop.run_in_executor(self._pool, self._prepare, body, protocol)
        if isinstance(result, EncodedRequest):
            return await loop.run_in_executor(self._image_pool, self._finish, result)
        return result

    def close(self) -> None:
        """Stop the worker threads once their current work is done."""
        for pool in (self._pool, self._image_pool):
            pool.shutdown(wait=False, cancel_futures=True)

    def _prepare(
        self, body: bytes, protocol: Protocol
    ) -> PreparedRequest | EncodedRequest | Response:
        """Convert and encode; finish here unless the request has images to resolve."""
        try:
            converted = convert(body, protocol=protocol, options=self.options)
            tokenizer = self.tokenizers.of(converted.model_version)
            encoded = EncodedRequest(converted, converted.encode(tokenizer))
        except (RecipeError, ConstraintError) as error:
            return official_error(error)
        if request_image_sources(converted):
            return encoded
        return self._finish(encoded)

    def _finish(self, encoded: EncodedRequest) -> PreparedRequest | Response:
        """Count the images, plan the generation, set up the answer's stream processor."""
        converted = encoded.converted
        try:
            image_tokens = request_token_adjustment(converted, self.image_resolver)
            generation = generation_request(
                converted,
                encoded.prompt_ids,
                context_limit=self.context_limit,
                enforcement=self.enforcement,
                image_tokens=image_tokens,
                absent_token_ids=self.tokenizers.absent_ids(
                    converted.model_version, self.model_vocab
                ),
            )
        except (RecipeError, ConstraintError) as error:
            return official_error(error)
        if generation.top_p <= 0:  # the official range includes 0: the most likely token
            generation.temperature, generation.top_p = 0.0, 1.0
        if self.max_completion_tokens is not None:
            generation.max_tokens = min(generation.max_tokens, self.max_completion_tokens)
        tokenizer = self.tokenizers.of(converted.model_version)
        processor = StreamProcessor(converted, tokenizer=tokenizer)
        return PreparedRequest(converted, generation, processor, image_tokens)


def official_error(error: RecipeError | ConstraintError) -> Response:
    """The answer to a request the recipe or the engine refuses."""
    if isinstance(error, ConversionError):
        return JSONResponse(error.body, status_code=error.status_code)
    if isinstance(error, RequestParseError):
        if error.is_invalid_json:
            return error_response(400, str(error))
        return error_response(422, f"Failed to deserialize the request: {error}")
    if isinstance(error, ImageError):  # the official status is not recorded
        return error_response(400, f"Invalid image: {error}")
    if isinstance(error, ConstraintError):  # e.g. a response regex or schema that cannot compile
        return error_response(400, f"Invalid output constraint: {error}")
    # e.g. a special token the tokenizer lacks
    return error_response(422, f"Failed to deserialize the request: {error}")
