"""Reference inference engine (PyTorch): a DeepSeek-V3-style model served over token ids."""

from engine.config import EngineConfig, ModelConfig, model_config
from engine.engine import Engine, EngineCore, EngineError, GenerationResult, RequestStream
from engine.request import Chunk, Finish, GenerationRequest, Ready, TokenLogprob, Tokens

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
