"""A batch-invariant matrix product for CUDA tensors, written in Triton.

cuBLAS picks its kernel (tile shape, split-K) from the problem size, so one row of `a @ b` can round
differently when `a` has 1, 8 or 64 rows. This kernel has one fixed tiling and no split-K: every
output element is accumulated over `k` in the same order, in IEEE fp32 (no TF32), whatever the row
count, the batch size or the row's place in its tile. Imported only when a CUDA tensor needs it.
"""

# Triton reads a kernel's parameter annotations as specialisation hints, so the kernel's parameters
# stay unannotated (only the compile-time block sizes carry `tl.constexpr`).
# ruff: noqa: ANN001, ANN202

from __future__ import annotations

import torch
import triton
import triton.language as tl

BLOCK_M = 32
BLOCK_N = 64
BLOCK_K = 32


@triton.jit
def _matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    rows,
    cols,
    inner,
    a_batch,
    a_row,
    a_inner,
    b_batch,
    b_inner,
    b_col,
    c_batch,
    c_row,
    c_col,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    row_block = tl.program_id(0)
    col_block = tl.program_id(1)
    batch = tl.program_id(2).to(tl.int64)
    offs_m = row_block * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = col_block * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + batch * a_batch + offs_m[:, None] * a_row + offs_k[None, :] * a_inner
    b_ptrs = b_ptr + batch * b_batch + offs_k[:, None] * b_inner + offs_n[None, :] * b_col
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for step in range(0, tl.cdiv(inner, BLOCK_K)):
        left = inner - step * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < rows) & (offs_k[None, :] < left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < left) & (offs_n[None, :] < cols), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BLOCK_K * a_inner
        b_ptrs += BLOCK_K * b_inner
    c_ptrs = c_ptr + batch * c_batch + offs_m[:, None] * c_row + offs_n[None, :] * c_col
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < rows) & (offs_n[None, :] < cols))


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """`a @ b` for fp32 CUDA tensors `a` [..., M, K] and `b` [K, N] or [..., K, N] (one batch
    dimension at most; a 2-D operand is shared by every batch entry)."""
    if a.dim() > 3 or b.dim() > 3:
        raise ValueError("matmul takes at most one batch dimension")
    batched = a.dim() == 3 or b.dim() == 3
    a3 = a if a.dim() == 3 else a.unsqueeze(0)
    b3 = b if b.dim() == 3 else b.unsqueeze(0)
    batch = max(a3.shape[0], b3.shape[0])
    rows, inner = a3.shape[1:]
    if b3.shape[1] != inner:
        raise ValueError(f"inner sizes differ: {tuple(a.shape)} @ {tuple(b.shape)}")
    cols = b3.shape[2]
    out = torch.empty(batch, rows, cols, device=a.device, dtype=torch.float32)
    if out.numel() == 0:
        return out if batched else out[0]
    a_batch = a3.stride(0) if a3.shape[0] > 1 else 0
    b_batch = b3.stride(0) if b3.shape[0] > 1 else 0
    grid = (triton.cdiv(rows, BLOCK_M), triton.cdiv(cols, BLOCK_N), batch)
    _matmul_kernel[grid](
        a3,
        b3,
        out,
        rows,
        cols,
        inner,
        a_batch,
        a3.stride(1),
        a3.stride(2),
        b_batch,
        b3.stride(1),
        b3.stride(2),
        out.stride(0),
        out.stride(1),
        out.stride(2),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K,
    )
    return out if batched else out[0]
