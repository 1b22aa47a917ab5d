"""Long prompts: the same results alone, in a batch and after prefix hits, prompts longer than the
step budget (chunked prefill), RoPE tables for 64K+ contexts."""

import pytest

from deepseek_recipe_engine.config import model_config, model_config_names
from deepseek_recipe_engine.engine import EngineCore
from deepseek_recipe_engine.request import GenerationRequest

LONG_CONTEXT = 65536


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


def test_long_prompt_is_bit_identical_alone_in_a_batch_and_after_prefix_hits(make_core):
    long_prompt = prompt(300)
    alone = summary(make_core(), [request(long_prompt)])[0]
    batched = summary(make_core(), [request(prompt(40, 1)), request(long_prompt)])[1]
    assert batched == alone
    core = make_core()
    core.generate([request(long_prompt[:200])])  # caches the first 12 blocks of 16 tokens
    tokens, logprobs, hits = summary(core, [request(long_prompt)])[0]
    assert hits == 192 and (tokens, logprobs) == alone[:2]


def test_a_prompt_longer_than_the_step_budget_runs_in_chunks(make_core):
    core = make_core(max_num_batched_tokens=64)
    short, long = request(prompt(20, 2)), request(prompt(150, 3))
    results = core.generate([short, long])
    assert [r.prompt_tokens for r in results] == [20, 150]
    assert all(r.finish_reason == "length" and len(r.token_ids) == 3 for r in results)


@pytest.mark.parametrize("name", model_config_names())
def test_every_bundled_model_has_rope_positions_for_long_contexts(name):
    assert model_config(name).max_position_embeddings >= 2 * LONG_CONTEXT
