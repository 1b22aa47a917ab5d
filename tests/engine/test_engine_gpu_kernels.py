"""The GPU path's Triton kernels against the reference (CPU) computation.

With `ENGINE_TEST_DEVICE=cuda` the kernels run on the GPU, and a row's result must be bit-identical
whatever else shares its launch. Elsewhere they run on the CPU under Triton's interpreter, which
checks their logic (its `dot` is numpy's, whose rounding may depend on a row's place in a tile, so
there the checks are tolerances). Kernel modules are imported inside the tests, once the
interpreter is on.
"""

import dataclasses
import importlib
import os
import sys
from collections.abc import Iterator

import pytest
import torch

from deepseek_recipe_engine import kernels as kernel_package
from deepseek_recipe_engine.config import EngineConfig, model_config
from deepseek_recipe_engine.engine import EngineCore
from deepseek_recipe_engine.model import DeepseekModel, MoE, StepInput
from deepseek_recipe_engine.request import GenerationRequest
from deepseek_recipe_engine.sampler import SamplingRow, sample
from tests.engine.conftest import TEST_DEVICE

ON_GPU = TEST_DEVICE == "cuda"
# fp32 products run as three TF32 products on the GPU (relative error ~2e-7 each): compare with
# torch's fp32 at this tolerance.
CLOSE = {"rtol": 1e-4, "atol": 1e-4}
# Triton's JIT picks the interpreter when it is first imported: turn it on before that (harmless
# where there is no GPU, since no compiled kernel could run there anyway).
INTERPRETER = not ON_GPU and "triton" not in sys.modules
if INTERPRETER:
    os.environ["TRITON_INTERPRET"] = "1"


@pytest.fixture(autouse=True)
def kernels(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Triton on the GPU, or its interpreter on the CPU (skipped where Triton is missing)."""
    pytest.importorskip("triton")
    if not ON_GPU:
        if not INTERPRETER:
            pytest.skip("Triton was imported before its interpreter could be turned on")
        monkeypatch.setattr(kernel_package, "on_cpu", True)
    yield


def kernel(name: str):
    return importlib.import_module(f"deepseek_recipe_engine.kernels.{name}")


def randn(*shape: int, seed: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(TEST_DEVICE)


def same_rows(part: torch.Tensor, full: torch.Tensor) -> None:
    """Bit-identical on the GPU; equal up to rounding under the interpreter."""
    if ON_GPU:
        assert torch.equal(part, full)
    else:
        torch.testing.assert_close(part, full, **CLOSE)


def small_model(name: str = "small") -> DeepseekModel:
    """A seeded model with a small vocabulary (the interpreter is slow), on the test device."""
    return DeepseekModel(model_config(name, vocab_size=1000)).init_weights(0).to(TEST_DEVICE)


@pytest.mark.parametrize(("inner", "cols"), [(72, 100), (1100, 40)])  # one k slice, and two
def test_matmul_matches_torch_and_rows_do_not_depend_on_the_batch(inner, cols):
    matmul = kernel("matmul")
    assert matmul.k_slices(cols, inner) == (1 if inner < 1024 else 2)
    a, b = randn(40, inner, seed=1), randn(inner, cols, seed=2)
    full = matmul.matmul(a, b)
    torch.testing.assert_close(full, a @ b, rtol=1e-4, atol=1e-3)  # sums of up to 1100 products
    for rows, start in ((1, 0), (3, 5), (17, 2), (33, 7)):
        same_rows(matmul.matmul(a[start : start + rows], b), full[start : start + rows])


def test_batched_matmul_shares_operands_and_writes_strided_outputs():
    matmul = kernel("matmul").matmul
    a, b, shared = randn(3, 20, 24, seed=3), randn(3, 24, 40, seed=4), randn(24, 40, seed=5)
    torch.testing.assert_close(matmul(a, b), a @ b, **CLOSE)
    torch.testing.assert_close(matmul(a, shared), a @ shared, **CLOSE)
    out = torch.full((20, 3, 40), float("nan"), device=TEST_DEVICE)
    matmul(a, b, out=out.transpose(0, 1))
    torch.testing.assert_close(out.transpose(0, 1), a @ b, **CLOSE)
    with pytest.raises(ValueError, match="inner sizes differ"):
        matmul(a, randn(25, 40, seed=6))


def test_rmsnorm_and_residual_sum():
    rmsnorm = kernel("norm").rmsnorm
    model = small_model()
    norm = model.model.layers[0].input_layernorm
    norm.weight.data = randn(norm.weight.shape[0], seed=7)
    x, delta = randn(9, norm.weight.shape[0], seed=8), randn(9, norm.weight.shape[0], seed=9)
    normed, same = rmsnorm(x, norm.weight, norm.eps)
    torch.testing.assert_close(normed, norm(x))
    assert same is x
    normed, summed = rmsnorm(x, norm.weight, norm.eps, delta)
    torch.testing.assert_close(summed, x + delta)
    torch.testing.assert_close(normed, norm(x + delta))
    same_rows(rmsnorm(x[2:5], norm.weight, norm.eps)[0], rmsnorm(x, norm.weight, norm.eps)[0][2:5])


def test_latents_are_normalised_rotated_and_cached():
    latent_to_cache = kernel("norm").latent_to_cache
    model = small_model()
    cfg, attn = model.config, model.model.layers[0].self_attn
    kv = randn(5, cfg.latent_dim, seed=10)
    positions = torch.tensor([0, 3, 9, 30, 100], device=TEST_DEVICE)
    slots = torch.tensor([7, 2, 11, 0, 5], device=TEST_DEVICE)
    cache = torch.full((12, cfg.latent_dim), float("nan"), device=TEST_DEVICE)
    latent_to_cache(
        kv, attn.kv_a_layernorm.weight, cfg.rms_norm_eps, positions, slots,
        model.rope.cos, model.rope.sin, cache,
    )  # fmt: skip
    rank = cfg.kv_lora_rank
    expected = torch.cat(
        [attn.kv_a_layernorm(kv[:, :rank]), model.rope(kv[:, None, rank:], positions)[:, 0]], -1
    )
    torch.testing.assert_close(cache[slots], expected)


def reference_attention(model: DeepseekModel, queries, positions, contexts, cache) -> torch.Tensor:
    """The reference path's attention of one query token per sequence."""
    step = StepInput(
        input_ids=torch.zeros(len(contexts), dtype=torch.long),
        positions=positions.cpu(),
        slot_mapping=torch.zeros(len(contexts), dtype=torch.long),
        query_lens=[1] * len(contexts),
        context_slots=[torch.tensor(c) for c in contexts],
    )
    attn = model.model.layers[0].self_attn.cpu()
    return attn._attend(queries.cpu(), step, cache.cpu()).transpose(0, 1)


def test_paged_attention_matches_the_reference():
    paged_attention = kernel("attention").paged_attention
    model = small_model()
    cfg, page = model.config, 4
    heads, rank, rope = cfg.num_heads, cfg.kv_lora_rank, cfg.qk_rope_head_dim
    cache = randn(40, cfg.latent_dim, seed=11)
    tables = [[3, 7, 1, 9], [0, 5, 2, 8], [6, 4, 3, 9]]  # sequences may share blocks
    positions = torch.tensor([13, 0, 5], device=TEST_DEVICE)
    q_latent, q_rope = randn(3, heads, rank, seed=12), randn(3, heads, rope, seed=13)
    out = torch.full((3, heads, rank), float("nan"), device=TEST_DEVICE)
    paged_attention(
        q_latent, q_rope, positions, torch.tensor([0, 1, 2], device=TEST_DEVICE),
        torch.tensor(tables, device=TEST_DEVICE), page, model.rope.cos, model.rope.sin,
        cache, 0.25, out,
    )  # fmt: skip
    contexts = [
        [table[p // page] * page + p % page for p in range(int(position) + 1)]
        for table, position in zip(tables, positions.tolist(), strict=True)
    ]
    rotated = model.rope(q_rope, positions)
    queries = torch.cat([q_latent, rotated], dim=-1) * 0.25
    expected = reference_attention(model, queries, positions, contexts, cache)
    torch.testing.assert_close(out.cpu(), expected, **CLOSE)


def test_routing_chooses_the_routers_experts_in_ascending_order():
    route = kernel("experts").route
    model = small_model()
    cfg = model.config
    moe = next(layer.mlp for layer in model.model.layers if isinstance(layer.mlp, MoE))
    moe.gate.e_score_correction_bias.copy_(randn(cfg.n_routed_experts, seed=14) * 0.1)
    x = randn(23, cfg.hidden_size, seed=15)
    weights, indices = moe.gate(x)
    logits = x @ moe.gate.weight.t()
    got_indices, got_weights = route(
        logits, moe.gate.e_score_correction_bias, groups=cfg.n_group, topk_group=cfg.topk_group,
        top_k=cfg.num_experts_per_tok, normalise=True, scaling=cfg.routed_scaling_factor,
    )  # fmt: skip
    order = indices.argsort(dim=-1)
    assert torch.equal(got_indices.long(), indices.gather(1, order))
    torch.testing.assert_close(got_weights, weights.gather(1, order))


def test_routed_experts_match_the_expert_loop():
    experts_kernels = kernel("experts")
    model = small_model()
    cfg = model.config
    moe = next(layer.mlp for layer in model.model.layers if isinstance(layer.mlp, MoE))
    x = randn(37, cfg.hidden_size, seed=16)
    scores = torch.rand(37, cfg.n_routed_experts, generator=torch.Generator().manual_seed(17))
    weights, indices = scores.to(TEST_DEVICE).topk(cfg.num_experts_per_tok, dim=-1)
    indices, order = indices.sort(dim=-1)
    weights = weights.gather(1, order)
    shared = randn(37, cfg.hidden_size, seed=18)
    got = experts_kernels.routed_experts(
        x, indices.int(), weights, moe.experts.gate_up_proj, moe.experts.down_proj, shared
    )
    torch.testing.assert_close(got, moe.experts(x, weights, indices) + shared, **CLOSE)
    part = experts_kernels.routed_experts(
        x[5:8], indices[5:8].int(), weights[5:8], moe.experts.gate_up_proj,
        moe.experts.down_proj, shared[5:8],
    )  # fmt: skip
    same_rows(part, got[5:8])
    swiglu = experts_kernels.swiglu(
        x, moe.shared_experts.gate_proj.weight, moe.shared_experts.up_proj.weight
    )
    mlp = moe.shared_experts
    torch.testing.assert_close(
        swiglu,
        torch.nn.functional.silu(x @ mlp.gate_proj.weight.t()) * (x @ mlp.up_proj.weight.t()),
    )


def sampling_rows(count: int, **fields: object) -> list[SamplingRow]:
    settings: dict = {"temperature": 1.0, "top_p": 1.0, "logprobs": True, "top_logprobs": 3}
    settings |= fields
    return [SamplingRow(seed=11, position=i, token_ids=[], **settings) for i in range(count)]


def device_sample(logits: torch.Tensor, rows: list[SamplingRow]):
    return importlib.import_module("deepseek_recipe_engine.device_sampler").sample_on_device(
        logits.to(TEST_DEVICE), rows
    )


def test_greedy_and_logprobs_match_the_host_sampler():
    logits = randn(6, 300, seed=19).cpu()
    logits[2, 7] = logits[2, 9] = logits[2].max() + 1  # a tie: the lower id wins
    rows = sampling_rows(6, temperature=0.0)
    got, expected = device_sample(logits, rows), sample(logits, rows)
    assert [s.token_id for s in got] == [s.token_id for s in expected]
    assert got[2].token_id == 7
    for ours, theirs in zip(got, expected, strict=True):
        assert ours.logprob is not None and theirs.logprob is not None
        ours_top, theirs_top = ours.logprob.top_logprobs, theirs.logprob.top_logprobs
        assert {t for t, _ in ours_top} == {t for t, _ in theirs_top}
        assert ours.logprob.logprob == pytest.approx(theirs.logprob.logprob, abs=1e-5)


def test_temperature_draws_follow_the_distribution_and_stay_in_the_nucleus():
    probs = torch.tensor([0.5, 0.3, 0.15, 0.05])
    logits = torch.log(probs).repeat(500, 1)
    counts = torch.bincount(
        torch.tensor([s.token_id for s in device_sample(logits, sampling_rows(500))]), minlength=4
    )
    assert torch.all((counts / 500 - probs).abs() < 0.08), counts
    nucleus = device_sample(logits[:100], sampling_rows(100, top_p=0.7))
    assert {s.token_id for s in nucleus} == {0, 1}
    alone = device_sample(logits[:20], sampling_rows(20, top_p=0.7))
    assert [s.token_id for s in alone] == [s.token_id for s in nucleus[:20]]


def test_banned_tokens_are_never_chosen_on_the_device():
    logits = randn(8, 300, seed=23).cpu()
    logits[:, 37] = logits.max() + 20  # every row's favourite, banned in the odd rows
    for settings in ({"temperature": 0.0}, {"temperature": 1.0}, {"top_p": 0.9}):
        rows = [
            dataclasses.replace(row, banned_token_ids=(37, 299) if i % 2 else ())
            for i, row in enumerate(sampling_rows(8, **settings))
        ]
        got = device_sample(logits, rows)
        assert [s.token_id for s in got] == [s.token_id for s in sample(logits, rows)]
        assert all((s.token_id == 37) == (i % 2 == 0) for i, s in enumerate(got))


def test_token_bitmasks_restrict_the_choice_on_the_device():
    import numpy as np

    class OnlyOdd:
        def __call__(self, token_ids, logits):
            return logits

        def token_bitmask(self, token_ids):
            return np.full(3, np.uint32(0xAAAAAAAA).view(np.int32), dtype=np.int32)

    logits = randn(8, 80, seed=20).cpu()
    rows = sampling_rows(4, logits_processor=OnlyOdd()) + sampling_rows(
        4, top_p=0.5, logits_processor=OnlyOdd()
    )
    tokens = [s.token_id for s in device_sample(logits, rows)]
    assert all(t % 2 == 1 for t in tokens), tokens
    greedy = device_sample(logits, sampling_rows(8, temperature=0.0, logits_processor=OnlyOdd()))
    odd = logits.clone()
    odd[:, ::2] = float("-inf")
    assert [s.token_id for s in greedy] == odd.argmax(dim=-1).tolist()


def kernel_core(model: DeepseekModel, **overrides: object) -> EngineCore:
    settings: dict = {"model": model.config.name, "device": TEST_DEVICE, "max_num_seqs": 8}
    return EngineCore(EngineConfig(**(settings | overrides)), model)


def test_kernel_engine_matches_the_reference_engine(monkeypatch: pytest.MonkeyPatch):
    """The whole kernel path (prefill, decode buckets, chunked prefill) against the CPU path."""
    model = small_model("tiny")
    prompts = [[(37 * i + 11 * j) % 900 + 3 for j in range(3 + 5 * i)] for i in range(3)]
    requests = [GenerationRequest(prompt_ids=p, max_tokens=3, temperature=0.0) for p in prompts]
    ours = kernel_core(model).generate(requests)
    chunked = kernel_core(model, max_num_batched_tokens=5).generate(requests)
    monkeypatch.setattr(kernel_package, "on_cpu", False)
    reference = EngineCore(EngineConfig(model="tiny", max_num_seqs=8), model.cpu()).generate(
        requests
    )
    assert [r.token_ids for r in ours] == [r.token_ids for r in reference]
    assert [r.token_ids for r in chunked] == [r.token_ids for r in reference]
