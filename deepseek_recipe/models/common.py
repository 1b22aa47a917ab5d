"""Shared pieces of the wire models: the base class, usage, logprobs, errors and shared enums."""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, JsonValue

__all__ = [
    "CompletionTokensDetails",
    "CompletionUsage",
    "ErrorBody",
    "ErrorDetail",
    "ImageDetail",
    "InputTokensDetails",
    "JsonSchema",
    "MessageDeltaUsage",
    "MessageUsage",
    "OutputTokensDetails",
    "PromptTokensDetails",
    "ReasoningEffort",
    "ResponseUsage",
    "ThinkingConfig",
    "TokenLogprob",
    "TopLogprob",
    "UInt8",
    "UInt32",
    "UInt64",
    "WireModel",
]

UInt8 = Annotated[int, Field(ge=0, le=2**8 - 1)]
"""An integer the wire format reads as `u8`."""
UInt32 = Annotated[int, Field(ge=0, le=2**32 - 1)]
"""An integer the wire format reads as `u32`."""
UInt64 = Annotated[int, Field(ge=0, le=2**64 - 1)]
"""An integer the wire format reads as `u64`."""

JsonSchema = JsonValue
"""A JSON Schema document; any JSON value here, its content is checked by the Rust core."""

ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "ultra", "max"]
"""Every reasoning effort the three protocols accept (`none` turns thinking off)."""

ImageDetail = Literal["low", "high", "original", "auto"]
"""Image detail levels of OpenAI image inputs."""


class WireModel(BaseModel):
    """Base of every wire model: strict JSON types, unknown fields kept, compact JSON output."""

    model_config = ConfigDict(
        extra="allow",
        strict=True,
        allow_inf_nan=False,
        populate_by_name=True,
    )

    def to_json(self) -> str:
        """Compact JSON of exactly the fields that were set (parsed or passed), extras included."""
        return self.model_dump_json(exclude_unset=True, by_alias=True)


def tag_of(value: Any, field: str) -> Any:
    """Read a discriminator field from a raw mapping (validation) or a model (serialisation)."""
    if isinstance(value, dict):
        return cast("dict[str, Any]", value).get(field)
    return getattr(value, field, None)


class ThinkingConfig(WireModel):
    """The `thinking` switch of Chat Completions and Messages requests."""

    type: Literal["enabled", "disabled", "adaptive"]
    budget_tokens: UInt64 | None = None


class TopLogprob(WireModel):
    """One alternative token with its log probability."""

    token: str
    logprob: float
    bytes: list[int] | None = None


class TokenLogprob(WireModel):
    """Log probability of one emitted token, with its top alternatives."""

    token: str
    logprob: float
    bytes: list[int] | None = None
    top_logprobs: list[TopLogprob]


class PromptTokensDetails(WireModel):
    """Chat Completions prompt token breakdown."""

    cached_tokens: int | None = None


class CompletionTokensDetails(WireModel):
    """Chat Completions completion token breakdown."""

    reasoning_tokens: int | None = None


class CompletionUsage(WireModel):
    """Chat Completions usage, with DeepSeek's prompt cache hit/miss counts."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    prompt_tokens_details: PromptTokensDetails | None = None
    completion_tokens_details: CompletionTokensDetails | None = None
    prompt_cache_hit_tokens: int | None = None
    prompt_cache_miss_tokens: int | None = None


class InputTokensDetails(WireModel):
    """Responses input token breakdown."""

    cached_tokens: int


class OutputTokensDetails(WireModel):
    """Responses output token breakdown."""

    reasoning_tokens: int


class ResponseUsage(WireModel):
    """Responses usage."""

    input_tokens: int
    input_tokens_details: InputTokensDetails
    output_tokens: int
    output_tokens_details: OutputTokensDetails
    total_tokens: int


class MessageUsage(WireModel):
    """Messages usage (`input_tokens` counts cache misses only)."""

    input_tokens: int
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    output_tokens: int
    service_tier: Literal["standard", "priority", "batch"] | None = None


class MessageDeltaUsage(WireModel):
    """Messages usage carried by `message_delta` (cumulative)."""

    input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    output_tokens: int
    service_tier: Literal["standard", "priority", "batch"] | None = None


class ErrorDetail(WireModel):
    """The inner object of an API error body."""

    message: str
    type: str
    param: str | None = None
    code: str | None = None


class ErrorBody(WireModel):
    """An API error body: `{"error": {message, type, param, code}}` (same for all protocols)."""

    error: ErrorDetail
