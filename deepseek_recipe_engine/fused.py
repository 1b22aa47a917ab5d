"""The decoder's forward on the GPU path: the model's weights through the Triton kernels of
`deepseek_recipe_engine.kernels`.

It computes what `DeepseekModel.forward` computes, with fused kernels and static shapes: no host
synchronisation and no shape that depends on the data, so a step can be captured in a CUDA graph.
Every kernel works row by row with a fixed reduction order (a token's result never depends on the
other tokens of the step), and attention reads the paged cache through block tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import torch
import torch.nn.functional as F

from deepseek_recipe_engine.kernels.attention import paged_attention
from deepseek_recipe_engine.kernels.experts import route, routed_experts, swiglu
from deepseek_recipe_engine.kernels.matmul import matmul
from deepseek_recipe_engine.kernels.norm import latent_to_cache, rmsnorm
from deepseek_recipe_engine.model import MLP, DecoderLayer, DeepseekModel, MoE


@dataclass(frozen=True)
class KernelStep:
    """One step's tokens on the device, laid out for the kernels (int32 tensors)."""

    input_ids: torch.Tensor  # [tokens]
    positions: torch.Tensor  # [tokens]
    slots: torch.Tensor  # [tokens] cache slot receiving each token's latent
    token_seqs: torch.Tensor  # [tokens] row of `block_tables` of each token's sequence
    block_tables: torch.Tensor  # [sequences, blocks] (any strides)
    last_rows: torch.Tensor | None  # [sequences] each sequence's last token; None: every token


class FusedForward:
    """The forward of a `DeepseekModel` (already on its device and dtype) through the kernels.

    The query and latent projections of a layer share their input, so their weights are
    concatenated once into one product; the router runs in fp32, as in transformers.
    """

    def __init__(self, model: DeepseekModel, block_size: int) -> None:
        self.model = model
        self.config = model.config
        self.block_size = block_size
        self.cos = model.rope.cos.contiguous()
        self.sin = model.rope.sin.contiguous()
        self.layers = [cast(DecoderLayer, layer) for layer in model.model.layers]
        self.input_weights = [_input_projection(layer) for layer in self.layers]
        self.router_weights = [
            layer.mlp.gate.weight.float().t() if isinstance(layer.mlp, MoE) else None
            for layer in self.layers
        ]

    @torch.no_grad()
    def logits(self, step: KernelStep, kv_cache: torch.Tensor) -> torch.Tensor:
        """Next-token logits [sequences, vocab] (fp32) of each sequence's last token; writes the
        step's latents into `kv_cache` [layers, slots, latent]."""
        body, eps = self.model.model, self.config.rms_norm_eps
        x = F.embedding(step.input_ids, body.embed_tokens.weight)
        delta = None
        for index, layer in enumerate(self.layers):
            hidden, x = rmsnorm(x, layer.input_layernorm.weight, eps, delta)
            delta = self._attention(index, layer, hidden, step, kv_cache[index])
            hidden, x = rmsnorm(x, layer.post_attention_layernorm.weight, eps, delta)
            delta = self._feed_forward(index, layer, hidden)
        assert delta is not None, "a model has at least one layer"
        if step.last_rows is not None:
            x, delta = x[step.last_rows], delta[step.last_rows]
        hidden, _ = rmsnorm(x, body.norm.weight, eps, delta)
        return matmul(hidden, self.model.lm_head.weight.t(), out_dtype=torch.float32)

    def _attention(
        self,
        index: int,
        layer: DecoderLayer,
        hidden: torch.Tensor,
        step: KernelStep,
        cache: torch.Tensor,
    ) -> torch.Tensor:
        cfg, attn = self.config, layer.self_attn
        heads, nope, rank = cfg.num_heads, cfg.qk_nope_head_dim, cfg.kv_lora_rank
        tokens = hidden.shape[0]
        projected = matmul(hidden, self.input_weights[index])
        split = projected.shape[1] - cfg.latent_dim
        queries, kv = projected[:, :split], projected[:, split:]
        if cfg.q_lora_rank is not None:
            normed, _ = rmsnorm(queries, attn.q_a_layernorm.weight, cfg.rms_norm_eps)
            queries = matmul(normed, attn.q_b_proj.weight.t())
        latent_to_cache(
            kv,
            attn.kv_a_layernorm.weight,
            cfg.rms_norm_eps,
            step.positions,
            step.slots,
            self.cos,
            self.sin,
            cache,
        )
        per_head = queries.unflatten(1, (heads, cfg.qk_head_dim))
        w_kv = attn.kv_b_proj.weight.view(heads, nope + cfg.v_head_dim, rank)
        q_latent = hidden.new_empty(tokens, heads, rank)
        matmul(per_head[..., :nope].transpose(0, 1), w_kv[:, :nope], out=q_latent.transpose(0, 1))
        attended = paged_attention(
            q_latent,
            per_head[..., nope:],
            step.positions,
            step.token_seqs,
            step.block_tables,
            self.block_size,
            self.cos,
            self.sin,
            cache,
            attn.scale,
            out=hidden.new_empty(tokens, heads, rank),
        )
        values = hidden.new_empty(tokens, heads, cfg.v_head_dim)
        matmul(attended.transpose(0, 1), w_kv[:, nope:].transpose(1, 2), out=values.transpose(0, 1))
        return matmul(values.view(tokens, -1), attn.o_proj.weight.t())

    def _feed_forward(self, index: int, layer: DecoderLayer, hidden: torch.Tensor) -> torch.Tensor:
        mlp = layer.mlp
        if isinstance(mlp, MLP):
            return _swiglu_mlp(mlp, hidden)
        assert isinstance(mlp, MoE)
        cfg = self.config
        router_weight = self.router_weights[index]
        assert router_weight is not None
        indices, weights = route(
            matmul(hidden.float(), router_weight),
            mlp.gate.e_score_correction_bias,
            groups=cfg.n_group,
            topk_group=cfg.topk_group,
            top_k=cfg.num_experts_per_tok,
            normalise=cfg.norm_topk_prob,
            scaling=cfg.routed_scaling_factor,
        )
        return routed_experts(
            hidden,
            indices,
            weights,
            mlp.experts.gate_up_proj,
            mlp.experts.down_proj,
            shared=_swiglu_mlp(mlp.shared_experts, hidden),
        )


def _swiglu_mlp(mlp: MLP, hidden: torch.Tensor) -> torch.Tensor:
    activated = swiglu(hidden, mlp.gate_proj.weight, mlp.up_proj.weight)
    return matmul(activated, mlp.down_proj.weight.t())


def _input_projection(layer: DecoderLayer) -> torch.Tensor:
    """[hidden, queries + latent]: the query projection (`q_a_proj` or `q_proj`) and
    `kv_a_proj_with_mqa` side by side, transposed for `matmul`."""
    attn = layer.self_attn
    query = attn.q_proj if attn.config.q_lora_rank is None else attn.q_a_proj
    return torch.cat([query.weight, attn.kv_a_proj_with_mqa.weight]).t()
