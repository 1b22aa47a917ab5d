"""Seeded sampling: reproducible, greedy, top_p, logits processor, logprobs."""

import torch

from deepseek_recipe_engine.request import GenerationRequest
from deepseek_recipe_engine.sampler import MAX_TOP_LOGPROBS, SamplingRow, generator_seed, sample

PROMPT = list(range(100, 137))


def request(**fields) -> GenerationRequest:
    return GenerationRequest(prompt_ids=fields.pop("prompt_ids", PROMPT), **fields)


def test_same_seed_same_tokens_across_engines(make_core):
    first = make_core().generate([request(max_tokens=12, seed=7)])[0]
    second = make_core().generate([request(max_tokens=12, seed=7)])[0]
    assert first.token_ids == second.token_ids
    assert len(first.token_ids) == 12


def test_different_seed_different_tokens(make_core):
    core = make_core()
    a, b = core.generate([request(max_tokens=12, seed=1), request(max_tokens=12, seed=2)])
    assert a.token_ids != b.token_ids


def test_unseeded_requests_get_random_seeds(make_core):
    a, b = make_core().generate([request(max_tokens=8), request(max_tokens=8)])
    assert a.token_ids != b.token_ids


def test_greedy_follows_the_argmax_and_ignores_the_seed(make_core):
    a = make_core().generate(
        [request(max_tokens=6, temperature=0.0, seed=1, logprobs=True, top_logprobs=1)]
    )[0]
    b = make_core().generate([request(max_tokens=6, temperature=0.0, seed=2)])[0]
    assert a.token_ids == b.token_ids
    assert all(lp.top_logprobs[0][0] == lp.token_id for lp in a.logprobs)


def test_tiny_top_p_is_greedy(make_core):
    greedy = make_core().generate([request(max_tokens=6, temperature=0.0)])[0]
    nucleus = make_core().generate([request(max_tokens=6, temperature=1.0, top_p=1e-6, seed=3)])[0]
    assert nucleus.token_ids == greedy.token_ids


def test_top_p_only_samples_inside_the_nucleus():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    seen = set()
    for seed in range(200):
        row = SamplingRow(1.0, 0.7, seed, 0, False, 0, [])
        seen.add(sample(logits, [row])[0].token_id)
    assert seen == {0, 1}


def test_sampling_follows_the_distribution():
    logits = torch.log(torch.tensor([[0.7, 0.2, 0.1]]))
    counts = [0, 0, 0]
    for position in range(2000):
        counts[sample(logits, [SamplingRow(1.0, 1.0, 11, position, False, 0, [])])[0].token_id] += 1
    assert 1250 < counts[0] < 1550 and 280 < counts[1] < 520 and 120 < counts[2] < 280


def test_generator_seed_depends_on_seed_and_position():
    seeds = {generator_seed(s, p) for s in range(20) for p in range(20)}
    assert len(seeds) == 400
    assert all(0 <= s < 2**63 for s in seeds)


def test_logits_processor_constrains_the_choice(make_core):
    seen_prefixes = []

    def only_token_42(token_ids, logits):
        seen_prefixes.append(len(token_ids))
        masked = torch.full_like(logits, float("-inf"))
        masked[42] = 0.0
        return masked

    constrained = request(max_tokens=5, seed=9, logits_processor=only_token_42)
    result = make_core().generate([constrained])[0]
    assert result.token_ids == [42] * 5
    assert seen_prefixes == [len(PROMPT) + i for i in range(5)]


def test_logprobs_shape_and_values(make_core, tiny_model):
    result = make_core().generate(
        [request(max_tokens=4, seed=5, logprobs=True, top_logprobs=MAX_TOP_LOGPROBS)]
    )[0]
    assert len(result.logprobs) == 4
    for entry, token in zip(result.logprobs, result.token_ids, strict=True):
        assert entry.token_id == token
        assert entry.logprob <= 0.0
        assert len(entry.top_logprobs) == MAX_TOP_LOGPROBS
        values = [v for _, v in entry.top_logprobs]
        assert values == sorted(values, reverse=True)
        assert entry.logprob <= values[0]
    plain = make_core().generate([request(max_tokens=3, seed=5, logprobs=True)])[0]
    assert [e.top_logprobs for e in plain.logprobs] == [[], [], []]
    none = make_core().generate([request(max_tokens=3, seed=5)])[0]
    assert none.logprobs == []


def test_logprobs_are_of_the_raw_distribution():
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]])
    row = SamplingRow(0.5, 0.5, 1, 0, True, 2, [])
    result = sample(logits, [row])[0]
    expected = torch.log_softmax(logits[0], dim=-1)
    assert result.logprob is not None
    assert result.logprob.logprob == float(expected[result.token_id])
    assert result.logprob.top_logprobs == [(0, float(expected[0])), (1, float(expected[1]))]


def test_banned_tokens_are_never_chosen_but_keep_their_logprobs():
    logits = torch.tensor([[9.0, 1.0, 0.0, 8.5]])
    expected = torch.log_softmax(logits[0], dim=-1)
    for temperature, top_p in [(0.0, 1.0), (1.0, 1.0), (1.0, 0.5)]:
        for seed in range(20):
            row = SamplingRow(temperature, top_p, seed, 0, True, 1, [], banned_token_ids=(0,))
            result = sample(logits, [row])[0]
            assert result.token_id != 0
            assert result.logprob is not None
            assert result.logprob.logprob == float(expected[result.token_id])
            assert result.logprob.top_logprobs == [(0, float(expected[0]))]


def test_recipe_requests_ban_prompt_only_markup():
    from deepseek_recipe import convert
    from deepseek_recipe_engine.grammar import PROMPT_ONLY_TOKENS, special_token_id
    from deepseek_recipe_engine.recipe_request import generation_request

    body = {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "hi"}]}
    request = generation_request(convert(body), [1, 2, 3], context_limit=4096)
    assert sorted(request.banned_token_ids) == sorted(map(special_token_id, PROMPT_ONLY_TOKENS))
    assert len(set(request.banned_token_ids)) == 3
