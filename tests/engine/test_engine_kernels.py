"""The batch-invariant building blocks: a row's result never depends on how many rows there are."""

import pytest
import torch
import torch.nn.functional as F

from engine.model import invariant_elementwise, invariant_matmul, invariant_row_mean
from tests.engine.conftest import TEST_DEVICE


@pytest.mark.parametrize(("inner", "outer"), [(64, 64), (32, 128), (64, 4096), (24, 40)])
def test_matmul_rows_do_not_depend_on_the_row_count(inner, outer):
    generator = torch.Generator().manual_seed(inner * outer)
    a = torch.randn(80, inner, generator=generator).to(TEST_DEVICE)
    b = torch.randn(inner, outer, generator=generator).to(TEST_DEVICE)
    full = invariant_matmul(a, b)
    torch.testing.assert_close(full, a @ b)
    for rows in range(1, 41):
        for start in (0, 3):
            part = invariant_matmul(a[start : start + rows], b)
            assert torch.equal(part, full[start : start + rows]), (rows, start)


def test_batched_matmul_rows_do_not_depend_on_the_row_count():
    generator = torch.Generator().manual_seed(5)
    a = torch.randn(4, 50, 16, generator=generator).to(TEST_DEVICE)
    b = torch.randn(4, 16, 32, generator=generator).to(TEST_DEVICE)
    full = invariant_matmul(a, b)
    torch.testing.assert_close(full, a @ b)
    shared = torch.randn(16, 32, generator=generator).to(TEST_DEVICE)
    torch.testing.assert_close(invariant_matmul(a, shared), a @ shared)
    for rows in range(1, 30):
        assert torch.equal(invariant_matmul(a[:, :rows], b), full[:, :rows]), rows


def test_row_means_do_not_depend_on_the_row_count():
    x = torch.randn(70, 2048, generator=torch.Generator().manual_seed(9)).to(TEST_DEVICE)
    full = invariant_row_mean(x)
    torch.testing.assert_close(full, x.mean(-1, keepdim=True))
    for rows in (1, 2, 7, 16, 33):
        assert torch.equal(invariant_row_mean(x[:rows]), full[:rows]), rows


@pytest.mark.parametrize("fn", [torch.sigmoid, F.silu, torch.rsqrt])
def test_elementwise_results_do_not_depend_on_the_tensor_size(fn):
    x = torch.rand(300, generator=torch.Generator().manual_seed(1)).to(TEST_DEVICE) + 0.1
    full = invariant_elementwise(fn, x)
    for size in range(1, 200):
        assert torch.equal(invariant_elementwise(fn, x[:size]), full[:size]), size
    assert torch.equal(invariant_elementwise(fn, x.view(30, 10)), full.view(30, 10))
