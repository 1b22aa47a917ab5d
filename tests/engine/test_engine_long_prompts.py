"""Long prompts: attention in blocks of query rows (bounded memory, same results alone, in a batch
and after prefix hits), prompts longer than the step budget, RoPE tables for 64K+ contexts."""

import pytest
import torch

from deepseek_recipe_engine import model as model_module
from deepseek_recipe_engine.config import model_config, model_config_names
from deepseek_recipe_engine.engine import EngineCore
from deepseek_recipe_engine.model import (
    MAX_ATTENTION_SCORES,
    MIN_GEMM_ROWS,
    StepInput,
    query_blocks,
)
from deepseek_recipe_engine.request import GenerationRequest
from tests.engine.conftest import TEST_DEVICE

LONG_CONTEXT = 65536


@pytest.mark.parametrize(
    ("first", "length", "heads", "context"),
    [(0, 1, 4, 1), (0, 300, 4, 300), (37, 263, 4, 300), (299, 1, 4, 300), (0, 65536, 4, 65536)],
)
def test_query_blocks_cover_the_rows_in_aligned_bounded_blocks(first, length, heads, context):
    blocks = query_blocks(first, length, heads, context)
    rows = [row for block, _ in blocks for row in range(block.start, block.stop)]
    assert rows == list(range(length))
    width = max(MIN_GEMM_ROWS, MAX_ATTENTION_SCORES // (heads * context))
    for block, keys in blocks:
        last_position = first + block.stop - 1
        assert (first + block.start) // width == last_position // width  # one aligned block
        assert last_position < keys <= context
        assert (block.stop - block.start) * heads * keys <= max(
            MAX_ATTENTION_SCORES, MIN_GEMM_ROWS * heads * context
        )
    if heads * context * length <= MAX_ATTENTION_SCORES:
        assert blocks == [(slice(0, length), context)]  # a short context is attended whole


def prompt(length: int, salt: int = 0) -> list[int]:
    return [(7919 * i + salt) % 120000 + 3 for i in range(length)]


def summary(core: EngineCore, requests: list[GenerationRequest]) -> list[tuple]:
    return [
        (r.token_ids, [lp.logprob for lp in r.logprobs], r.prompt_cache_hit_tokens)
        for r in core.generate(requests)
    ]


def request(ids: list[int]) -> GenerationRequest:
    return GenerationRequest(
        prompt_ids=ids, max_tokens=3, temperature=1.0, seed=5, logprobs=True, top_logprobs=2
    )


@pytest.mark.skipif(TEST_DEVICE != "cpu", reason="the blocks' keys are trimmed on the CPU path")
def test_blocked_attention_is_bit_identical_alone_in_a_batch_and_after_prefix_hits(
    make_core, monkeypatch
):
    monkeypatch.setattr(model_module, "MAX_ATTENTION_SCORES", 4 * 300 * 20)  # ~20-row blocks
    long_prompt = prompt(300)
    alone = summary(make_core(), [request(long_prompt)])[0]
    batched = summary(make_core(), [request(prompt(40, 1)), request(long_prompt)])[1]
    assert batched == alone
    core = make_core()
    core.generate([request(long_prompt[:200])])  # caches the first 12 blocks of 16 tokens
    tokens, logprobs, hits = summary(core, [request(long_prompt)])[0]
    assert hits == 192 and (tokens, logprobs) == alone[:2]


def test_blocked_attention_agrees_with_whole_rows(make_core, monkeypatch):
    ids = prompt(300)
    whole = make_core().next_token_logits(ids)
    monkeypatch.setattr(model_module, "MAX_ATTENTION_SCORES", 4 * 300 * 16)
    blocked = make_core().next_token_logits(ids)
    torch.testing.assert_close(blocked, whole, rtol=1e-5, atol=1e-5)


def test_fixed_width_attention_in_blocks_matches_whole_rows(tiny_model, monkeypatch):
    """The CUDA layout (contexts padded to one width) attends a long prompt in blocks too."""
    length, width = 40, 64
    padded = torch.zeros(1, width, dtype=torch.long)
    padded[0, :length] = torch.arange(length)

    def last_hidden() -> torch.Tensor:
        step = StepInput(
            input_ids=torch.tensor(prompt(length), device=TEST_DEVICE),
            positions=torch.arange(length, device=TEST_DEVICE),
            slot_mapping=torch.arange(length, device=TEST_DEVICE),
            query_lens=[length],
            context_slots=[],
            padded_slots=padded.to(TEST_DEVICE),
        )
        cache = torch.zeros(tiny_model.kv_cache_shape(width), device=TEST_DEVICE)
        return tiny_model(step, cache)

    whole = last_hidden()
    heads = tiny_model.config.num_heads
    monkeypatch.setattr(model_module, "MAX_ATTENTION_SCORES", heads * width * MIN_GEMM_ROWS)
    assert len(query_blocks(0, length, heads, width)) == 3
    assert torch.equal(last_hidden(), whole)  # rows attend independently


def test_a_prompt_longer_than_the_step_budget_runs_in_a_step_of_its_own(make_core):
    core = make_core(max_num_batched_tokens=64)
    short, long = request(prompt(20, 2)), request(prompt(150, 3))
    results = core.generate([short, long])
    assert [r.prompt_tokens for r in results] == [20, 150]
    assert all(r.finish_reason == "length" and len(r.token_ids) == 3 for r in results)


@pytest.mark.parametrize("name", model_config_names())
def test_every_bundled_model_has_rope_positions_for_long_contexts(name):
    assert model_config(name).max_position_embeddings >= 2 * LONG_CONTEXT
