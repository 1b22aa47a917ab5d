"""A request gives bit-identical tokens and logprobs alone, in a batch, or after preemption."""

import pytest

from deepseek_recipe_engine.engine import GenerationResult
from deepseek_recipe_engine.request import GenerationRequest


def requests() -> list[GenerationRequest]:
    settings = [(0.0, 1.0), (1.0, 1.0), (0.7, 0.9), (1.3, 0.5)]
    return [
        GenerationRequest(
            prompt_ids=[(37 * i + 11 * j) % 5000 + 3 for j in range(5 + 9 * i)],
            max_tokens=3 + i // 3,
            temperature=settings[i % 4][0],
            top_p=settings[i % 4][1],
            seed=1000 + i,
            logprobs=True,
            top_logprobs=3,
        )
        for i in range(8)
    ]


def summary(result: GenerationResult) -> tuple:
    return (
        result.token_ids,
        [(lp.token_id, lp.logprob, tuple(lp.top_logprobs)) for lp in result.logprobs],
        result.finish_reason,
    )


@pytest.fixture
def expected(make_core) -> list[tuple]:
    """Each request run alone, on its own fresh engine."""
    return [summary(make_core().generate([r])[0]) for r in requests()]


def test_alone_and_in_a_batch_of_8_are_bit_identical(make_core, expected):
    batched = [summary(r) for r in make_core().generate(requests())]
    assert batched == expected


def test_batch_order_and_prefix_cache_hits_do_not_change_results(make_core, expected):
    core = make_core()
    core.generate(requests()[::2])
    reversed_results = core.generate(list(reversed(requests())))
    assert any(r.prompt_cache_hit_tokens > 0 for r in reversed_results)
    assert [summary(r) for r in reversed(reversed_results)] == expected


def test_staggered_arrivals_give_the_same_results(make_core, expected):
    core = make_core()
    results: dict[int, GenerationResult] = {}
    pending = requests()
    ids = []
    while pending or core.has_work():
        if pending:
            request_id = core.add_request(pending.pop(0))
            ids.append(request_id)
            results[request_id] = GenerationResult()
        for request_id, chunk in core.step():
            results[request_id].add(chunk)
    assert [summary(results[i]) for i in ids] == expected


def test_chunked_prefill_does_not_change_results(make_core, expected):
    core = make_core(max_num_batched_tokens=12)  # prompts of up to 68 tokens, in chunks
    assert [summary(r) for r in core.generate(requests())] == expected


def test_preemption_does_not_change_results(make_core, expected):
    core = make_core(num_blocks=16, block_size=8)
    preempted = core.generate(requests())
    assert core.scheduler.num_preemptions > 0
    assert [summary(r) for r in preempted] == expected
    assert core.blocks.num_free_blocks == 16
