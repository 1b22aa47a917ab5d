"""Fused per-row kernels: RMSNorm (optionally after a residual add), and the step's new latents
normalised, rotated and written into the paged cache.

One program per row; a row's sum of squares is one `tl.sum` over a fixed power-of-two block, so
its order depends on the row width only, never on how many rows there are. Arithmetic is fp32;
results are rounded to the activation dtype where transformers rounds them (the normalised row
before the scale, the residual sum), so bf16 follows the same steps.
"""

# ruff: noqa: ANN001, ANN202
# Nor can pyright follow Triton's JIT (constexpr parameters, `static_range`, launch options).
# pyright: reportArgumentType=false, reportCallIssue=false, reportOperatorIssue=false
# pyright: reportAttributeAccessIssue=false, reportGeneralTypeIssues=false

from __future__ import annotations

import torch
import triton
import triton.language as tl

from deepseek_recipe_engine.kernels import next_power_of_2


@triton.jit
def _normalise(x, weight, width, eps, out_dtype: tl.constexpr):
    """RMSNorm of one fp32 row `x` (zeros beyond `width`) scaled by `weight` (fp32)."""
    variance = tl.sum(x * x, axis=0) / width
    normed = (x * tl.rsqrt(variance + eps)).to(out_dtype).to(tl.float32)
    return (normed * weight).to(out_dtype)


@triton.jit(do_not_specialize=["rows"])
def _rmsnorm_kernel(
    x_ptr,
    x_row,
    delta_ptr,
    delta_row,
    sum_ptr,
    sum_row,
    weight_ptr,
    out_ptr,
    out_row,
    rows,
    width,
    eps,
    HAS_DELTA: tl.constexpr,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    valid = offs < width
    x = tl.load(x_ptr + row * x_row + offs, mask=valid, other=0.0)
    if HAS_DELTA:
        delta = tl.load(delta_ptr + row * delta_row + offs, mask=valid, other=0.0)
        x = (x.to(tl.float32) + delta.to(tl.float32)).to(x_ptr.dtype.element_ty)
        tl.store(sum_ptr + row * sum_row + offs, x, mask=valid)
    weight = tl.load(weight_ptr + offs, mask=valid, other=0.0).to(tl.float32)
    normed = _normalise(x.to(tl.float32), weight, width, eps, out_ptr.dtype.element_ty)
    tl.store(out_ptr + row * out_row + offs, normed, mask=valid)


def rmsnorm(
    x: torch.Tensor, weight: torch.Tensor, eps: float, delta: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """RMSNorm of the rows of `x` [rows, width] (rows may be strided) with scale `weight`; with
    `delta`, of the residual sum `x + delta` instead. Returns (normalised rows, the rows normalised:
    `x` itself, or the new residual sum)."""
    rows, width = x.shape
    out = torch.empty(rows, width, device=x.device, dtype=x.dtype)
    summed = x if delta is None else torch.empty_like(out)
    if rows:
        other = x if delta is None else delta
        _rmsnorm_kernel[(rows,)](
            x,
            x.stride(0),
            other,
            other.stride(0),
            summed,
            summed.stride(0),
            weight,
            out,
            out.stride(0),
            rows,
            width,
            eps,
            HAS_DELTA=delta is not None,
            BLOCK=next_power_of_2(width),
        )
    return out, summed


@triton.jit(do_not_specialize=["tokens"])
def _latent_to_cache_kernel(
    kv_ptr,
    kv_row,
    weight_ptr,
    positions_ptr,
    slots_ptr,
    cos_ptr,
    sin_ptr,
    cache_ptr,
    tokens,
    rank,
    half,
    eps,
    BLOCK_RANK: tl.constexpr,
    BLOCK_HALF: tl.constexpr,
):
    token = tl.program_id(0).to(tl.int64)
    row = kv_ptr + token * kv_row
    slot = tl.load(slots_ptr + token).to(tl.int64)
    cache_row = cache_ptr + slot * (rank + 2 * half)
    offs = tl.arange(0, BLOCK_RANK)
    valid = offs < rank
    latent = tl.load(row + offs, mask=valid, other=0.0).to(tl.float32)
    weight = tl.load(weight_ptr + offs, mask=valid, other=0.0).to(tl.float32)
    normed = _normalise(latent, weight, rank, eps, cache_ptr.dtype.element_ty)
    tl.store(cache_row + offs, normed, mask=valid)
    # The rotary key: interleaved pairs (x0, x1) rotated, stored as all first members then all
    # second members (the layout of `RotaryEmbedding`).
    pairs = tl.arange(0, BLOCK_HALF)
    in_half = pairs < half
    position = tl.load(positions_ptr + token).to(tl.int64)
    cos = tl.load(cos_ptr + position * half + pairs, mask=in_half, other=0.0).to(tl.float32)
    sin = tl.load(sin_ptr + position * half + pairs, mask=in_half, other=0.0).to(tl.float32)
    x0 = tl.load(row + rank + 2 * pairs, mask=in_half, other=0.0).to(tl.float32)
    x1 = tl.load(row + rank + 2 * pairs + 1, mask=in_half, other=0.0).to(tl.float32)
    out_dtype = cache_ptr.dtype.element_ty
    tl.store(cache_row + rank + pairs, (x0 * cos - x1 * sin).to(out_dtype), mask=in_half)
    tl.store(cache_row + rank + half + pairs, (x1 * cos + x0 * sin).to(out_dtype), mask=in_half)


def latent_to_cache(
    kv: torch.Tensor,
    weight: torch.Tensor,
    eps: float,
    positions: torch.Tensor,
    slots: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
    cache: torch.Tensor,
) -> None:
    """Write each token's cache entry: its latent `kv[:, :rank]` RMS-normalised with `weight`, then
    its rotary key `kv[:, rank:]` rotated to its position, into `cache[slot]`.

    `kv` [tokens, rank + rope] (rows may be strided), `positions` and `slots` [tokens], `cos` and
    `sin` [positions, rope / 2] (contiguous), `cache` [slots, rank + rope] (contiguous).
    """
    tokens = kv.shape[0]
    half = cos.shape[1]
    rank = kv.shape[1] - 2 * half
    if tokens:
        _latent_to_cache_kernel[(tokens,)](
            kv,
            kv.stride(0),
            weight,
            positions,
            slots,
            cos,
            sin,
            cache,
            tokens,
            rank,
            half,
            eps,
            BLOCK_RANK=next_power_of_2(rank),
            BLOCK_HALF=next_power_of_2(half),
        )
