"""Multi-head latent attention over the paged cache, one query token per program.

Every query token, prompt or decode, attends over exactly its own causal prefix (positions
0..its position) read through its sequence's block table. The keys are visited in blocks of
`KEYS_PER_BLOCK` positions from position 0 with an online softmax, so the reduction order depends
on the token's position alone: never on the batch, on the other tokens of the step, or on how a
prompt was split into chunks. Products run on the tensor cores (fp32 as `tf32x3`, as in
`matmul`). All heads of a token share the cached `[latent | rotary key]`, so one program computes
all of them (heads padded to 16, the smallest `dot` operand).
"""

# ruff: noqa: ANN001, ANN202
# Nor can pyright follow Triton's JIT (constexpr parameters, `static_range`, launch options).
# pyright: reportArgumentType=false, reportCallIssue=false, reportOperatorIssue=false
# pyright: reportAttributeAccessIssue=false, reportGeneralTypeIssues=false

from __future__ import annotations

import torch
import triton
import triton.language as tl

from deepseek_recipe_engine.kernels import block_size

KEYS_PER_BLOCK = 16
NUM_WARPS = 8


@triton.jit(do_not_specialize=["tokens"])
def _attention_kernel(
    q_latent_ptr,
    q_latent_token,
    q_latent_head,
    q_rope_ptr,
    q_rope_token,
    q_rope_head,
    positions_ptr,
    token_seqs_ptr,
    tables_ptr,
    tables_seq,
    tables_block,
    cos_ptr,
    sin_ptr,
    cache_ptr,
    out_ptr,
    out_token,
    out_head,
    tokens,
    heads,
    rank,
    half,
    page,
    scale,
    BLOCK_HEADS: tl.constexpr,
    BLOCK_RANK: tl.constexpr,
    BLOCK_HALF: tl.constexpr,
    BLOCK_KEYS: tl.constexpr,
):
    token = tl.program_id(0).to(tl.int64)
    position = tl.load(positions_ptr + token).to(tl.int64)
    seq = tl.load(token_seqs_ptr + token).to(tl.int64)
    h = tl.arange(0, BLOCK_HEADS)
    r = tl.arange(0, BLOCK_RANK)
    p = tl.arange(0, BLOCK_HALF)
    h_ok = h < heads
    r_ok = r < rank
    p_ok = p < half
    dtype = cache_ptr.dtype.element_ty

    # Queries: the absorbed latent part, and the rotary part rotated to this position here.
    q_lat = tl.load(
        q_latent_ptr + token * q_latent_token + h[:, None] * q_latent_head + r[None, :],
        mask=h_ok[:, None] & r_ok[None, :],
        other=0.0,
    ).to(tl.float32)
    q_rope = q_rope_ptr + token * q_rope_token + h[:, None] * q_rope_head
    x0 = tl.load(q_rope + 2 * p[None, :], mask=h_ok[:, None] & p_ok[None, :], other=0.0)
    x1 = tl.load(q_rope + 2 * p[None, :] + 1, mask=h_ok[:, None] & p_ok[None, :], other=0.0)
    cos = tl.load(cos_ptr + position * half + p, mask=p_ok, other=0.0).to(tl.float32)[None, :]
    sin = tl.load(sin_ptr + position * half + p, mask=p_ok, other=0.0).to(tl.float32)[None, :]
    x0 = x0.to(tl.float32)
    x1 = x1.to(tl.float32)
    q_first = ((x0 * cos - x1 * sin).to(dtype).to(tl.float32) * scale).to(dtype)
    q_second = ((x1 * cos + x0 * sin).to(dtype).to(tl.float32) * scale).to(dtype)
    q_lat = (q_lat * scale).to(dtype)

    entry = rank + 2 * half
    table = tables_ptr + seq * tables_seq
    best = tl.full((BLOCK_HEADS,), float("-inf"), dtype=tl.float32)
    total = tl.zeros((BLOCK_HEADS,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_HEADS, BLOCK_RANK), dtype=tl.float32)
    keys = tl.arange(0, BLOCK_KEYS)
    for start in range(0, position + 1, BLOCK_KEYS):
        key_pos = start + keys
        visible = key_pos <= position
        block = tl.load(table + (key_pos // page) * tables_block, mask=visible, other=0)
        slots = block.to(tl.int64) * page + key_pos % page
        rows = cache_ptr + slots[:, None] * entry
        latent = tl.load(rows + r[None, :], mask=visible[:, None] & r_ok[None, :], other=0.0)
        k_first = tl.load(
            rows + rank + p[None, :], mask=visible[:, None] & p_ok[None, :], other=0.0
        )
        k_second = tl.load(
            rows + rank + half + p[None, :], mask=visible[:, None] & p_ok[None, :], other=0.0
        )
        scores = tl.dot(q_lat, tl.trans(latent), input_precision="tf32x3")
        scores = tl.dot(q_first, tl.trans(k_first), scores, input_precision="tf32x3")
        scores = tl.dot(q_second, tl.trans(k_second), scores, input_precision="tf32x3")
        scores = tl.where(visible[None, :], scores, float("-inf"))
        new_best = tl.maximum(best, tl.max(scores, axis=1))
        rescale = tl.exp(best - new_best)
        weights = tl.exp(scores - new_best[:, None])
        total = total * rescale + tl.sum(weights, axis=1)
        acc = acc * rescale[:, None]
        acc = tl.dot(weights.to(dtype), latent, acc, input_precision="tf32x3")
        best = new_best
    out = acc / total[:, None]
    tl.store(
        out_ptr + token * out_token + h[:, None] * out_head + r[None, :],
        out.to(out_ptr.dtype.element_ty),
        mask=h_ok[:, None] & r_ok[None, :],
    )


def paged_attention(
    q_latent: torch.Tensor,
    q_rope: torch.Tensor,
    positions: torch.Tensor,
    token_seqs: torch.Tensor,
    block_tables: torch.Tensor,
    page: int,
    cos: torch.Tensor,
    sin: torch.Tensor,
    cache: torch.Tensor,
    scale: float,
    out: torch.Tensor,
) -> torch.Tensor:
    """Attention of each query token over its causal prefix in the paged latent cache.

    `q_latent` [tokens, heads, rank] (queries mapped through the key half of `kv_b_proj`),
    `q_rope` [tokens, heads, rope] (not yet rotated; both may be strided but for the last
    dimension), `positions` and `token_seqs` (the row of `block_tables` of each token) [tokens],
    `block_tables` [sequences, blocks] (any strides) of `page` positions each, `cos`/`sin`
    [positions, rope / 2], `cache` [slots, rank + rope]; scores are scaled by `scale`. Writes the
    attention-weighted latents into `out` [tokens, heads, rank] and returns it.
    """
    tokens, heads, rank = q_latent.shape
    half = cos.shape[1]
    if tokens:
        _attention_kernel[(tokens,)](
            q_latent,
            q_latent.stride(0),
            q_latent.stride(1),
            q_rope,
            q_rope.stride(0),
            q_rope.stride(1),
            positions,
            token_seqs,
            block_tables,
            block_tables.stride(0),
            block_tables.stride(1),
            cos,
            sin,
            cache,
            out,
            out.stride(0),
            out.stride(1),
            tokens,
            heads,
            rank,
            half,
            page,
            scale,
            BLOCK_HEADS=block_size(heads),
            BLOCK_RANK=block_size(rank),
            BLOCK_HALF=block_size(half),
            BLOCK_KEYS=KEYS_PER_BLOCK,
            num_warps=NUM_WARPS,
        )
    return out
