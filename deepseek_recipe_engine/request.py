"""The engine's public data: a generation request and the chunks its stream yields."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

import numpy as np
import torch

LogitsProcessor = Callable[[list[int], torch.Tensor], torch.Tensor]
"""Hook for constrained decoding: (token ids so far, logits [vocab]) -> logits to sample from."""


@runtime_checkable
class TokenBitmask(Protocol):
    """A logits processor that only allows some tokens and can say which as a bitmask, so that a
    GPU engine computes the mask on the host while the step runs and applies it on the device."""

    def __call__(self, token_ids: list[int], logits: torch.Tensor) -> torch.Tensor:
        """`logits` with every token not allowed next set to -inf."""
        ...

    def token_bitmask(self, token_ids: list[int]) -> np.ndarray:
        """The tokens allowed next as int32 words: bit `i % 32` of word `i // 32` allows token
        `i` (ids past the words are not allowed)."""
        ...


FinishReason = Literal["stop", "length", "cancelled"]

ConstraintEnforcement = Literal["logits_processor", "grammar"]
"""How a backend enforces output constraints: the bundled engine's logits processor, or a grammar
it compiles itself (`GenerationRequest.grammar`)."""


@dataclass
class GenerationRequest:
    """One generation over token ids. `seed=None` draws a random seed at submission."""

    prompt_ids: list[int]
    max_tokens: int = 16
    temperature: float = 1.0  # 0 means greedy
    top_p: float = 1.0
    seed: int | None = None
    logprobs: bool = False
    top_logprobs: int = 0  # alternatives reported per token (0..20), only with `logprobs`
    stop_token_ids: list[int] = field(default_factory=list)
    # Tokens never sampled: markup a model's answer does not hold (the bundled engine bans them;
    # vLLM and SGLang get them as `banned_token_bias()`).
    banned_token_ids: list[int] = field(default_factory=list)
    logits_processor: LogitsProcessor | None = None  # the bundled engine's constraint hook
    # The output constraint as an llguidance Lark grammar, for backends that enforce it themselves
    # (vLLM's and SGLang's structured outputs; deepseek_recipe_engine/grammar.py).
    grammar: str | None = None

    def banned_token_bias(self) -> dict[str, float]:
        """The banned tokens as a `logit_bias` (token id as a string: -100), for servers that
        take one; -100 is the strongest bias OpenAI-style APIs accept, never drawn in practice."""
        return {str(token): -100.0 for token in self.banned_token_ids}


@dataclass(frozen=True)
class TokenLogprob:
    """Log-probability of one token, with the most likely alternatives at that position."""

    token_id: int
    logprob: float
    top_logprobs: list[tuple[int, float]]  # (token id, logprob), most likely first


@dataclass(frozen=True)
class Ready:
    """The prompt was admitted; `prompt_cache_hit_tokens` of it were reused from the cache."""

    prompt_tokens: int
    prompt_cache_hit_tokens: int


@dataclass(frozen=True)
class Tokens:
    """Newly generated token ids, with their logprobs when requested (else None)."""

    token_ids: list[int]
    logprobs: list[TokenLogprob] | None


@dataclass(frozen=True)
class Finish:
    """The end of a stream, and why it ended.

    On `stop`, the matched stop token is `stop_token_id`; it is not part of any `Tokens` chunk
    (the stream parser would print it as text), but it was generated: count it where usage does.
    """

    reason: FinishReason
    stop_token_id: int | None = None


Chunk = Ready | Tokens | Finish
"""Anything an engine stream yields."""
