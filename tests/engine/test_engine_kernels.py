"""The reference (CPU) path's batch-invariant building blocks: a row's result never depends on how
many rows there are. The GPU path's kernels are tested in test_engine_gpu_kernels.py."""

import pytest
import torch
import torch.nn.functional as F

from deepseek_recipe_engine.config import model_config
from deepseek_recipe_engine.model import (
    DeepseekModel,
    StepInput,
    invariant_elementwise,
    invariant_matmul,
)


@pytest.mark.parametrize(("inner", "outer"), [(64, 64), (32, 128), (64, 4096), (24, 40)])
def test_matmul_rows_do_not_depend_on_the_row_count(inner, outer):
    generator = torch.Generator().manual_seed(inner * outer)
    a = torch.randn(80, inner, generator=generator)
    b = torch.randn(inner, outer, generator=generator)
    full = invariant_matmul(a, b)
    torch.testing.assert_close(full, a @ b)
    for rows in range(1, 41):
        for start in (0, 3):
            part = invariant_matmul(a[start : start + rows], b)
            assert torch.equal(part, full[start : start + rows]), (rows, start)


def test_batched_matmul_rows_do_not_depend_on_the_row_count():
    generator = torch.Generator().manual_seed(5)
    a = torch.randn(4, 50, 16, generator=generator)
    b = torch.randn(4, 16, 32, generator=generator)
    full = invariant_matmul(a, b)
    torch.testing.assert_close(full, a @ b)
    shared = torch.randn(16, 32, generator=generator)
    torch.testing.assert_close(invariant_matmul(a, shared), a @ shared)
    for rows in range(1, 30):
        assert torch.equal(invariant_matmul(a[:, :rows], b), full[:, :rows]), rows


@pytest.mark.parametrize("fn", [torch.sigmoid, F.silu, torch.rsqrt])
def test_elementwise_results_do_not_depend_on_the_tensor_size(fn):
    x = torch.rand(300, generator=torch.Generator().manual_seed(1)) + 0.1
    full = invariant_elementwise(fn, x)
    for size in range(1, 200):
        assert torch.equal(invariant_elementwise(fn, x[:size]), full[:size]), size
    assert torch.equal(invariant_elementwise(fn, x.view(30, 10)), full.view(30, 10))


def _step(ids, positions, slots, lens, contexts):
    return StepInput(
        input_ids=torch.tensor(ids),
        positions=torch.tensor(positions),
        slot_mapping=torch.tensor(slots),
        query_lens=lens,
        context_slots=[torch.tensor(c) for c in contexts],
    )


def test_a_prompt_computed_in_chunks_or_as_decodes_gives_the_same_bits():
    """Each query token attends over exactly its causal prefix, so a prompt computed whole, in
    two chunks, or token by token writes the same latents and ends on the same hidden state."""
    model = DeepseekModel(model_config("tiny")).init_weights(0)
    ids, slots = [5, 9, 13, 17, 21], [0, 1, 2, 3, 4]
    splits = [[5], [2, 3], [1, 1, 1, 1, 1]]
    results = []
    for split in splits:
        cache = torch.zeros(model.kv_cache_shape(8))
        start = 0
        for length in split:
            end = start + length
            step = _step(
                ids[start:end], list(range(start, end)), slots[start:end], [length], [slots[:end]]
            )
            hidden = model(step, cache)
            start = end
        results.append((hidden, cache))
    for hidden, cache in results[1:]:
        assert torch.equal(hidden, results[0][0])
        assert torch.equal(cache, results[0][1])
