"""Shared fixtures for the engine tests: one seeded model, fresh engines around it.

The model and device default to `tiny` on the CPU; `ENGINE_TEST_MODEL` and `ENGINE_TEST_DEVICE`
choose others (e.g. `ENGINE_TEST_DEVICE=cuda ENGINE_TEST_MODEL=medium` on a GPU machine, where the
batch-invariance tests then check the GPU kernels), and `ENGINE_TEST_DTYPE=bfloat16` the GPU
path's bf16 mode.
"""

import os
from collections.abc import Callable

import pytest
import torch

from deepseek_recipe_engine.config import EngineConfig
from deepseek_recipe_engine.engine import EngineCore, build_model
from deepseek_recipe_engine.model import DeepseekModel

torch.set_num_threads(1)

TEST_MODEL = os.environ.get("ENGINE_TEST_MODEL", "tiny")
TEST_DEVICE = os.environ.get("ENGINE_TEST_DEVICE", "cpu")
TEST_DTYPE = os.environ.get("ENGINE_TEST_DTYPE", "float32")


def engine_config(**overrides: object) -> EngineConfig:
    """An engine config on the test model and device, with `overrides` applied."""
    settings: dict[str, object] = {
        "model": TEST_MODEL,
        "device": TEST_DEVICE,
        "dtype": TEST_DTYPE,
    } | overrides
    return EngineConfig(**settings)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def tiny_model() -> DeepseekModel:
    return build_model(engine_config())


@pytest.fixture
def make_core(tiny_model: DeepseekModel) -> Callable[..., EngineCore]:
    def make(**overrides: object) -> EngineCore:
        return EngineCore(engine_config(**overrides), tiny_model)

    return make
