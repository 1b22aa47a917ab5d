"""Mixture-of-experts kernels with static shapes (so a step can be captured in a CUDA graph):
routing, grouping the chosen (token, expert) pairs by expert, the experts' SwiGLU products over
those groups, and the weighted sum of each token's experts.

A token's result never depends on the batch: its pairs' products are rows of fixed-tiling
products (`dot_tile`), whatever other rows share their tile, and its experts are added in
ascending expert order. The grid is sized for the worst case of the pair count; tiles that hold
no pair exit before reading any weight, so a step reads only the experts it uses.
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
from deepseek_recipe_engine.kernels.matmul import BLOCK_K, BLOCK_M, NUM_STAGES, NUM_WARPS, dot_tile

# Expert products have few output columns per expert: narrower tiles give more programs.
BLOCK_N = 32


@triton.jit
def _take_largest(values, PAD: tl.constexpr):
    """(index of the largest of `values`, lowest index on ties; `values` with it knocked out)."""
    index = tl.argmax(values, axis=0, tie_break_left=True)
    return index, tl.where(tl.arange(0, PAD) == index, float("-inf"), values)


@triton.jit(do_not_specialize=["tokens"])
def _route_kernel(
    logits_ptr,
    bias_ptr,
    indices_ptr,
    weights_ptr,
    tokens,
    experts,
    scaling,
    GROUPS: tl.constexpr,
    PER_GROUP: tl.constexpr,
    TOPK_GROUP: tl.constexpr,
    TOP_K: tl.constexpr,
    NORMALISE: tl.constexpr,
    BLOCK_E: tl.constexpr,
    BLOCK_G: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    token = tl.program_id(0).to(tl.int64)
    e = tl.arange(0, BLOCK_E)
    valid = e < experts
    logits = tl.load(logits_ptr + token * experts + e, mask=valid, other=0.0).to(tl.float32)
    scores = tl.sigmoid(logits)
    bias = tl.load(bias_ptr + e, mask=valid, other=0.0).to(tl.float32)
    choice = tl.where(valid, scores + bias, float("-inf"))
    # Group-limited routing: a group's score is the sum of its best two choices (its best alone
    # when it has one expert); only the TOPK_GROUP best groups stay eligible.
    g = tl.arange(0, BLOCK_G)
    group_of = e // PER_GROUP
    group_scores = tl.full((BLOCK_G,), float("-inf"), dtype=tl.float32)
    for group in tl.static_range(GROUPS):
        members = tl.where(group_of == group, choice, float("-inf"))
        _, rest = _take_largest(members, BLOCK_E)
        best = tl.max(members, axis=0)
        if PER_GROUP > 1:
            best = best + tl.max(rest, axis=0)
        group_scores = tl.where(g == group, best, group_scores)
    eligible = tl.zeros((BLOCK_E,), dtype=tl.int1)
    for _ in tl.static_range(TOPK_GROUP):
        group, group_scores = _take_largest(group_scores, BLOCK_G)
        eligible = eligible | (group_of == group)
    choice = tl.where(eligible & valid, choice, float("-inf"))
    chosen = tl.zeros((BLOCK_E,), dtype=tl.int1)
    for _ in tl.static_range(TOP_K):
        expert, choice = _take_largest(choice, BLOCK_E)
        chosen = chosen | (e == expert)
    # The chosen experts in ascending order, so that the sum over a token's experts has one order.
    k = tl.arange(0, BLOCK_K)
    ranks = tl.cumsum(chosen.to(tl.int32), axis=0) - 1
    slot_of = tl.where(chosen, ranks, BLOCK_K)
    indices = tl.zeros((BLOCK_K,), dtype=tl.int32)
    weights = tl.zeros((BLOCK_K,), dtype=tl.float32)
    total = 0.0
    for slot in tl.static_range(TOP_K):
        here = slot_of == slot
        indices = tl.where(k == slot, tl.sum(tl.where(here, e, 0), axis=0), indices)
        weight = tl.sum(tl.where(here, scores, 0.0), axis=0)
        weights = tl.where(k == slot, weight, weights)
        total = total + weight
    if NORMALISE:
        weights = weights / (total + 1e-20)
    in_k = k < TOP_K
    tl.store(indices_ptr + token * TOP_K + k, indices, mask=in_k)
    tl.store(weights_ptr + token * TOP_K + k, weights * scaling, mask=in_k)


def route(
    logits: torch.Tensor,
    bias: torch.Tensor,
    *,
    groups: int,
    topk_group: int,
    top_k: int,
    normalise: bool,
    scaling: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """DeepSeek-V3 routing of router logits [tokens, experts] (fp32): sigmoid scores, the
    score-correction `bias` for the choice, group-limited top-k. Returns (expert indices
    [tokens, top_k] int32 in ascending order, their weights [tokens, top_k] fp32: scores,
    normalised to sum 1 when `normalise`, times `scaling`)."""
    tokens, experts = logits.shape
    indices = torch.empty(tokens, top_k, device=logits.device, dtype=torch.int32)
    weights = torch.empty(tokens, top_k, device=logits.device, dtype=torch.float32)
    if tokens:
        _route_kernel[(tokens,)](
            logits,
            bias,
            indices,
            weights,
            tokens,
            experts,
            scaling,
            GROUPS=groups,
            PER_GROUP=experts // groups,
            TOPK_GROUP=topk_group,
            TOP_K=top_k,
            NORMALISE=normalise,
            BLOCK_E=next_power_of_2(experts),
            BLOCK_G=next_power_of_2(groups),
            BLOCK_K=next_power_of_2(top_k),
        )
    return indices, weights


@triton.jit(do_not_specialize=["pairs"])
def _group_kernel(
    indices_ptr,
    pairs,
    experts,
    row_pairs_ptr,
    tile_experts_ptr,
    BLOCK_M: tl.constexpr,
    CHUNK: tl.constexpr,
    BLOCK_TILES: tl.constexpr,
):
    offs = tl.arange(0, CHUNK)
    tiles = tl.arange(0, BLOCK_TILES)
    tile_experts = tl.full((BLOCK_TILES,), -1, dtype=tl.int32)
    first_tile = 0
    for expert in range(0, experts):
        rank = 0
        for start in range(0, pairs, CHUNK):
            pair = start + offs
            mine = (tl.load(indices_ptr + pair, mask=pair < pairs, other=-1) == expert).to(tl.int32)
            row = first_tile * BLOCK_M + rank + tl.cumsum(mine, axis=0) - 1
            tl.store(row_pairs_ptr + row, pair, mask=mine != 0)
            rank += tl.sum(mine, axis=0)
        used = tl.cdiv(rank, BLOCK_M)
        tile_experts = tl.where(
            (tiles >= first_tile) & (tiles < first_tile + used), expert, tile_experts
        )
        first_tile += used
    tl.store(tile_experts_ptr + tiles, tile_experts)


def group_by_expert(indices: torch.Tensor, experts: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Lay the (token, choice) pairs of `indices` [tokens, top_k] out by expert in tiles of
    BLOCK_M rows: returns (row_pairs: the pair `token * top_k + choice` in each row, -1 for
    padding; tile_experts: the expert of each tile, -1 for unused tiles). Pairs keep their order
    within an expert. Shapes depend only on the pair count (at most `pairs` tiles, and at most one
    partly filled tile per expert)."""
    pairs = indices.numel()
    tiles = min(pairs, triton.cdiv(pairs, BLOCK_M) + experts)
    block_tiles = next_power_of_2(max(tiles, 1))
    row_pairs = torch.full((block_tiles * BLOCK_M,), -1, device=indices.device, dtype=torch.int32)
    tile_experts = torch.empty(block_tiles, device=indices.device, dtype=torch.int32)
    if pairs:
        _group_kernel[(1,)](
            indices,
            pairs,
            experts,
            row_pairs,
            tile_experts,
            BLOCK_M=BLOCK_M,
            CHUNK=min(1024, next_power_of_2(pairs)),
            BLOCK_TILES=block_tiles,
        )
    return row_pairs[: tiles * BLOCK_M], tile_experts[:tiles]


@triton.jit
def _silu(x):
    return x / (1.0 + tl.exp(-x))


@triton.jit(do_not_specialize=["rows"])
def _expert_matmul_kernel(
    a_ptr,
    a_row,
    gate_ptr,
    up_ptr,
    w_expert,
    w_col,
    row_pairs_ptr,
    tile_experts_ptr,
    pair_weights_ptr,
    out_ptr,
    out_row,
    rows,
    cols,
    inner,
    a_rows_per_pair,
    GATED: tl.constexpr,
    ROUTED: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    tile = tl.program_id(0)
    col_block = tl.program_id(1)
    offs_m = tile * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = col_block * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    if ROUTED:
        expert = tl.load(tile_experts_ptr + tile).to(tl.int64)
        out_rows = tl.load(row_pairs_ptr + offs_m)
        valid = out_rows >= 0
        out_rows = tl.where(valid, out_rows, 0).to(tl.int64)
        a_rows = out_rows // a_rows_per_pair
    else:
        expert = tl.program_id(2).to(tl.int64)
        valid = offs_m < rows
        out_rows = offs_m.to(tl.int64)
        a_rows = out_rows
    if expert >= 0:
        cols_valid = offs_n < cols
        a_ptrs = a_ptr + a_rows[:, None] * a_row + offs_k[None, :]
        w_ptrs = expert * w_expert + offs_n[None, :] * w_col + offs_k[:, None]
        acc = dot_tile(
            a_ptrs, valid, 1, gate_ptr + w_ptrs, cols_valid, 1, inner, BLOCK_M, BLOCK_N, BLOCK_K
        )
        if GATED:
            up = dot_tile(
                a_ptrs, valid, 1, up_ptr + w_ptrs, cols_valid, 1, inner, BLOCK_M, BLOCK_N, BLOCK_K
            )
            dtype = out_ptr.dtype.element_ty
            acc = _silu(acc.to(dtype).to(tl.float32)).to(dtype).to(tl.float32) * up.to(dtype).to(
                tl.float32
            )
        if ROUTED and not GATED:
            pair_weight = tl.load(pair_weights_ptr + out_rows, mask=valid, other=0.0)
            acc = acc.to(out_ptr.dtype.element_ty).to(tl.float32) * pair_weight[:, None]
        tl.store(
            out_ptr + out_rows[:, None] * out_row + offs_n[None, :],
            acc.to(out_ptr.dtype.element_ty),
            mask=valid[:, None] & cols_valid[None, :],
        )


def _launch(
    a: torch.Tensor,
    gate: torch.Tensor,
    up: torch.Tensor | None,
    out: torch.Tensor,
    grouping: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None,
    a_rows_per_pair: int,
) -> torch.Tensor:
    rows, inner = a.shape[0], gate.shape[-1]
    cols = gate.shape[-2]
    if grouping is None:
        tiles, experts = triton.cdiv(rows, BLOCK_M), 1
        row_pairs = tile_experts = pair_weights = out  # unused
    else:
        row_pairs, tile_experts, pair_weights = grouping
        tiles, experts = tile_experts.shape[0], 1
    if tiles == 0:
        return out
    _expert_matmul_kernel[(tiles, triton.cdiv(cols, BLOCK_N), experts)](
        a,
        a.stride(0),
        gate,
        gate if up is None else up,
        gate.stride(0) if gate.dim() == 3 else 0,
        gate.stride(-2),
        row_pairs,
        tile_experts,
        pair_weights,
        out,
        out.stride(0),
        rows,
        cols,
        inner,
        a_rows_per_pair,
        GATED=up is not None,
        ROUTED=grouping is not None,
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K,
        num_warps=NUM_WARPS,
        num_stages=NUM_STAGES,
    )
    return out


def swiglu(x: torch.Tensor, gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    """`silu(x @ gate.T) * (x @ up.T)` in one pass, for `x` [rows, hidden] (rows may be strided)
    and `gate`, `up` [intermediate, hidden] (rows contiguous in `hidden`)."""
    out = torch.empty(x.shape[0], gate.shape[0], device=x.device, dtype=x.dtype)
    return _launch(x, gate, up, out, None, 1)


def routed_experts(
    x: torch.Tensor,
    indices: torch.Tensor,
    weights: torch.Tensor,
    gate_up: torch.Tensor,
    down: torch.Tensor,
    shared: torch.Tensor,
) -> torch.Tensor:
    """The weighted sum of each token's routed SwiGLU experts, in ascending expert order, plus
    `shared` [tokens, hidden] (the shared experts' output).

    `x` [tokens, hidden]; `indices`/`weights` [tokens, top_k] from `route` (ascending experts);
    `gate_up` [experts, 2 * intermediate, hidden] (gate rows, then up rows) and `down`
    [experts, hidden, intermediate], transformers' stacked layout.
    """
    tokens, top_k = indices.shape
    experts, double, hidden = gate_up.shape
    intermediate = double // 2
    row_pairs, tile_experts = group_by_expert(indices, experts)
    grouping = (row_pairs, tile_experts, weights)
    activated = torch.empty(tokens * top_k, intermediate, device=x.device, dtype=x.dtype)
    _launch(x, gate_up[:, :intermediate], gate_up[:, intermediate:], activated, grouping, top_k)
    weighted = torch.empty(tokens * top_k, hidden, device=x.device, dtype=x.dtype)
    _launch(activated, down, None, weighted, grouping, 1)
    return _sum_choices(weighted.view(tokens, top_k, hidden), shared)


@triton.jit(do_not_specialize=["tokens"])
def _sum_choices_kernel(parts_ptr, shared_ptr, out_ptr, tokens, top_k, width, BLOCK: tl.constexpr):
    token = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    valid = offs < width
    dtype = out_ptr.dtype.element_ty
    base = parts_ptr + token * top_k * width + offs
    total = tl.load(base, mask=valid, other=0.0).to(tl.float32)
    for choice in range(1, top_k):
        part = tl.load(base + choice * width, mask=valid, other=0.0).to(tl.float32)
        total = (total + part).to(dtype).to(tl.float32)
    shared = tl.load(shared_ptr + token * width + offs, mask=valid, other=0.0).to(tl.float32)
    tl.store(out_ptr + token * width + offs, (total + shared).to(dtype), mask=valid)


def _sum_choices(parts: torch.Tensor, shared: torch.Tensor) -> torch.Tensor:
    """Sum [tokens, top_k, width] over the choices left to right, then add `shared`
    [tokens, width] (contiguous)."""
    tokens, top_k, width = parts.shape
    out = torch.empty(tokens, width, device=parts.device, dtype=parts.dtype)
    block = min(1024, next_power_of_2(width))
    if tokens:
        _sum_choices_kernel[(tokens, triton.cdiv(width, block))](
            parts, shared, out, tokens, top_k, width, BLOCK=block
        )
    return out
