"""Next-token choice (greedy, temperature, top_p) and logprobs, row by row independent of the batch.

Randomness: each sampled token draws one uniform number from a `torch.Generator` seeded from
(request seed, token position), so a token depends only on its own request and position, never on
the batch it was computed in or on how many tokens other requests drew before it.

Banned tokens (`SamplingRow.banned_token_ids`) are never chosen.

Logprobs: reported from the model's own distribution, `log_softmax(logits)`, before the ban, the
logits processor, temperature and top_p are applied (as vLLM's default "raw logprobs"), so a token's
logprob does not change with the sampling settings. `top_logprobs` lists the most likely tokens of
that same distribution.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from deepseek_recipe_engine.request import LogitsProcessor, TokenLogprob

MAX_TOP_LOGPROBS = 20
_MASK64 = (1 << 64) - 1


def generator_seed(seed: int, position: int) -> int:
    """Mix (seed, position) into a 63-bit generator seed (SplitMix64 finaliser)."""
    z = (seed * 0x9E3779B97F4A7C15 + position + 1) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return (z ^ (z >> 31)) >> 1


@dataclass(frozen=True)
class SamplingRow:
    """How to pick the token of one row of logits."""

    temperature: float
    top_p: float
    seed: int
    position: int  # index in the sequence of the token being chosen
    logprobs: bool
    top_logprobs: int
    token_ids: list[int]  # the sequence so far, for the logits processor
    logits_processor: LogitsProcessor | None = None
    banned_token_ids: tuple[int, ...] = ()  # never chosen (their logprobs stay reported)


@dataclass(frozen=True)
class Sampled:
    """The chosen token of one row, with its logprob when asked for."""

    token_id: int
    logprob: TokenLogprob | None


def uniform(seed: int, position: int) -> float:
    """The one uniform number in [0, 1) of the token at `position` of a request seeded `seed`."""
    generator = torch.Generator().manual_seed(generator_seed(seed, position))
    return float(torch.rand(1, generator=generator, dtype=torch.float64))


def _pick(probs: torch.Tensor, order: torch.Tensor | None, u: float) -> int:
    """Inverse-CDF draw from `probs` (optionally sorted, `order` mapping back to token ids)."""
    cdf = probs.double().cumsum(0)
    target = torch.tensor([u * float(cdf[-1])], dtype=torch.float64)
    index = int(torch.searchsorted(cdf, target, right=True))
    index = min(index, probs.shape[0] - 1)
    return int(order[index]) if order is not None else index


def _choose(logits: torch.Tensor, row: SamplingRow) -> int:
    if row.banned_token_ids:
        logits = logits.clone()
        logits[list(row.banned_token_ids)] = float("-inf")
    if row.logits_processor is not None:
        logits = row.logits_processor(list(row.token_ids), logits.clone())
    if row.temperature <= 0.0:
        return int(torch.argmax(logits))
    probs = torch.softmax(logits / row.temperature, dim=-1)
    u = uniform(row.seed, row.position)
    if row.top_p >= 1.0:
        return _pick(probs, None, u)
    sorted_probs, order = torch.sort(probs, descending=True, stable=True)
    before = sorted_probs.cumsum(0) - sorted_probs  # mass of the more likely tokens
    kept = sorted_probs.masked_fill(before >= row.top_p, 0.0)
    return _pick(kept, order, u)


def _logprob(logprobs: torch.Tensor, token_id: int, top: int) -> TokenLogprob:
    alternatives: list[tuple[int, float]] = []
    if top > 0:
        values, ids = torch.topk(logprobs, min(top, MAX_TOP_LOGPROBS))
        alternatives = [(int(i), float(v)) for i, v in zip(ids, values, strict=True)]
    return TokenLogprob(token_id, float(logprobs[token_id]), alternatives)


def sample(logits: torch.Tensor, rows: list[SamplingRow]) -> list[Sampled]:
    """Choose one token per row of `logits` [rows, vocab] (float32)."""
    results = []
    for row_logits, row in zip(logits, rows, strict=True):
        token_id = _choose(row_logits, row)
        logprob = None
        if row.logprobs:
            logprob = _logprob(torch.log_softmax(row_logits, dim=-1), token_id, row.top_logprobs)
        results.append(Sampled(token_id, logprob))
    return results
