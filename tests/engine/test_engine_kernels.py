"""The batch-invariant building blocks: a row's result never depends on how many rows there are."""

import pytest
import torch
import torch.nn.functional as F

from engine.model import invariant_elementwise, invariant_matmul


@pytest.mark.parametrize(("inner", "outer"), [(64, 64), (32, 128), (64, 4096), (24, 40)])
def test_matmul_rows_do_not_depend_on_the_row_count(inner, outer):
    generator = torch.Generator().manual_seed(inner * outer)
    a = torch.randn(80, inner, generator=generator)
    b = torch.randn(inner, outer, generator=generator)
    full = invariant_matmul(a, b)
    for rows in range(1, 41):
        for start in (0, 3):
            part = invariant_matmul(a[start : start + rows], b)
            assert torch.equal(part, full[start : start + rows]), (rows, start)


def test_batched_matmul_rows_do_not_depend_on_the_row_count():
    generator = torch.Generator().manual_seed(5)
    a = torch.randn(4, 50, 16, generator=generator)
    b = torch.randn(4, 16, 32, generator=generator)
    full = invariant_matmul(a, b)
    for rows in range(1, 30):
        assert torch.equal(invariant_matmul(a[:, :rows], b), full[:, :rows]), rows


@pytest.mark.parametrize("fn", [torch.sigmoid, F.silu, torch.rsqrt])
def test_elementwise_results_do_not_depend_on_the_tensor_size(fn):
    x = torch.rand(300, generator=torch.Generator().manual_seed(1)) + 0.1
    full = invariant_elementwise(fn, x)
    for size in range(1, 200):
        assert torch.equal(invariant_elementwise(fn, x[:size]), full[:size]), size
    assert torch.equal(invariant_elementwise(fn, x.view(30, 10)), full.view(30, 10))
