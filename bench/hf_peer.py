"""Hugging Face `DeepseekV3ForCausalLM` holding the same weights as an engine model (bench peer)."""

from __future__ import annotations

import torch
from transformers import DeepseekV3Config, DeepseekV3ForCausalLM

from deepseek_recipe_engine.model import DeepseekModel


def hf_config(model: DeepseekModel) -> DeepseekV3Config:
    """The transformers config describing the same architecture as `model`."""
    cfg = model.config
    return DeepseekV3Config(
        vocab_size=cfg.vocab_size,
        hidden_size=cfg.hidden_size,
        intermediate_size=cfg.intermediate_size,
        moe_intermediate_size=cfg.moe_intermediate_size,
        num_hidden_layers=cfg.num_layers,
        num_attention_heads=cfg.num_heads,
        num_key_value_heads=cfg.num_heads,
        n_shared_experts=cfg.n_shared_experts,
        n_routed_experts=cfg.n_routed_experts,
        routed_scaling_factor=cfg.routed_scaling_factor,
        kv_lora_rank=cfg.kv_lora_rank,
        q_lora_rank=cfg.q_lora_rank,
        qk_rope_head_dim=cfg.qk_rope_head_dim,
        v_head_dim=cfg.v_head_dim,
        qk_nope_head_dim=cfg.qk_nope_head_dim,
        n_group=cfg.n_group,
        topk_group=cfg.topk_group,
        num_experts_per_tok=cfg.num_experts_per_tok,
        first_k_dense_replace=cfg.first_k_dense_replace,
        norm_topk_prob=cfg.norm_topk_prob,
        max_position_embeddings=cfg.max_position_embeddings,
        rms_norm_eps=cfg.rms_norm_eps,
        rope_parameters={"rope_type": "default", "rope_theta": cfg.rope_theta},
        rope_interleave=True,
        tie_word_embeddings=False,
        num_mtp_layers=0,
        eos_token_id=None,
        pad_token_id=0,
    )


def hf_model(model: DeepseekModel) -> DeepseekV3ForCausalLM:
    """A transformers model loaded with exactly `model`'s weights (strict: every key must match),
    on `model`'s device and in its dtype."""
    peer = DeepseekV3ForCausalLM(hf_config(model)).eval()
    peer.load_state_dict(model.state_dict(), strict=True)
    weight = next(model.parameters())
    # transformers wraps `to`; pyright misreads the wrapper's signature
    return peer.to(weight.device, weight.dtype)  # pyright: ignore[reportArgumentType]


@torch.no_grad()
def hf_logits(peer: DeepseekV3ForCausalLM, prompt_ids: list[int]) -> torch.Tensor:
    """Next-token logits of `peer` after `prompt_ids` (full forward, no cache)."""
    device = next(peer.parameters()).device
    return peer(torch.tensor([prompt_ids], device=device)).logits[0, -1].float()
