"""A DeepSeek-V3-style decoder: RMSNorm, RoPE, multi-head latent attention over a paged cache, MoE.

Parameter names and shapes follow the Hugging Face `DeepseekV3ForCausalLM` layout, so a state dict
moves between the two unchanged. The modules' `forward` methods are the reference (CPU) path:
every matrix product goes through `invariant_matmul` and every query token attends over exactly
its own causal prefix, so a sequence's logits are bit-identical whatever else is in the batch. The
GPU path computes the same with fused Triton kernels (`deepseek_recipe_engine/fused.py`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from torch import nn

from deepseek_recipe_engine.config import ModelConfig

# BLAS libraries pick different kernels (and reduction orders) for GEMMs with few rows; from this
# many rows on, each row's result was found not to depend on the row count (see docs/engine.md).
MIN_GEMM_ROWS = 16


def invariant_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """`a @ b` where each row of the result does not depend on how many rows `a` has: padding to
    `MIN_GEMM_ROWS` rows keeps BLAS on kernels whose rows are independent."""
    rows = a.shape[-2]
    if rows >= MIN_GEMM_ROWS:
        return a @ b
    padding = a.new_zeros(*a.shape[:-2], MIN_GEMM_ROWS - rows, a.shape[-1])
    return (torch.cat([a, padding], dim=-2) @ b)[..., :rows, :]


# Vectorised elementwise kernels finish a tensor's last (numel % vector width) elements with scalar
# code whose transcendental functions round differently; padding to a multiple of this keeps every
# element on the vector path, wherever it sits in the batch.
ELEMENTWISE_PAD = 64


def invariant_elementwise(
    fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor
) -> torch.Tensor:
    """`fn(x)` for an elementwise `fn`, so that no element's result depends on the tensor size."""
    flat = x.reshape(-1)
    padding = -flat.numel() % ELEMENTWISE_PAD
    if padding:
        flat = torch.cat([flat, flat.new_zeros(padding)])
    return fn(flat)[: x.numel()].view(x.shape)


class Linear(nn.Module):
    """A bias-free linear layer computed with `invariant_matmul`."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Project the last dimension of `x`."""
        flat = x.reshape(-1, x.shape[-1])
        return invariant_matmul(flat, self.weight.t()).reshape(*x.shape[:-1], self.weight.shape[0])


class RMSNorm(nn.Module):
    """Root-mean-square normalisation with a learned scale."""

    def __init__(self, size: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Normalise the last dimension of `x`."""
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * invariant_elementwise(torch.rsqrt, variance + self.eps))


class RotaryEmbedding(nn.Module):
    """Rotary position embedding over interleaved pairs `(x0, x1), (x2, x3), ...` (DeepSeek layout).

    The output lists the rotated first members of each pair, then the second members; queries and
    keys get the same permutation, so their dot products are those of the interleaved rotation.
    """

    def __init__(self, dim: int, theta: float, max_positions: int) -> None:
        super().__init__()
        inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
        freqs = torch.arange(max_positions, dtype=torch.float32)[:, None] * inv_freq[None, :]
        self.cos = nn.Buffer(freqs.cos(), persistent=False)
        self.sin = nn.Buffer(freqs.sin(), persistent=False)

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """Rotate `x` of shape [tokens, heads, dim] by the angles of `positions` [tokens]."""
        cos = self.cos[positions][:, None, :]
        sin = self.sin[positions][:, None, :]
        first, second = x[..., 0::2], x[..., 1::2]
        return torch.cat([first * cos - second * sin, second * cos + first * sin], dim=-1)


@dataclass
class StepInput:
    """The tokens of one step, flattened over sequences, and where each sequence's cache lives."""

    input_ids: torch.Tensor  # [tokens] ids to compute this step
    positions: torch.Tensor  # [tokens] absolute position of each id
    slot_mapping: torch.Tensor  # [tokens] cache slot that receives each id's latent
    query_lens: list[int]  # tokens per sequence, in order
    context_slots: list[torch.Tensor]  # per sequence: cache slots of positions 0..last computed


class MultiHeadLatentAttention(nn.Module):
    """MLA (DeepSeek-V2/V3): keys and values are rebuilt from a cached low-rank latent.

    The cache holds, per token, the normalised latent `c` (kv_lora_rank) and the rotary key shared
    by all heads. Attention runs in latent space ("absorbed" form): queries are mapped through the
    key half of `kv_b_proj`, scores are `q_lat . c + q_rope . k_rope`, and the value half of
    `kv_b_proj` is applied once to the attention-weighted latent. The two score terms are one
    product of `[q_lat | q_rope]` with the cached `[c | k_rope]`.
    """

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        heads, hidden = config.num_heads, config.hidden_size
        if config.q_lora_rank is None:
            self.q_proj = Linear(hidden, heads * config.qk_head_dim)
        else:
            self.q_a_proj = Linear(hidden, config.q_lora_rank)
            self.q_a_layernorm = RMSNorm(config.q_lora_rank, config.rms_norm_eps)
            self.q_b_proj = Linear(config.q_lora_rank, heads * config.qk_head_dim)
        self.kv_a_proj_with_mqa = Linear(hidden, config.latent_dim)
        self.kv_a_layernorm = RMSNorm(config.kv_lora_rank, config.rms_norm_eps)
        self.kv_b_proj = Linear(
            config.kv_lora_rank, heads * (config.qk_nope_head_dim + config.v_head_dim)
        )
        self.o_proj = Linear(heads * config.v_head_dim, hidden)
        self.scale = config.qk_head_dim**-0.5

    def _queries(self, x: torch.Tensor) -> torch.Tensor:
        if self.config.q_lora_rank is None:
            q = self.q_proj(x)
        else:
            q = self.q_b_proj(self.q_a_layernorm(self.q_a_proj(x)))
        return q.view(x.shape[0], self.config.num_heads, self.config.qk_head_dim)

    def forward(
        self, x: torch.Tensor, step: StepInput, rope: RotaryEmbedding, cache: torch.Tensor
    ) -> torch.Tensor:
        """Attend the step's tokens [tokens, hidden]; writes their latents into `cache` first."""
        cfg = self.config
        nope, rank = cfg.qk_nope_head_dim, cfg.kv_lora_rank
        q = self._queries(x)
        q_nope, q_rope = q[..., :nope], rope(q[..., nope:], step.positions)
        kv = self.kv_a_proj_with_mqa(x)
        latent = self.kv_a_layernorm(kv[:, :rank])
        k_rope = rope(kv[:, None, rank:], step.positions)[:, 0]
        cache.index_copy_(0, step.slot_mapping, torch.cat([latent, k_rope], dim=-1))

        w_kv = self.kv_b_proj.weight.view(cfg.num_heads, nope + cfg.v_head_dim, rank)
        q_latent = invariant_matmul(q_nope.transpose(0, 1), w_kv[:, :nope, :]).transpose(0, 1)
        # One query row per (token, head) over the cached [latent | rotary key], scale folded in.
        queries = torch.cat([q_latent, q_rope], dim=-1) * self.scale
        attended = self._attend(queries, step, cache)
        values = invariant_matmul(attended, w_kv[:, nope:, :].transpose(1, 2))
        return self.o_proj(values.transpose(0, 1).reshape(x.shape[0], -1))

    def _attend(self, queries: torch.Tensor, step: StepInput, cache: torch.Tensor) -> torch.Tensor:
        """Each query token over exactly its causal prefix (positions 0..its own), so its reduction
        shapes depend on its position alone: not on the step's other tokens, nor on how its
        prompt was split into chunks. `queries` [tokens, heads, latent]; returns
        [heads, tokens, kv_lora_rank]."""
        rank = self.config.kv_lora_rank
        positions = step.positions.tolist()
        outputs, row = [], 0
        for length, slots in zip(step.query_lens, step.context_slots, strict=True):
            context = cache[slots]
            for position in positions[row : row + length]:
                visible = context[: position + 1]
                scores = invariant_matmul(queries[row], visible.t())
                probs = torch.softmax(scores, dim=-1)
                outputs.append(invariant_matmul(probs, visible[:, :rank]))
                row += 1
        return torch.stack(outputs).transpose(0, 1)


class MLP(nn.Module):
    """SwiGLU feed-forward."""

    def __init__(self, hidden: int, intermediate: int) -> None:
        super().__init__()
        self.gate_proj = Linear(hidden, intermediate)
        self.up_proj = Linear(hidden, intermediate)
        self.down_proj = Linear(intermediate, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Apply the feed-forward to [tokens, hidden]."""
        return self.down_proj(invariant_elementwise(F.silu, self.gate_proj(x)) * self.up_proj(x))


class TopkRouter(nn.Module):
    """Sigmoid router with a score-correction bias and group-limited top-k (DeepSeek-V3)."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        self.weight = nn.Parameter(torch.empty(config.n_routed_experts, config.hidden_size))
        self.e_score_correction_bias = nn.Buffer(torch.zeros(config.n_routed_experts))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Return (weights, expert indices), each [tokens, num_experts_per_tok]."""
        cfg = self.config
        scores = invariant_elementwise(torch.sigmoid, invariant_matmul(x, self.weight.t()))
        choice = scores + self.e_score_correction_bias
        grouped = choice.view(-1, cfg.n_group, cfg.n_routed_experts // cfg.n_group)
        best = grouped.topk(min(2, grouped.shape[-1]), dim=-1)[0]
        group_scores = functools.reduce(torch.add, best.unbind(-1))
        groups = group_scores.topk(cfg.topk_group, dim=-1)[1]
        group_mask = torch.zeros_like(group_scores).scatter_(1, groups, 1.0).bool()
        expert_mask = group_mask[:, :, None].expand_as(grouped).reshape(-1, cfg.n_routed_experts)
        choice = choice.masked_fill(~expert_mask, float("-inf"))
        indices = choice.topk(cfg.num_experts_per_tok, dim=-1)[1]
        weights = scores.gather(1, indices)
        if cfg.norm_topk_prob:
            # Summed left to right, so no reduction kernel picks an order from the batch size.
            total = functools.reduce(torch.add, weights.unbind(-1))
            weights = weights / (total[:, None] + 1e-20)
        return weights * cfg.routed_scaling_factor, indices


class Experts(nn.Module):
    """Routed experts as stacked weights: `gate_up_proj` [E, 2I, H], `down_proj` [E, H, I]."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        experts, hidden, inter = (
            config.n_routed_experts,
            config.hidden_size,
            config.moe_intermediate_size,
        )
        self.gate_up_proj = nn.Parameter(torch.empty(experts, 2 * inter, hidden))
        self.down_proj = nn.Parameter(torch.empty(experts, hidden, inter))

    def forward(
        self, x: torch.Tensor, weights: torch.Tensor, indices: torch.Tensor
    ) -> torch.Tensor:
        """Sum each token's chosen experts, weighted, in expert-index order: a loop over the
        active experts, each added into the output in turn."""
        out = torch.zeros_like(x)
        for expert in indices.unique().tolist():
            token_idx, slot = torch.where(indices == expert)
            gate_up = invariant_matmul(x[token_idx], self.gate_up_proj[expert].t())
            gate, up = gate_up.chunk(2, dim=-1)
            activated = invariant_elementwise(F.silu, gate) * up
            hidden = invariant_matmul(activated, self.down_proj[expert].t())
            out.index_add_(0, token_idx, hidden * weights[token_idx, slot, None])
        return out


class MoE(nn.Module):
    """Mixture of experts: routed experts plus always-on shared experts."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.gate = TopkRouter(config)
        self.experts = Experts(config)
        self.shared_experts = MLP(
            config.hidden_size, config.moe_intermediate_size * config.n_shared_experts
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Apply the mixture to [tokens, hidden]."""
        weights, indices = self.gate(x)
        return self.experts(x, weights, indices) + self.shared_experts(x)


class DecoderLayer(nn.Module):
    """Pre-norm block: attention then feed-forward (dense for the first layers, MoE after)."""

    def __init__(self, config: ModelConfig, index: int) -> None:
        super().__init__()
        self.self_attn = MultiHeadLatentAttention(config)
        self.mlp: nn.Module = (
            MLP(config.hidden_size, config.intermediate_size)
            if index < config.first_k_dense_replace
            else MoE(config)
        )
        self.input_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)

    def forward(
        self, x: torch.Tensor, step: StepInput, rope: RotaryEmbedding, cache: torch.Tensor
    ) -> torch.Tensor:
        """Run the block on [tokens, hidden]."""
        x = x + self.self_attn(self.input_layernorm(x), step, rope, cache)
        return x + self.mlp(self.post_attention_layernorm(x))


class DecoderBody(nn.Module):
    """Embedding, decoder layers and final norm (the `model.` prefix of the state dict)."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(config, i) for i in range(config.num_layers))
        self.norm = RMSNorm(config.hidden_size, config.rms_norm_eps)


class WeightsMismatchError(ValueError):
    """A weights file does not fit the model config: missing, unexpected or mis-shaped tensors."""


class DeepseekModel(nn.Module):
    """The causal language model: token ids in, next-token logits out."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        self.model = DecoderBody(config)
        self.lm_head = Linear(config.hidden_size, config.vocab_size)
        self.rope = RotaryEmbedding(
            config.qk_rope_head_dim, config.rope_theta, config.max_position_embeddings
        )

    @torch.no_grad()
    def init_weights(self, seed: int) -> DeepseekModel:
        """Fill every weight deterministically from `seed` (normal, std 1/sqrt(fan_in))."""
        generator = torch.Generator().manual_seed(seed)
        for name, tensor in sorted(self.state_dict(keep_vars=True).items()):
            if name.endswith("layernorm.weight") or name.endswith("norm.weight"):
                tensor.fill_(1.0)
            elif name.endswith("e_score_correction_bias"):
                tensor.zero_()
            elif name == "model.embed_tokens.weight":
                tensor.normal_(0.0, 1.0, generator=generator)
            else:
                tensor.normal_(0.0, tensor.shape[-1] ** -0.5, generator=generator)
        return self

    def kv_cache_shape(self, num_slots: int) -> tuple[int, int, int]:
        """Shape of the paged latent cache: [layers, slots, kv_lora_rank + rope dim]."""
        return (self.config.num_layers, num_slots, self.config.latent_dim)

    @torch.no_grad()
    def forward(self, step: StepInput, kv_cache: torch.Tensor) -> torch.Tensor:
        """Compute the step's tokens; return the hidden state of each sequence's last token."""
        x = self.model.embed_tokens(step.input_ids)
        for layer, cache in zip(self.model.layers, kv_cache, strict=True):
            x = layer(x, step, self.rope, cache)
        last_rows = torch.tensor(step.query_lens).cumsum(0) - 1
        return self.model.norm(x[last_rows])

    @torch.no_grad()
    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """Vocabulary logits [sequences, vocab] for final hidden states, in float32."""
        return self.lm_head(hidden).float()

    def save(self, path: str | Path) -> None:
        """Write all weights to a safetensors file."""
        tensors = {k: v.detach().contiguous() for k, v in self.state_dict().items()}
        save_file(tensors, str(path), metadata={"config": self.config.name})

    @torch.no_grad()
    def load(self, path: str | Path) -> DeepseekModel:
        """Load weights from a safetensors file; raise `WeightsMismatchError` if they don't fit."""
        loaded = load_file(str(path))
        expected = self.state_dict()
        problems = [
            f"missing tensor {k} {list(v.shape)}" for k, v in expected.items() if k not in loaded
        ]
        problems += [f"unexpected tensor {k}" for k in loaded if k not in expected]
        problems += [
            f"tensor {k}: file has shape {list(loaded[k].shape)}, "
            f"config {self.config.name!r} needs {list(v.shape)}"
            for k, v in expected.items()
            if k in loaded and loaded[k].shape != v.shape
        ]
        if problems:
            listed = "\n  ".join(problems[:20])
            more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
            raise WeightsMismatchError(
                f"weights file {path} does not match model config {self.config.name!r}:"
                f"\n  {listed}{more}"
            )
        self.load_state_dict(loaded)
        return self
