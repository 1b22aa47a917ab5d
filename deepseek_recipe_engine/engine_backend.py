"""The bundled engine as a server backend (`backend.Backend`), in the server's process."""

from __future__ import annotations

from collections.abc import AsyncIterator

from deepseek_recipe_engine.backend import BackendError
from deepseek_recipe_engine.engine import Engine, EngineError, RequestStream
from deepseek_recipe_engine.errors import SERVER_ERROR
from deepseek_recipe_engine.request import Chunk, ConstraintEnforcement, GenerationRequest

__all__ = ["EngineBackend"]


class EngineStream:
    """An engine request's chunks; an engine failure surfaces as `BackendError` 500."""

    def __init__(self, stream: RequestStream) -> None:
        self._stream = stream

    def __aiter__(self) -> AsyncIterator[Chunk]:
        return self

    async def __anext__(self) -> Chunk:
        try:
            return await self._stream.__anext__()
        except EngineError as error:
            raise BackendError(500, f"{SERVER_ERROR}: {error}") from error

    async def aclose(self) -> None:
        """Cancel the request (its cache blocks are freed) unless it finished."""
        await self._stream.aclose()


class EngineBackend:
    """Serves generations from an `Engine` (owned by the caller, who closes it)."""

    constraint_enforcement: ConstraintEnforcement = "logits_processor"

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @property
    def context_limit(self) -> int:
        """The engine's longest sequence (context length, cache and RoPE bounds)."""
        return self.engine.core.max_len

    @property
    def vocab_size(self) -> int:
        """The engine model's vocabulary size."""
        return self.engine.core.model.config.vocab_size

    async def submit(self, request: GenerationRequest) -> EngineStream:
        """Queue the request; a request the engine can never run is `BackendError` 400."""
        try:
            return EngineStream(self.engine.submit(request))
        except ValueError as error:
            raise BackendError(400, str(error)) from error

    async def aclose(self) -> None:
        """Nothing to release: the engine is the caller's."""
