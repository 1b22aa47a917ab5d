"""The interface between the server and whatever generates: the bundled engine or a serving engine.

The server converts, validates and encodes each request itself (the recipe), then hands the
prompt ids and the sampling settings (`GenerationRequest`) to a `Backend`, and turns the chunks
of the `GenerationStream` it gets back (`Ready`, then `Tokens`, then one `Finish`) into the
protocol's answer. Implementations: `engine_backend.EngineBackend` (the bundled engine, in this
process), `vllm_backend.VllmBackend` and `sglang_backend.SglangBackend` (serving engines over
HTTP). See docs/backends.md.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from deepseek_recipe_engine.request import Chunk, ConstraintEnforcement, GenerationRequest

__all__ = ["Backend", "BackendError", "GenerationStream"]


class BackendError(RuntimeError):
    """A generation the backend refused or lost, with the official status and message to answer
    (`errors.error_body`): 400 for a request it can never run, 503 when it is overloaded or out
    of reach, 500 when it failed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class GenerationStream(Protocol):
    """The chunks of one generation. Iterating may raise `BackendError` (the generation failed);
    a pending `__anext__` may be cancelled without losing chunks; `aclose()` stops the generation
    (the backend frees what it holds for it) unless it already finished."""

    def __aiter__(self) -> AsyncIterator[Chunk]:
        """The stream itself."""
        ...

    async def __anext__(self) -> Chunk:
        """The next chunk."""
        ...

    async def aclose(self) -> None:
        """Stop the generation and stop listening."""
        ...


class Backend(Protocol):
    """Generates token ids for the server."""

    @property
    def context_limit(self) -> int:
        """The longest prompt + completion (in tokens) one generation may have."""
        ...

    @property
    def vocab_size(self) -> int | None:
        """Ids the model knows (prompt ids must be below it); None when the backend does not say."""
        ...

    @property
    def constraint_enforcement(self) -> ConstraintEnforcement:
        """How output constraints reach it: a logits processor, or the request's grammar."""
        ...

    async def submit(self, request: GenerationRequest) -> GenerationStream:
        """Start a generation (on the server's event loop); `BackendError` if it cannot start."""
        ...

    async def aclose(self) -> None:
        """Release what the backend holds (connections); the server calls it once, at shutdown."""
        ...
