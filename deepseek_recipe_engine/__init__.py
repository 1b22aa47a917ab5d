"""Reference inference engine (PyTorch): a DeepSeek-V3-style model served over token ids."""

from deepseek_recipe_engine.config import EngineConfig, ModelConfig, model_config
from deepseek_recipe_engine.engine import (
    Engine,
    EngineCore,
    EngineError,
    GenerationResult,
    RequestStream,
)
from deepseek_recipe_engine.request import (
    Chunk,
    Finish,
    GenerationRequest,
    Ready,
    TokenLogprob,
    Tokens,
)

__all__ = [
    "Chunk",
    "Engine",
    "EngineConfig",
    "EngineCore",
    "EngineError",
    "Finish",
    "GenerationRequest",
    "GenerationResult",
    "ModelConfig",
    "Ready",
    "RequestStream",
    "TokenLogprob",
    "Tokens",
    "model_config",
]
