"""A DeepSeek-V3-style decoder: RMSNorm, RoPE, multi-head latent attention over a paged cache, MoE.

Parameter names and shapes follow the Hugging Face `DeepseekV3ForCausalLM` layout, so a state dict
moves between the two unchanged. Every matrix product goes through `invariant_matmul`, and attention
is computed per sequence, so a sequence's logits are bit-identical whatever else is in the batch.
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
    """`a @ b` where each row of the result does not depend on how many rows `a` has.

    On CUDA a Triton kernel with one fixed tiling does this; on the CPU, padding to
    `MIN_GEMM_ROWS` rows keeps BLAS on kernels whose rows are independent.
    """
    if a.is_cuda:
        from deepseek_recipe_engine.gpu_matmul import matmul

        return matmul(a, b)
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
    """`fn(x)` for an elementwise `fn`, so that no element's result depends on the tensor size.

    CUDA kernels compute every element with the same code, so only the CPU needs the padding.
    """
    if x.is_cuda:
        return fn(x)
    flat = x.reshape(-1)
    padding = -flat.numel() % ELEMENTWISE_PAD
    if padding:
        flat = torch.cat([flat, flat.new_zeros(padding)])
    return fn(flat)[: x.numel()].view(x.shape)


def invariant_row_mean(x: torch.Tensor) -> torch.Tensor:
    """The mean of the last dimension (kept as size 1), each row's independent of the row count.

    CUDA reductions split a row across more threads when there are few rows, which changes the
    summation order; there the sum is a product with a column of ones through `invariant_matmul`.
    """
    if not x.is_cuda:
        return x.mean(-1, keepdim=True)
    flat = x.reshape(-1, x.shape[-1])
    ones = flat.new_ones(x.shape[-1], 1)
    return (invariant_matmul(flat, ones) / x.shape[-1]).view(*x.shape[:-1], 1)


# Attention computes at most this many scores at once (64 MiB of float32): a long prompt attends
# in blocks of query rows, so its memory stays bounded whatever the context length.
MAX_ATTENTION_SCORES = 1 << 24


def query_blocks(first: int, length: int, heads: int, context: int) -> list[tuple[slice, int]]:
    """Blocks of the `length` queries at positions `first`, `first + 1`, ... over a context of
    `context` keys, each as (its rows, counted from the first query; the keys its positions can
    see), with at most about `MAX_ATTENTION_SCORES` scores per block (all `heads`).

    Blocks are aligned to absolute positions and rows attend independently, so a position gets
    the same block width and the same keys whichever rows a step computes (prefix-cache hits,
    preemption); a context that fits one block is attended whole, as without blocks.
    """
    width = max(MIN_GEMM_ROWS, MAX_ATTENTION_SCORES // max(1, heads * context))
    blocks = []
    for aligned in range(first - first % width, first + length, width):
        start, stop = max(aligned, first), min(aligned + width, first + length)
        blocks.append((slice(start - first, stop - first), min(context, aligned + width)))
    return blocks


def invariant_softmax(scores: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension of a CUDA tensor, each row's independent of the row count:
    the max is exact in any order, and the sum is a product with ones through `invariant_matmul`."""
    shifted = torch.exp(scores - scores.amax(-1, keepdim=True))
    flat = shifted.reshape(-1, shifted.shape[-1])
    total = invariant_matmul(flat, flat.new_ones(shifted.shape[-1], 1))
    return shifted / total.view(*shifted.shape[:-1], 1)


class Linear(nn.Module):
    """A bias-free linear layer computed with `invariant_matmul`."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Project the last dimension of `x`."""
        flat = x.reshape(-1, x.shape[-1])
        return invariant_matmul(flat, self.weight.t()).reshape(*x.shape[:-1], -1)


class RMSNorm(nn.Module):
    """Root-mean-square normalisation with a learned scale."""

    def __init__(self, size: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Normalise the last dimension of `x`."""
        variance = invariant_row_mean(x.pow(2))
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
    context_slots: list[torch.Tensor]  # per sequence: cache slots of positions 0..context_len-1
    # (empty when `padded_slots` is given)
    # CUDA only: every sequence's slots padded to one fixed width [sequences, width] (see
    # `MultiHeadLatentAttention`); None on the CPU
    padded_slots: torch.Tensor | None = None

    @functools.cached_property
    def padded_layout(self) -> PaddedLayout | None:
        """The index work of the fixed-width attention, done once per step for every layer
        (None without `padded_slots`)."""
        if self.padded_slots is None:
            return None
        device = self.padded_slots.device
        key_pos = torch.arange(self.padded_slots.shape[1], device=device)
        ends = torch.tensor(self.query_lens).cumsum(0)
        decode = [i for i, length in enumerate(self.query_lens) if length == 1]
        decode_rows = (ends[decode] - 1).to(device)
        prompts = []
        for i, length in enumerate(self.query_lens):
            if length > 1:
                rows = slice(int(ends[i]) - length, int(ends[i]))
                hidden = key_pos[None, None, :] > self.positions[rows][:, None, None]
                prompts.append((rows, self.padded_slots[i], hidden))
        return PaddedLayout(
            decode_rows=decode_rows,
            decode_slots=self.padded_slots[decode],
            decode_hidden=key_pos[None, None, :] > self.positions[decode_rows][:, None, None],
            prompts=prompts,
        )


@dataclass(frozen=True)
class PaddedLayout:
    """Where each sequence's queries and padded context are in a fixed-width attention step, and
    which keys each query must not see (later positions and padding)."""

    decode_rows: torch.Tensor  # [decodes] token rows of the single-token sequences
    decode_slots: torch.Tensor  # [decodes, width] their padded context slots
    decode_hidden: torch.Tensor  # [decodes, 1, width] keys each decode query must not see
    prompts: list[tuple[slice, torch.Tensor, torch.Tensor]]  # per prompt: rows, slots, hidden


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
        layout = step.padded_layout
        if layout is not None:
            attended = self._attend_fixed_width(queries, layout, cache)
        else:
            attended = self._attend_per_sequence(queries, step, cache)
        values = invariant_matmul(attended, w_kv[:, nope:, :].transpose(1, 2))
        return self.o_proj(values.transpose(0, 1).reshape(x.shape[0], -1))

    def _attend_per_sequence(
        self, queries: torch.Tensor, step: StepInput, cache: torch.Tensor
    ) -> torch.Tensor:
        """CPU attention: a loop over sequences, each on its own gathered context.

        `queries` [tokens, heads, latent]; returns [heads, tokens, kv_lora_rank].
        """
        cfg = self.config
        rank = cfg.kv_lora_rank
        outputs, start = [], 0
        for length, slots in zip(step.query_lens, step.context_slots, strict=True):
            first = int(step.positions[start])
            for block, keys in query_blocks(first, length, cfg.num_heads, len(slots)):
                rows = slice(start + block.start, start + block.stop)
                count, context = block.stop - block.start, cache[slots[:keys]]
                scores = invariant_matmul(queries[rows].reshape(-1, cfg.latent_dim), context.t())
                if length > 1:  # a lone query is the newest token and sees the whole context
                    # Keys up to the block's first position are visible to all of its rows.
                    lowest = first + block.start
                    scores = scores.view(count, cfg.num_heads, -1)
                    query_pos = step.positions[rows][:, None, None]
                    key_pos = torch.arange(lowest, keys, device=context.device)[None, None, :]
                    scores[..., lowest:].masked_fill_(key_pos > query_pos, float("-inf"))
                probs = torch.softmax(scores, dim=-1).view(count * cfg.num_heads, -1)
                outputs.append(invariant_matmul(probs, context[:, :rank]).view(count, -1, rank))
            start += length
        return torch.cat(outputs, dim=0).transpose(0, 1)

    def _attend_fixed_width(
        self, queries: torch.Tensor, layout: PaddedLayout, cache: torch.Tensor
    ) -> torch.Tensor:
        """CUDA attention over contexts padded to one fixed width (masked by position).

        Every score row has the same length whatever the batch, so the softmax and the products
        see the same shapes alone or in a batch; all single-token (decode) sequences attend in one
        batched product, and each prompt on its own. `queries` [tokens, heads, latent]; returns
        [heads, tokens, kv_lora_rank].
        """
        cfg, rank = self.config, self.config.kv_lora_rank
        attended = queries.new_empty(queries.shape[0], cfg.num_heads, rank)
        rows = layout.decode_rows
        if rows.numel():
            context = cache[layout.decode_slots]  # [decodes, width, latent]
            scores = invariant_matmul(queries[rows], context.transpose(1, 2))
            probs = invariant_softmax(scores.masked_fill(layout.decode_hidden, float("-inf")))
            attended[rows] = invariant_matmul(probs, context[..., :rank])
        for prompt_rows, slots, hidden in layout.prompts:
            length = prompt_rows.stop - prompt_rows.start
            context = cache[slots]  # [width, latent]
            # Every block attends the full width, so the blocks' alignment does not matter.
            for block, _ in query_blocks(0, length, cfg.num_heads, context.shape[0]):
                rows = slice(prompt_rows.start + block.start, prompt_rows.start + block.stop)
                count = block.stop - block.start
                flat_queries = queries[rows].reshape(-1, cfg.latent_dim)
                scores = invariant_matmul(flat_queries, context.t()).view(count, cfg.num_heads, -1)
                probs = invariant_softmax(scores.masked_fill(hidden[block], float("-inf")))
                flat = probs.view(count * cfg.num_heads, -1)
                attended[rows] = invariant_matmul(flat, context[:, :rank]).view(count, -1, rank)
        return attended.transpose(0, 1)


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
        """Sum each token's chosen experts, weighted, in expert-index order: grouped on CUDA (two
        batched products instead of a loop), looped on the CPU (only the active experts)."""
        if x.is_cuda:
            return self.forward_grouped(x, weights, indices)
        return self.forward_looped(x, weights, indices)

    def forward_grouped(
        self, x: torch.Tensor, weights: torch.Tensor, indices: torch.Tensor
    ) -> torch.Tensor:
        """`forward` as two batched products over every expert, each expert's tokens gathered into
        a zero-padded [experts, capacity, hidden] tensor; the same numbers as `forward_looped`
        wherever `invariant_matmul` rows do not depend on the row count."""
        tokens, top_k = indices.shape
        experts, hidden = self.gate_up_proj.shape[0], x.shape[1]
        flat = indices.reshape(-1)
        order = torch.argsort(flat, stable=True)  # choices grouped by expert
        counts = torch.bincount(flat, minlength=experts)
        capacity = int(counts.max())
        by_expert = flat[order]
        rank = torch.arange(flat.numel(), device=x.device) - (counts.cumsum(0) - counts)[by_expert]
        grouped = x.new_zeros(experts, capacity, hidden)
        grouped[by_expert, rank] = x[order // top_k]
        gate, up = invariant_matmul(grouped, self.gate_up_proj.transpose(1, 2)).chunk(2, dim=-1)
        activated = invariant_elementwise(F.silu, gate) * up
        expert_out = invariant_matmul(activated, self.down_proj.transpose(1, 2))
        chosen = torch.empty(flat.numel(), hidden, device=x.device, dtype=x.dtype)
        chosen[order] = expert_out[by_expert, rank]
        chosen = chosen.view(tokens, top_k, hidden) * weights[..., None]
        ascending = indices.argsort(dim=-1, stable=True)[..., None].expand_as(chosen)
        return functools.reduce(torch.add, chosen.gather(1, ascending).unbind(1))

    def forward_looped(
        self, x: torch.Tensor, weights: torch.Tensor, indices: torch.Tensor
    ) -> torch.Tensor:
        """`forward` as a loop over the active experts, each added into the output in turn."""
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
        last_rows = torch.tensor(step.query_lens, device=x.device).cumsum(0) - 1
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
