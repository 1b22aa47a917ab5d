"""The batch-invariant building blocks: a row's result never depends on how many rows there are."""

import pytest
import torch
import torch.nn.functional as F

from deepseek_recipe_engine.model import (
    StepInput,
    invariant_elementwise,
    invariant_matmul,
    invariant_row_mean,
)
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


def test_grouped_experts_match_the_expert_loop(tiny_model):
    experts = next(
        layer.mlp.experts for layer in tiny_model.model.layers if hasattr(layer.mlp, "gate")
    )
    generator = torch.Generator().manual_seed(3)
    x = torch.randn(37, tiny_model.config.hidden_size, generator=generator).to(TEST_DEVICE)
    routed = tiny_model.config.n_routed_experts
    scores = torch.rand(37, routed, generator=generator).to(TEST_DEVICE)
    weights, indices = scores.topk(tiny_model.config.num_experts_per_tok, dim=-1)
    grouped = experts.forward_grouped(x, weights, indices)
    looped = experts.forward_looped(x, weights, indices)
    if TEST_DEVICE == "cpu":  # CPU batched products may round differently from 2-D ones
        torch.testing.assert_close(grouped, looped)
    else:
        assert torch.equal(grouped, looped)


def _step(ids, positions, slots, lens, contexts, width=None):
    padded = None
    if width is not None:
        padded = torch.zeros(len(contexts), width, dtype=torch.long)
        for row, context in enumerate(contexts):
            padded[row, : len(context)] = torch.tensor(context)
    return StepInput(
        input_ids=torch.tensor(ids, device=TEST_DEVICE),
        positions=torch.tensor(positions, device=TEST_DEVICE),
        slot_mapping=torch.tensor(slots, device=TEST_DEVICE),
        query_lens=lens,
        context_slots=[torch.tensor(c, device=TEST_DEVICE) for c in contexts],
        padded_slots=None if padded is None else padded.to(TEST_DEVICE),
    )


def test_fixed_width_attention_matches_the_per_sequence_loop(tiny_model):
    """The CUDA attention layout (padded contexts, batched decodes) computes the same attention:
    a prefill of two prompts, then a step with one decode per sequence."""
    shape = tiny_model.kv_cache_shape(64)
    results = []
    for width in (None, 48):
        cache = torch.zeros(shape, device=TEST_DEVICE)
        prefill = _step(
            [5, 9, 13, 17, 21, 8, 6, 4],
            [0, 1, 2, 3, 4, 0, 1, 2],
            [0, 1, 2, 3, 4, 10, 11, 12],
            [5, 3],
            [[0, 1, 2, 3, 4], [10, 11, 12]],
            width,
        )
        first = tiny_model(prefill, cache)
        decode = _step(
            [30, 31], [5, 3], [5, 13], [1, 1], [[0, 1, 2, 3, 4, 5], [10, 11, 12, 13]], width
        )
        results.append((first, tiny_model(decode, cache)))
    for looped, fixed in zip(results[0], results[1], strict=True):
        # two softmax implementations: equal up to rounding (the medium model's hidden states
        # reach ~1e-5 absolute differences on CUDA)
        torch.testing.assert_close(fixed, looped, rtol=1e-4, atol=1e-4)
