"""Next-token choice on the GPU, one program per row of logits.

Each row is read in blocks of `VOCAB_BLOCK` ids from id 0, so every sum (the log-normaliser of the
raw logprobs, the tempered total, the nucleus mass, the inverse-CDF scan) has one order for a
given vocabulary: a row's token and logprob depend on that row alone. A row may carry a token
bitmask (bit `i % 32` of word `i // 32` allows token `i`), applied while reading.
"""

# ruff: noqa: ANN001, ANN202
# Nor can pyright follow Triton's JIT (constexpr parameters, `static_range`, launch options).
# pyright: reportArgumentType=false, reportCallIssue=false, reportOperatorIssue=false
# pyright: reportAttributeAccessIssue=false, reportGeneralTypeIssues=false

from __future__ import annotations

import torch
import triton
import triton.language as tl

VOCAB_BLOCK = 4096


@triton.jit
def _choice_block(
    choice_row, mask_row, masked_ids, start, vocab, BLOCK: tl.constexpr, HAS_MASK: tl.constexpr
):
    """(ids, logits to choose from with disallowed ids at -inf) of the block at `start`; the mask
    applies to ids below `masked_ids` (0 for a row without one)."""
    ids = start + tl.arange(0, BLOCK)
    logits = tl.load(choice_row + ids, mask=ids < vocab, other=float("-inf")).to(tl.float32)
    if HAS_MASK:
        words = tl.load(mask_row + ids // 32, mask=ids < masked_ids, other=-1)
        logits = tl.where(((words >> (ids % 32)) & 1) != 0, logits, float("-inf"))
    return ids, logits


@triton.jit(do_not_specialize=["rows"])
def _sample_kernel(
    raw_ptr,
    raw_row,
    choice_ptr,
    choice_row,
    order_ptr,
    order_row,
    mask_ptr,
    mask_row,
    mask_index_ptr,
    temperature_ptr,
    top_p_ptr,
    uniform_ptr,
    token_ptr,
    logprob_ptr,
    lse_ptr,
    rows,
    vocab,
    HAS_ORDER: tl.constexpr,
    HAS_MASK: tl.constexpr,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    raw = raw_ptr + row * raw_row
    choice = choice_ptr + row * choice_row
    mask_index = tl.load(mask_index_ptr + row).to(tl.int64)
    masked_ids = tl.where(mask_index >= 0, vocab, 0)
    words = mask_ptr + tl.maximum(mask_index, 0) * mask_row

    # Log-normaliser of the raw distribution (online max and sum), and the best allowed choice.
    top = float("-inf")
    total_raw = 0.0
    best = float("-inf")
    best_id = 0
    for start in range(0, vocab, BLOCK):
        ids = start + tl.arange(0, BLOCK)
        logits = tl.load(raw + ids, mask=ids < vocab, other=float("-inf")).to(tl.float32)
        new_top = tl.maximum(top, tl.max(logits, axis=0))
        total_raw = total_raw * tl.exp(top - new_top) + tl.sum(tl.exp(logits - new_top), axis=0)
        top = new_top
        ids, logits = _choice_block(choice, words, masked_ids, start, vocab, BLOCK, HAS_MASK)
        block_best = tl.max(logits, axis=0)
        block_id = start + tl.argmax(logits, axis=0, tie_break_left=True)
        best_id = tl.where(block_best > best, block_id, best_id)
        best = tl.maximum(best, block_best)
    lse = top + tl.log(total_raw)

    token = best_id
    temperature = tl.load(temperature_ptr + row)
    if temperature > 0:
        # Tempered probabilities (unnormalised), the nucleus of mass top_p (a token stays while
        # the mass before it is below top_p; the first always does), one inverse-CDF draw.
        total = 0.0
        for start in range(0, vocab, BLOCK):
            ids, logits = _choice_block(choice, words, masked_ids, start, vocab, BLOCK, HAS_MASK)
            total += tl.sum(tl.exp((logits - best) / temperature), axis=0)
        limit = tl.load(top_p_ptr + row) * total
        kept_total = 0.0
        before = 0.0
        last = 0
        for start in range(0, vocab, BLOCK):
            ids, logits = _choice_block(choice, words, masked_ids, start, vocab, BLOCK, HAS_MASK)
            probs = tl.exp((logits - best) / temperature)
            kept = tl.where(before + tl.cumsum(probs, axis=0) - probs < limit, probs, 0.0)
            kept_total += tl.sum(kept, axis=0)
            last = tl.maximum(last, tl.max(tl.where(kept > 0, ids, 0), axis=0))
            before += tl.sum(probs, axis=0)
        target = tl.load(uniform_ptr + row) * kept_total
        below = 0.0
        kept_below = 0.0
        found = vocab
        for start in range(0, vocab, BLOCK):
            ids, logits = _choice_block(choice, words, masked_ids, start, vocab, BLOCK, HAS_MASK)
            probs = tl.exp((logits - best) / temperature)
            kept = tl.where(below + tl.cumsum(probs, axis=0) - probs < limit, probs, 0.0)
            through = kept_below + tl.cumsum(kept, axis=0)
            found = tl.minimum(found, tl.min(tl.where(through > target, ids, vocab), axis=0))
            below += tl.sum(probs, axis=0)
            kept_below += tl.sum(kept, axis=0)
        token = tl.minimum(found, last)
    if HAS_ORDER:
        token = tl.load(order_ptr + row * order_row + token)
    chosen = tl.load(raw + token).to(tl.float32)
    tl.store(token_ptr + row, token.to(tl.int64))
    tl.store(logprob_ptr + row, chosen - lse)
    tl.store(lse_ptr + row, lse)


def sample_rows(
    raw: torch.Tensor,
    temperature: torch.Tensor,
    top_p: torch.Tensor,
    uniform: torch.Tensor,
    *,
    choice: torch.Tensor | None = None,
    order: torch.Tensor | None = None,
    masks: torch.Tensor | None = None,
    mask_index: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One token per row of `raw` logits [rows, vocab] (fp32, rows may be strided).

    Temperature 0 takes the best allowed id (lowest on ties); otherwise the tempered softmax,
    restricted to the nucleus of mass `top_p`, and one draw with the row's `uniform` number. The
    nucleus is taken in `choice` order: rows with `top_p < 1` need `choice` [rows, vocab], their
    logits sorted descending with any mask applied, and `order`, the ids in that order. `masks`
    [masked rows, words] (int32) with `mask_index` [rows] (-1: no mask) restrict unsorted rows.
    Returns (token ids int64, their raw logprobs, each row's raw log-normaliser), all [rows].
    """
    rows, vocab = raw.shape
    device = raw.device
    tokens = torch.empty(rows, device=device, dtype=torch.int64)
    logprobs = torch.empty(rows, device=device, dtype=torch.float32)
    lse = torch.empty(rows, device=device, dtype=torch.float32)
    if not rows:
        return tokens, logprobs, lse
    if mask_index is None:
        mask_index = torch.full((rows,), -1, device=device, dtype=torch.int32)
    choice = raw if choice is None else choice
    _sample_kernel[(rows,)](
        raw,
        raw.stride(0),
        choice,
        choice.stride(0),
        raw if order is None else order,
        0 if order is None else order.stride(0),
        mask_index if masks is None else masks,
        0 if masks is None else masks.stride(0),
        mask_index,
        temperature,
        top_p,
        uniform,
        tokens,
        logprobs,
        lse,
        rows,
        vocab,
        HAS_ORDER=order is not None,
        HAS_MASK=masks is not None,
        BLOCK=VOCAB_BLOCK,
    )
    return tokens, logprobs, lse


def apply_bitmask(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """`logits` [rows, vocab] with every id whose bit is clear in `masks` [rows, words] (int32)
    set to -inf (elementwise, so each row's result is its own)."""
    shifts = torch.arange(32, device=masks.device, dtype=torch.int32)
    bits = ((masks.unsqueeze(-1) >> shifts) & 1).flatten(1)[:, : logits.shape[1]]
    return logits.masked_fill(bits == 0, float("-inf"))
