"""Configuration dataclasses: model sizes (a registry of named configs) and engine limits."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

from deepseek_recipe import Tokenizer


def tokenizer_json() -> str:
    """The V4 `tokenizer.json` text: the copy bundled with deepseek_recipe, or the file named by
    the environment variable `RECIPE_TOKENIZER`."""
    override = os.environ.get("RECIPE_TOKENIZER")
    if override:
        return Path(override).read_text(encoding="utf-8")
    return Tokenizer.deepseek_v4_json()


@cache
def v4_vocab_size() -> int:
    """Vocabulary size of the V4 tokenizer: one more than the largest id it defines."""
    data = json.loads(tokenizer_json())
    ids = list(data["model"]["vocab"].values()) + [t["id"] for t in data.get("added_tokens", [])]
    return max(ids) + 1


@dataclass(frozen=True)
class ModelConfig:
    """Shape of a DeepSeek-V3-style decoder (MLA attention, MoE with shared experts)."""

    name: str
    hidden_size: int
    num_layers: int
    num_heads: int
    q_lora_rank: int | None  # None: queries are projected directly from the hidden state
    kv_lora_rank: int  # width of the compressed KV latent stored in the cache
    qk_nope_head_dim: int
    qk_rope_head_dim: int  # width of the decoupled rotary key, shared by all heads
    v_head_dim: int
    intermediate_size: int  # feed-forward width of the first (dense) layers
    moe_intermediate_size: int  # width of each routed and shared expert
    n_routed_experts: int
    n_shared_experts: int
    num_experts_per_tok: int
    first_k_dense_replace: int  # the first k layers use a dense feed-forward instead of MoE
    n_group: int = 1  # expert groups for group-limited routing
    topk_group: int = 1
    routed_scaling_factor: float = 1.0
    norm_topk_prob: bool = True
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0
    max_position_embeddings: int = 4096
    vocab_size: int = field(default_factory=v4_vocab_size)

    @property
    def qk_head_dim(self) -> int:
        """Per-head query/key width: the non-rotary part plus the rotary part."""
        return self.qk_nope_head_dim + self.qk_rope_head_dim

    @property
    def latent_dim(self) -> int:
        """Floats cached per token and layer: the KV latent plus the rotary key."""
        return self.kv_lora_rank + self.qk_rope_head_dim


MODEL_CONFIGS: dict[str, ModelConfig] = {
    config.name: config
    for config in (
        ModelConfig(
            name="tiny",
            hidden_size=64,
            num_layers=2,
            num_heads=4,
            q_lora_rank=None,
            kv_lora_rank=32,
            qk_nope_head_dim=16,
            qk_rope_head_dim=8,
            v_head_dim=16,
            intermediate_size=128,
            moe_intermediate_size=32,
            n_routed_experts=8,
            n_shared_experts=1,
            num_experts_per_tok=2,
            first_k_dense_replace=1,
        ),
        ModelConfig(
            name="small",
            hidden_size=256,
            num_layers=4,
            num_heads=8,
            q_lora_rank=128,
            kv_lora_rank=64,
            qk_nope_head_dim=32,
            qk_rope_head_dim=16,
            v_head_dim=32,
            intermediate_size=512,
            moe_intermediate_size=128,
            n_routed_experts=16,
            n_shared_experts=1,
            num_experts_per_tok=4,
            first_k_dense_replace=1,
            n_group=4,
            topk_group=2,
            routed_scaling_factor=2.5,
        ),
        ModelConfig(
            name="medium",  # ~1.7 B parameters: sized for one GPU
            hidden_size=2048,
            num_layers=12,
            num_heads=16,
            q_lora_rank=768,
            kv_lora_rank=512,
            qk_nope_head_dim=128,
            qk_rope_head_dim=64,
            v_head_dim=128,
            intermediate_size=8192,
            moe_intermediate_size=512,
            n_routed_experts=32,
            n_shared_experts=2,
            num_experts_per_tok=4,
            first_k_dense_replace=1,
            n_group=8,
            topk_group=4,
            routed_scaling_factor=2.5,
        ),
    )
}


def model_config(name: str = "tiny", **overrides: object) -> ModelConfig:
    """Look up a named model config, optionally overriding fields."""
    if name not in MODEL_CONFIGS:
        raise KeyError(f"unknown model config {name!r}; known: {sorted(MODEL_CONFIGS)}")
    return replace(MODEL_CONFIGS[name], **overrides)  # type: ignore[arg-type]


@dataclass(frozen=True)
class EngineConfig:
    """Limits of one engine: KV-cache blocks, batch size, sequence length, device."""

    model: str = "tiny"
    block_size: int = 16  # tokens per KV-cache block
    num_blocks: int = 1024  # KV-cache blocks per layer
    max_num_seqs: int = 64  # most sequences running at once
    max_num_batched_tokens: int = 4096  # most tokens computed in one step
    max_model_len: int = 2048  # prompt plus completion, per sequence
    device: str = "cpu"
    dtype: str = "float32"  # or "bfloat16" (GPU path only)
    weights_seed: int = 0  # seed of the deterministic weight initialisation
    weights_path: str | None = None  # a safetensors file to load instead
