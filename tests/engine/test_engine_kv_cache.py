"""Prefix caching: exact hit counts, LRU eviction, no leaked blocks."""

from deepseek_recipe_engine.kv_cache import BlockManager
from deepseek_recipe_engine.request import GenerationRequest
from deepseek_recipe_engine.sequence import Sequence

BLOCK = 16


def prompt(n: int, offset: int = 0) -> list[int]:
    return [1000 + offset + i for i in range(n)]


def run(core, ids: list[int], max_tokens: int = 3):
    return core.generate([GenerationRequest(prompt_ids=ids, max_tokens=max_tokens, seed=0)])[0]


def test_first_prompt_has_no_hits(make_core):
    result = run(make_core(), prompt(40))
    assert (result.prompt_tokens, result.prompt_cache_hit_tokens) == (40, 0)


def test_repeated_prompt_reuses_its_full_blocks(make_core):
    core = make_core()
    run(core, prompt(40))
    assert run(core, prompt(40)).prompt_cache_hit_tokens == 2 * BLOCK


def test_shared_prefix_of_k_blocks_hits_k_blocks(make_core):
    for k in (1, 2, 3):
        core = make_core()
        run(core, prompt(k * BLOCK) + [7] * 20)
        other = prompt(k * BLOCK) + [9] * 20
        assert run(core, other).prompt_cache_hit_tokens == k * BLOCK


def test_partially_shared_block_is_not_counted(make_core):
    core = make_core()
    run(core, prompt(BLOCK + 10) + [7] * 10)
    assert run(core, prompt(BLOCK + 10) + [9] * 10).prompt_cache_hit_tokens == BLOCK


def test_fully_cached_prompt_recomputes_its_last_block(make_core):
    core = make_core()
    run(core, prompt(3 * BLOCK))
    assert run(core, prompt(3 * BLOCK)).prompt_cache_hit_tokens == 2 * BLOCK


def test_generated_tokens_are_cached_too(make_core):
    core = make_core()
    first = run(core, prompt(BLOCK + 4), max_tokens=20)
    follow_up = prompt(BLOCK + 4) + first.token_ids + [5]
    assert run(core, follow_up).prompt_cache_hit_tokens == 2 * BLOCK


def test_a_different_first_block_breaks_the_chain(make_core):
    core = make_core()
    run(core, prompt(3 * BLOCK + 1))
    changed = [0, *prompt(3 * BLOCK)[1:], 5]
    assert run(core, changed).prompt_cache_hit_tokens == 0


def test_hits_are_reproducible_results(make_core):
    core = make_core()
    cold = run(core, prompt(50), max_tokens=6)
    warm = run(core, prompt(50), max_tokens=6)
    assert warm.prompt_cache_hit_tokens == 3 * BLOCK
    assert warm.token_ids == cold.token_ids


def test_least_recently_freed_cached_blocks_are_evicted_first():
    blocks = BlockManager(num_blocks=4, block_size=2)

    def seq(i: int, tokens: list[int]) -> Sequence:
        return Sequence.from_request(i, GenerationRequest(prompt_ids=tokens), 0)

    def admit_and_finish(s: Sequence) -> int:
        hits = blocks.allocate(s)
        s.num_computed_tokens = len(s)
        blocks.register_computed(s)
        blocks.free(s)
        return hits

    assert admit_and_finish(seq(0, [1, 2, 3])) == 0  # caches block [1, 2]
    assert admit_and_finish(seq(1, [4, 5, 6])) == 0  # caches block [4, 5]
    assert admit_and_finish(seq(2, [7, 8, 9])) == 0  # caches [7, 8], evicts nothing yet
    assert admit_and_finish(seq(3, [1, 2, 0])) == 2  # touches [1, 2]: now most recent
    assert admit_and_finish(seq(4, [10, 11, 12, 13, 14])) == 0  # needs 3: evicts [4, 5], [7, 8]
    assert admit_and_finish(seq(5, [1, 2, 0])) == 2
    assert admit_and_finish(seq(6, [4, 5, 0])) == 0
    assert blocks.num_free_blocks == 4


def test_no_blocks_leak_after_finish_and_cancel(make_core):
    core = make_core(num_blocks=64)
    ids = [
        core.add_request(GenerationRequest(prompt_ids=prompt(20 + i, i), max_tokens=30))
        for i in range(6)
    ]
    for _ in range(3):
        core.step()
    core.cancel(ids[1])
    core.cancel(ids[4])
    assert core.cancel(ids[4]) == []
    while core.has_work():
        core.step()
    assert core.blocks.num_free_blocks == 64
    assert all(b.ref_count == 0 for b in core.blocks.blocks)


def test_cancelling_waiting_requests_frees_everything(make_core):
    core = make_core(num_blocks=8, max_num_seqs=1)
    ids = [
        core.add_request(GenerationRequest(prompt_ids=prompt(20, i), max_tokens=5))
        for i in range(3)
    ]
    core.step()
    assert [len(core.scheduler.running), len(core.scheduler.waiting)] == [1, 2]
    outputs = [o for i in ids for o in core.cancel(i)]
    assert [chunk.reason for _, chunk in outputs] == ["cancelled"] * 3
    assert not core.has_work()
    assert core.blocks.num_free_blocks == 8
