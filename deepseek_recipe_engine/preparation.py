"""Preparing a request off the event loop: convert, encode, count images, plan the generation.

This is the CPU-heavy part of a request (an 8 MiB message takes seconds to encode). It runs on a
small pool of worker threads, so the event loop keeps streaming other answers meanwhile: the
native calls release the GIL. The pool's size bounds how much of this work runs at once, and
large bodies may take all but one of its threads, so they never hold up ordinary requests.
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
    Tokenizer,
    convert,
)
from deepseek_recipe.images import request_token_adjustment
from deepseek_recipe.requests import Protocol
from deepseek_recipe.stream import StreamProcessor
from deepseek_recipe_engine.constraints import ConstraintError
from deepseek_recipe_engine.errors import error_response
from deepseek_recipe_engine.recipe_request import generation_request
from deepseek_recipe_engine.request import GenerationRequest

__all__ = ["LARGE_BODY_BYTES", "PreparedRequest", "RequestPreparer"]

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


class RequestPreparer:
    """Turns request bodies into `PreparedRequest`s, or official error answers, on `threads`
    worker threads, of which bodies over `LARGE_BODY_BYTES` take at most `threads - 1` (one when
    `threads` is 1)."""

    def __init__(
        self,
        *,
        tokenizer: Tokenizer,
        options: ConversionOptions,
        context_limit: int,
        max_completion_tokens: int | None,
        image_resolver: ImageResolver,
        threads: int,
    ) -> None:
        self.tokenizer = tokenizer
        self.options = options
        self.context_limit = context_limit
        self.max_completion_tokens = max_completion_tokens
        self.image_resolver = image_resolver
        threads = max(1, threads)
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="prepare-request")
        self._large_slots = asyncio.Semaphore(max(1, threads - 1))

    async def prepare(self, body: bytes, protocol: Protocol) -> PreparedRequest | Response:
        """The prepared request, or the official error for an invalid one."""
        loop = asyncio.get_running_loop()
        if len(body) <= LARGE_BODY_BYTES:
            return await loop.run_in_executor(self._pool, self._prepare, body, protocol)
        async with self._large_slots:
            return await loop.run_in_executor(self._pool, self._prepare, body, protocol)

    def close(self) -> None:
        """Stop the worker threads once their current work is done."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _prepare(self, body: bytes, protocol: Protocol) -> PreparedRequest | Response:
        try:
            converted = convert(body, protocol=protocol, options=self.options)
            prompt_ids = converted.encode(self.tokenizer)
            image_tokens = request_token_adjustment(converted, self.image_resolver)
            generation = generation_request(
                converted,
                prompt_ids,
                context_limit=self.context_limit,
                image_tokens=image_tokens,
            )
        except ConversionError as error:
            return JSONResponse(error.body, status_code=error.status_code)
        except RequestParseError as error:
            if error.is_invalid_json:
                return error_response(400, str(error))
            return error_response(422, f"Failed to deserialize the request: {error}")
        except ImageError as error:  # the official status is not recorded
            return error_response(400, f"Invalid image: {error}")
        except RecipeError as error:  # e.g. a special token the tokenizer lacks
            return error_response(422, f"Failed to deserialize the request: {error}")
        except ConstraintError as error:  # e.g. a response regex or schema that cannot compile
            return error_response(400, f"Invalid output constraint: {error}")
        if generation.top_p <= 0:  # the official range includes 0: the most likely token
            generation.temperature, generation.top_p = 0.0, 1.0
        if self.max_completion_tokens is not None:
            generation.max_tokens = min(generation.max_tokens, self.max_completion_tokens)
        processor = StreamProcessor(converted, tokenizer=self.tokenizer)
        return PreparedRequest(converted, generation, processor, image_tokens)
