"""A batch-invariant matrix product, written in Triton.

cuBLAS picks its kernel (tile shape, split-K) from the problem size, so one row of `a @ b` can round
differently when `a` has 1, 8 or 64 rows. This kernel has one fixed tiling: every output element is
accumulated over `k` in the same order whatever the row count, the batch size or the row's place
in its tile. Products run on the tensor cores with fp32 accumulation: bf16 operands directly, fp32
operands as three TF32 products (`tf32x3`, which keeps fp32's accuracy). Skinny products (few
output columns, long sums) are split along `k` into a number of slices fixed by the weight's shape
alone, never by the row count, and the slices are added in order; so the order still depends only
on the weights. The row count is never a specialisation key: one compiled kernel serves every
batch.
"""

# Triton reads a kernel's parameter annotations as specialisation hints, so the kernels' parameters
# stay unannotated (only the compile-time constants carry `tl.constexpr`).
# ruff: noqa: ANN001, ANN201, ANN202
# Nor can pyright follow Triton's JIT (constexpr parameters, `static_range`, launch options).
# pyright: reportArgumentType=false, reportCallIssue=false, reportOperatorIssue=false
# pyright: reportAttributeAccessIssue=false, reportGeneralTypeIssues=false

from __future__ import annotations

import torch
import triton
import triton.language as tl

BLOCK_M = 16
BLOCK_N = 64
BLOCK_K = 32
NUM_WARPS = 4
NUM_STAGES = 4
# A product is split along `k` until it has about this many programs per row block (about one per
# multiprocessor), each slice at least MIN_SLICE long.
TARGET_PROGRAMS = 128
MIN_SLICE = 512


@triton.jit
def dot_tile(
    a_ptrs,
    a_rows_valid,
    a_inner,
    b_ptrs,
    b_cols_valid,
    b_inner,
    inner,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    """The [BLOCK_M, BLOCK_N] fp32 product of the row tile at `a_ptrs` ([BLOCK_M, BLOCK_K]
    pointers) and the column tile at `b_ptrs` ([BLOCK_K, BLOCK_N]), summed over `inner` in steps
    of BLOCK_K: the one reduction order every product of the GPU path uses."""
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for step in range(0, tl.cdiv(inner, BLOCK_K)):
        left = inner - step * BLOCK_K
        a = tl.load(a_ptrs, mask=a_rows_valid[:, None] & (offs_k[None, :] < left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < left) & b_cols_valid[None, :], other=0.0)
        acc = tl.dot(a, b, acc, input_precision="tf32x3")
        a_ptrs += BLOCK_K * a_inner
        b_ptrs += BLOCK_K * b_inner
    return acc


def k_slices(cols: int, inner: int, batch: int = 1) -> int:
    """In how many slices a product with `cols` output columns (per batch entry) sums its
    `inner` dimension: enough for about TARGET_PROGRAMS programs, each slice at least MIN_SLICE
    long. A function of the weights' shape alone."""
    programs = triton.cdiv(cols, BLOCK_N) * batch
    return max(1, min(inner // MIN_SLICE, triton.cdiv(TARGET_PROGRAMS, programs)))


def slice_length(inner: int, slices: int) -> int:
    """The `k` length of each slice (a multiple of BLOCK_K; the last slice may be shorter)."""
    return triton.cdiv(triton.cdiv(inner, slices), BLOCK_K) * BLOCK_K


@triton.jit(do_not_specialize=["rows"])
def _matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    rows,
    cols,
    inner,
    slices,
    slice_len,
    a_batch,
    a_row,
    a_inner,
    b_batch,
    b_inner,
    b_col,
    c_slice,
    c_batch,
    c_row,
    c_col,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    row_block = tl.program_id(0)
    col_block = tl.program_id(1)
    batch = (tl.program_id(2) // slices).to(tl.int64)
    part = (tl.program_id(2) % slices).to(tl.int64)
    start = part * slice_len
    offs_m = row_block * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = col_block * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + batch * a_batch + offs_m[:, None] * a_row + (start + offs_k[None, :]) * a_inner
    b_ptrs = b_ptr + batch * b_batch + (start + offs_k[:, None]) * b_inner + offs_n[None, :] * b_col
    length = tl.minimum(slice_len, inner - start)
    acc = dot_tile(
        a_ptrs, offs_m < rows, a_inner, b_ptrs, offs_n < cols, b_inner, length,
        BLOCK_M, BLOCK_N, BLOCK_K,
    )  # fmt: skip
    c_ptrs = (
        c_ptr + part * c_slice + batch * c_batch + offs_m[:, None] * c_row + offs_n[None, :] * c_col
    )
    mask = (offs_m[:, None] < rows) & (offs_n[None, :] < cols)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit(do_not_specialize=["rows"])
def _sum_slices_kernel(
    parts_ptr,
    out_ptr,
    rows,
    cols,
    slices,
    parts_slice,
    out_batch,
    out_row,
    out_col,
    BLOCK: tl.constexpr,
):
    batch = tl.program_id(0).to(tl.int64) // rows
    row = tl.program_id(0).to(tl.int64) % rows
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    valid = offs < cols
    parts = parts_ptr + (batch * rows + row) * cols + offs
    total = tl.load(parts, mask=valid, other=0.0)
    for part in range(1, slices):
        total += tl.load(parts + part * parts_slice, mask=valid, other=0.0)
    out = out_ptr + batch * out_batch + row * out_row + offs * out_col
    tl.store(out, total.to(out_ptr.dtype.element_ty), mask=valid)


def matmul(
    a: torch.Tensor,
    b: torch.Tensor,
    *,
    out: torch.Tensor | None = None,
    out_dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """`a @ b` for `a` [..., M, K] and `b` [K, N] or [..., K, N] (one batch dimension at most; a 2-D
    operand is shared by every batch entry), any strides. The result has `a`'s dtype unless
    `out_dtype` says otherwise; `out` (any strides, the result's shape) receives it when given."""
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
    if out is None:
        out = torch.empty(
            (batch, rows, cols) if batched else (rows, cols),
            device=a.device,
            dtype=out_dtype or a.dtype,
        )
    out3 = out if out.dim() == 3 else out.unsqueeze(0)
    if tuple(out3.shape) != (batch, rows, cols):
        raise ValueError(f"out has shape {tuple(out.shape)}, the product {(batch, rows, cols)}")
    if out.numel() == 0:
        return out
    a_batch = a3.stride(0) if a3.shape[0] > 1 else 0
    b_batch = b3.stride(0) if b3.shape[0] > 1 else 0
    slices = k_slices(cols, inner, batch)
    # With one slice the kernel writes the result; with several, fp32 partial sums [slices, batch,
    # rows, cols] that `_sum_slices_kernel` adds in slice order.
    target = out3
    if slices > 1:
        target = torch.empty(slices, batch, rows, cols, device=a.device, dtype=torch.float32)
    strides = (target.stride(0), *target.stride()[1:]) if slices > 1 else (0, *out3.stride())
    grid = (triton.cdiv(rows, BLOCK_M), triton.cdiv(cols, BLOCK_N), batch * slices)
    _matmul_kernel[grid](
        a3,
        b3,
        target,
        rows,
        cols,
        inner,
        slices,
        slice_length(inner, slices),
        a_batch,
        a3.stride(1),
        a3.stride(2),
        b_batch,
        b3.stride(1),
        b3.stride(2),
        *strides,
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K,
        num_warps=NUM_WARPS,
        num_stages=NUM_STAGES,
    )
    if slices > 1:
        block = min(1024, triton.next_power_of_2(cols))
        _sum_slices_kernel[(batch * rows, triton.cdiv(cols, block))](
            target,
            out3,
            rows,
            cols,
            slices,
            target.stride(0),
            out3.stride(0),
            out3.stride(1),
            out3.stride(2),
            BLOCK=block,
        )
    return out
