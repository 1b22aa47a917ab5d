"""Shared fixtures for the engine tests: one seeded tiny model, fresh engines around it."""

from collections.abc import Callable

import pytest
import torch

from engine.config import EngineConfig
from engine.engine import EngineCore, build_model
from engine.model import DeepseekModel

torch.set_num_threads(1)


@pytest.fixture(scope="session")
def tiny_model() -> DeepseekModel:
    return build_model(EngineConfig())


@pytest.fixture
def make_core(tiny_model: DeepseekModel) -> Callable[..., EngineCore]:
    def make(**overrides: object) -> EngineCore:
        return EngineCore(EngineConfig(**overrides), tiny_model)  # type: ignore[arg-type]

    return make
