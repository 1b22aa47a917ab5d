"""Stream processing: model output in, protocol chunks, SSE bytes and complete responses out."""

from __future__ import annotations

import json
import secrets
import sys
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Mapping
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast

from deepseek_recipe import _native
from deepseek_recipe._json_text import json_text
from deepseek_recipe.errors import RequestParseError
from deepseek_recipe.requests import ConvertedRequest, Protocol
from deepseek_recipe.tokenizer import Tokenizer

if TYPE_CHECKING:  # the typed models (pydantic) load only when typed chunks are asked for
    from pydantic import TypeAdapter

    from deepseek_recipe.models.chat_completions import ChatCompletion, ChatCompletionChunk
    from deepseek_recipe.models.inference import FinishChunk, ReadyChunk, TextChunk, TokensChunk
    from deepseek_recipe.models.messages import Message, MessageStreamEvent
    from deepseek_recipe.models.responses import Response, ResponseStreamEvent

__all__ = [
    "InferenceChunkLike",
    "StreamChunk",
    "StreamProcessor",
    "StreamResponse",
    "accumulate",
    "new_response_id",
    "stream_sse",
]

StreamChunk: TypeAlias = "ChatCompletionChunk | ResponseStreamEvent | MessageStreamEvent"
"""A chunk of a Chat Completions stream, or an event of a Responses or Messages stream."""

StreamResponse: TypeAlias = "ChatCompletion | Response | Message"
"""A complete (non-streamed) response of one of the three protocols."""

InferenceChunkLike: TypeAlias = (
    "ReadyChunk | TextChunk | TokensChunk | FinishChunk | Mapping[str, Any]"
)
"""An inference chunk: a typed model or its JSON object (read by the core, strictly)."""

_ID_PREFIXES: dict[Protocol, str] = {
    "chat_completions": "chatcmpl-",
    "responses": "resp_",
    "messages": "msg_",
}
_TYPED_OUTPUT: dict[Protocol, tuple[str, str, str]] = {
    "chat_completions": ("chat_completions", "ChatCompletionChunk", "ChatCompletion"),
    "responses": ("responses", "ResponseStreamEvent", "Response"),
    "messages": ("messages", "MessageStreamEvent", "Message"),
}
"""Per protocol: its models module, its chunk (or event) type and its response type."""
_INFERENCE_MODULE = "deepseek_recipe.models.inference"
_INVALID_CHUNK = "invalid inference chunk"
"""The core's prefix for an inference chunk it cannot read."""


def _typed_model(protocol: Protocol, response: bool) -> Any:
    """The protocol's chunk (or event) type, or its response type, imported on first use."""
    module, chunk_type, response_type = _TYPED_OUTPUT[protocol]
    models = import_module(f"deepseek_recipe.models.{module}")
    return getattr(models, response_type if response else chunk_type)


@cache
def _chunk_adapter(protocol: Protocol) -> TypeAdapter[Any]:
    from pydantic import TypeAdapter

    return TypeAdapter(_typed_model(protocol, response=False))


def new_response_id(protocol: Protocol) -> str:
    """A fresh response id of the protocol's official shape (`chatcmpl-…`, `resp_…`, `msg_…`)."""
    return _ID_PREFIXES[protocol] + secrets.token_hex(12)


class StreamProcessor(_native.StreamProcessor):
    """Feeds a model's output through the parser and one protocol's chunk generator.

    Every chunk produced is also accumulated, so `response()` gives the complete non-streamed
    response at any time. Malformed model output is data, never an exception; pushing after the
    stream finished raises `RecipeError`.

    The fast paths (`push_text`, `push_tokens`, their `_many` batch forms, `push_finish`,
    `finish_sse`) are the core's own methods, so a piece costs no Python frame.
    """

    protocol: Protocol
    """The protocol of the converted request: which chunks and response this produces."""
    response_id: str
    """The id every chunk and the response carry."""

    def __new__(
        cls,
        converted: ConvertedRequest,
        *,
        response_id: str | None = None,
        model: str | None = None,
        tokenizer: Tokenizer | Literal[False] | None = None,
        seed: int | None = None,
        created: int | None = None,
        signature: str | None = None,
        parsing_options: Mapping[str, Any] | None = None,
        prompt_usage: tuple[int, int] | None = None,
        thinking_mode: bool | None = None,
    ) -> StreamProcessor:
        """Set up the processor for `converted`.

        `model` defaults to the requested model name; `tokenizer` (for token-id input and the
        reasoning-token count) to the bundled V4 one, `False` for none (text input only);
        `seed` fixes the random tool-call ids; `created` the timestamps;
        `signature` is the Messages thinking signature; `parsing_options` replaces the converted
        ones (e.g. extra stop sequences); `prompt_usage` = (prompt tokens, cache hits) seeds the
        accumulated response until the ready chunk reports usage. `thinking_mode` (Messages)
        reproduces the reference harness's direct generator; production code leaves it alone. An
        empty `response_id` or `model` is used as given.
        """
        if response_id is None:
            response_id = new_response_id(converted.protocol)
        options: dict[str, Any] = {
            "seed": seed,
            "created": created,
            "signature": signature,
            "parsing_options": None if parsing_options is None else dict(parsing_options),
            "prompt_usage": None
            if prompt_usage is None
            else {"prompt_tokens": prompt_usage[0], "prompt_cache_hit_tokens": prompt_usage[1]},
            "thinking_mode": thinking_mode,
            "bundled_tokenizer": False if tokenizer is False else None,
        }
        set_options = {name: value for name, value in options.items() if value is not None}
        processor = super().__new__(
            cls,
            converted.native,
            response_id,
            converted.request_model if model is None else model,
            tokenizer.native if isinstance(tokenizer, Tokenizer) else None,
            json.dumps(set_options) if set_options else None,
        )
        processor.protocol = converted.protocol
        processor.response_id = response_id
        return processor

    def push_records(self, chunk: InferenceChunkLike) -> list[tuple[str | None, str]]:
        """Feeds one inference chunk; returns `(sse_event, compact JSON)` per chunk produced."""
        return self.push_json_records(_chunk_json(chunk))

    def push(self, chunk: InferenceChunkLike) -> list[StreamChunk]:
        """Feeds one inference chunk; returns the typed protocol chunks it produced."""
        return self._typed(self.push_json_records(_chunk_json(chunk)))

    def push_sse(self, chunk: InferenceChunkLike) -> bytes:
        """Feeds one inference chunk; returns the ready-to-send SSE bytes it produced."""
        return self.push_json_sse(_chunk_json(chunk))

    def finish(self) -> list[StreamChunk]:
        """Ends the stream; returns the typed chunks this produced."""
        return self._typed(self.finish_records())

    def response(self) -> StreamResponse:
        """The complete response accumulated from every chunk so far, typed."""
        return cast(
            "StreamResponse",
            _typed_model(self.protocol, response=True).model_validate_json(self.response_json()),
        )

    def _typed(self, records: list[tuple[str | None, str]]) -> list[StreamChunk]:
        adapter = _chunk_adapter(self.protocol)
        return [cast("StreamChunk", adapter.validate_json(data)) for _, data in records]


def accumulate(
    converted: ConvertedRequest,
    chunks: Iterable[InferenceChunkLike],
    **processor_args: Any,
) -> StreamResponse:
    """The complete (non-streamed) response for a whole model output."""
    processor = StreamProcessor(converted, **processor_args)
    for chunk in chunks:
        if processor.finished:
            break
        processor.push(chunk)
    if not processor.finished:
        processor.finish()
    return processor.response()


async def stream_sse(
    processor: StreamProcessor, chunks: AsyncIterable[InferenceChunkLike]
) -> AsyncIterator[bytes]:
    """Async adapter for servers: SSE bytes for each inference chunk, then the terminal frames.

    Stops reading `chunks` once the stream has finished (e.g. a stop sequence matched).
    """
    async for chunk in chunks:
        data = processor.push_sse(chunk)
        if data:
            yield data
        if processor.finished:
            break
    yield processor.finish_sse()


def _chunk_json(chunk: InferenceChunkLike) -> str:
    """The JSON text of an inference chunk; the core reads it (strictly) when it is pushed.

    A typed chunk writes its own JSON; a JSON object is written as is, so the core's reader is
    the one validation of chunks given as objects (no pydantic model is loaded for them).
    """
    if isinstance(chunk, Mapping):
        try:
            return json_text(dict(chunk))
        except (TypeError, ValueError) as error:  # a value JSON has no form for
            raise RequestParseError(f"{_INVALID_CHUNK}: {error}") from None
    inference = sys.modules.get(_INFERENCE_MODULE)  # loaded whenever a typed chunk exists
    if inference is not None and isinstance(chunk, inference.INFERENCE_CHUNK_TYPES):
        return chunk.to_json()
    raise RequestParseError(
        f"{_INVALID_CHUNK}: expected a JSON object or a typed inference chunk, "
        f"got {type(chunk).__name__}"
    )
