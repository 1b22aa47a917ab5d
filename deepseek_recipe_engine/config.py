"""Configuration dataclasses: model sizes (named configs, package data) and engine limits."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from deepseek_recipe import Tokenizer

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable


def tokenizer_json() -> str:
    """The engine's vocabulary as `tokenizer.json` text: the V4 tokenizer bundled with
    deepseek_recipe (or the file named by the environment variable `RECIPE_TOKENIZER`) plus the
    V4.1 special tokens it lacks, so that V4 and V4.1 prompts both fit the model."""
    override = os.environ.get("RECIPE_TOKENIZER")
    if override:
        return Tokenizer.json_with_v41_special_tokens(Path(override).read_text(encoding="utf-8"))
    return Tokenizer.deepseek_v41_json()


@cache
def engine_vocab_size() -> int:
    """Vocabulary size of the engine's tokenizer: one more than the largest id it defines."""
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
    max_position_embeddings: int = 163840  # positions of the RoPE table (DeepSeek-V3's value)
    vocab_size: int = field(default_factory=engine_vocab_size)

    @property
    def qk_head_dim(self) -> int:
        """Per-head query/key width: the non-rotary part plus the rotary part."""
        return self.qk_nope_head_dim + self.qk_rope_head_dim

    @property
    def latent_dim(self) -> int:
        """Floats cached per token and layer: the KV latent plus the rotary key."""
        return self.kv_lora_rank + self.qk_rope_head_dim


MODEL_CONFIG_DIR = "model_configs"
"""Package data folder of the named model configs: `<name>.json` holds the fields of `ModelConfig`
that differ from its defaults (sizes in docs/engine.md)."""


def _config_files() -> dict[str, Traversable]:
    folder = resources.files("deepseek_recipe_engine").joinpath(MODEL_CONFIG_DIR)
    return {
        entry.name.removesuffix(".json"): entry
        for entry in folder.iterdir()
        if entry.name.endswith(".json")
    }


def model_config_names() -> list[str]:
    """The names of the bundled model configs, sorted."""
    return sorted(_config_files())


def model_config(name: str = "tiny", **overrides: object) -> ModelConfig:
    """The bundled config `name` (`model_configs/<name>.json`), optionally overriding fields."""
    files = _config_files()
    if name not in files:
        raise KeyError(f"unknown model config {name!r}; known: {sorted(files)}")
    fields = json.loads(files[name].read_text(encoding="utf-8"))
    return ModelConfig(name=name, **{**fields, **overrides})


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
