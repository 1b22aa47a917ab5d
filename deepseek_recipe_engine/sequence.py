"""A running generation: its tokens, its cache blocks and its progress."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from deepseek_recipe_engine.request import GenerationRequest


class SequenceStatus(enum.Enum):
    """Where a sequence is in the scheduler."""

    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"


@dataclass
class Sequence:
    """Token ids (prompt then completion) of one request, and the KV-cache blocks holding them."""

    request_id: int
    request: GenerationRequest
    seed: int
    token_ids: list[int]
    num_prompt_tokens: int
    status: SequenceStatus = SequenceStatus.WAITING
    block_table: list[int] = field(default_factory=list)  # cache block of each block_size tokens
    block_hashes: list[int] = field(default_factory=list)  # chain hash of each full block
    num_computed_tokens: int = 0  # tokens whose latents are in the cache
    num_cached_prompt_tokens: int = 0  # prompt tokens reused from the prefix cache at admission
    announced: bool = False  # the Ready chunk has been sent
    cancelled: bool = False

    @classmethod
    def from_request(cls, request_id: int, request: GenerationRequest, seed: int) -> Sequence:
        """A new waiting sequence for `request`."""
        return cls(
            request_id=request_id,
            request=request,
            seed=seed,
            token_ids=list(request.prompt_ids),
            num_prompt_tokens=len(request.prompt_ids),
        )

    @property
    def num_completion_tokens(self) -> int:
        """Tokens generated so far."""
        return len(self.token_ids) - self.num_prompt_tokens

    def __len__(self) -> int:
        return len(self.token_ids)
