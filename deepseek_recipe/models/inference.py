"""Inference chunks: what a backend hands to the stream parser (the stream vectors' `inputs`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, Strict, StrictFloat, StrictInt

from deepseek_recipe.models.common import UInt64, WireModel

__all__ = [
    "INFERENCE_CHUNK_TYPES",
    "FinishChunk",
    "FinishReason",
    "InferenceChunk",
    "PromptUsage",
    "ReadyChunk",
    "TextChunk",
    "TokenLogprobEntry",
    "TokensChunk",
    "TopTokenLogprob",
]

FinishReason = Literal["stop", "length", "content_filter"]
"""Why the backend stopped generating."""

TopTokenLogprob = Annotated[tuple[StrictInt, StrictFloat], Strict(False)]
"""One `(token_id, logprob)` alternative; lists are accepted as well as tuples."""

TokenLogprobEntry = Annotated[tuple[StrictFloat, list[TopTokenLogprob]], Strict(False)]
"""The logprob of one generated token and its top alternatives; lists are accepted as tuples."""


class PromptUsage(WireModel):
    """Prompt token counts reported by the backend when the stream starts."""

    prompt_tokens: UInt64
    prompt_cache_hit_tokens: UInt64


class ReadyChunk(WireModel):
    """Starts the stream; prompt usage is present when `prompt_tokens` is."""

    kind: Literal["ready"]
    prompt_tokens: UInt64 | None = None
    prompt_cache_hit_tokens: UInt64 | None = None
    system_fingerprint: str | None = None

    @property
    def prompt_usage(self) -> PromptUsage | None:
        """The prompt usage carried by this chunk, if any (cache hits default to 0)."""
        if self.prompt_tokens is None:
            return None
        return PromptUsage(
            prompt_tokens=self.prompt_tokens,
            prompt_cache_hit_tokens=self.prompt_cache_hit_tokens or 0,
        )


class TextChunk(WireModel):
    """One piece of generated text and the number of tokens it stands for."""

    kind: Literal["text"]
    content: str
    token_count: UInt64


class TokensChunk(WireModel):
    """Generated token ids, optionally with one logprob entry per id."""

    kind: Literal["tokens"]
    token_ids: list[int]
    logprobs: list[TokenLogprobEntry] | None = None


class FinishChunk(WireModel):
    """Ends the stream with the backend's finish reason."""

    kind: Literal["finish"]
    finish_reason: FinishReason


InferenceChunk = Annotated[
    ReadyChunk | TextChunk | TokensChunk | FinishChunk, Field(discriminator="kind")
]
"""An inference chunk, chosen by `kind`."""

INFERENCE_CHUNK_TYPES = (ReadyChunk, TextChunk, TokensChunk, FinishChunk)
"""The typed inference chunk classes, for `isinstance` checks."""
