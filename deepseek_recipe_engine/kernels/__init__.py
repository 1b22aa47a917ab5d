"""Triton kernels of the engine's GPU path: each has one fixed tiling and reduction order, so no
row's result depends on the batch it is computed in (docs/engine.md, "Batch invariance").

Only this package imports Triton, and only the GPU path imports this package's modules: on a CUDA
device, or on the CPU when `on_cpu` is set, under Triton's interpreter (`TRITON_INTERPRET=1` before
Triton is first imported), which is how the tests check the kernels' logic without a GPU.
"""

from __future__ import annotations

import torch

on_cpu = False
"""Run the GPU path on the CPU too (for tests, under Triton's interpreter)."""


def uses_kernels(device: torch.device | str) -> bool:
    """Whether an engine on `device` takes the GPU path (the Triton kernels)."""
    return torch.device(device).type == "cuda" or on_cpu


def next_power_of_2(n: int) -> int:
    """The smallest power of two that is at least `n` (block sizes must be powers of two)."""
    return 1 << max(0, n - 1).bit_length()


def block_size(n: int, minimum: int = 16) -> int:
    """A power-of-two block that holds `n` elements and is at least `minimum` wide (the smallest
    operand a Triton `dot` takes)."""
    return max(minimum, next_power_of_2(n))
