"""Seeded initialisation, safetensors round trip, clear errors on mismatched weights."""

import json

import pytest
import torch

from deepseek_recipe import Tokenizer
from deepseek_recipe_engine.config import (
    EngineConfig,
    engine_vocab_size,
    model_config,
    tokenizer_json,
)
from deepseek_recipe_engine.engine import EngineCore
from deepseek_recipe_engine.model import DeepseekModel, WeightsMismatchError
from deepseek_recipe_engine.request import GenerationRequest


def test_vocab_is_the_v4_tokenizer_vocab_plus_the_v41_special_tokens():
    data = json.loads(tokenizer_json())
    assert engine_vocab_size() == 129281
    assert model_config("tiny").vocab_size == engine_vocab_size()
    assert max(t["id"] for t in data["added_tokens"]) == engine_vocab_size() - 1
    assert Tokenizer.deepseek_v41().token_to_id("<｜System｜>") == 129280


def test_same_seed_same_weights_other_seed_other_weights(tiny_model):
    again = DeepseekModel(model_config("tiny")).init_weights(0)
    other = DeepseekModel(model_config("tiny")).init_weights(1)
    for name, tensor in tiny_model.state_dict().items():
        assert torch.equal(tensor, again.state_dict()[name]), name
    assert not torch.equal(tiny_model.lm_head.weight, other.lm_head.weight)


def test_safetensors_round_trip_gives_identical_generations(tiny_model, tmp_path, make_core):
    path = tmp_path / "tiny.safetensors"
    tiny_model.save(path)
    loaded_core = EngineCore(EngineConfig(weights_path=str(path), weights_seed=99))
    request_results = [
        core.generate([GenerationRequest(prompt_ids=[3, 4, 5], seed=1)])[0].token_ids
        for core in (loaded_core, make_core())
    ]
    assert request_results[0] == request_results[1]
    for name, tensor in tiny_model.state_dict().items():
        assert torch.equal(tensor, loaded_core.model.state_dict()[name]), name


def test_shape_mismatch_names_the_tensor_and_both_shapes(tiny_model, tmp_path):
    path = tmp_path / "tiny.safetensors"
    tiny_model.save(path)
    narrower = DeepseekModel(model_config("tiny", kv_lora_rank=16))
    with pytest.raises(WeightsMismatchError) as error:
        narrower.load(path)
    message = str(error.value)
    assert "model.layers.0.self_attn.kv_a_layernorm.weight" in message
    assert "file has shape [32]" in message and "needs [16]" in message


def test_missing_and_unexpected_tensors_are_reported(tiny_model, tmp_path):
    path = tmp_path / "tiny.safetensors"
    tiny_model.save(path)
    deeper = DeepseekModel(model_config("tiny", num_layers=3))
    with pytest.raises(WeightsMismatchError, match=r"missing tensor model\.layers\.2\."):
        deeper.load(path)
    shallower = DeepseekModel(model_config("tiny", num_layers=1))
    with pytest.raises(WeightsMismatchError, match=r"unexpected tensor model\.layers\.1\."):
        shallower.load(path)


def test_unknown_config_name_is_a_clear_error():
    with pytest.raises(KeyError, match="unknown model config 'huge'"):
        model_config("huge")
