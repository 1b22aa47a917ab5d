"""Continuous batching: a waiting queue, a running list, admission by free blocks, preemption.

Each step runs every running sequence for one token (decode), continues prompts that are partly
computed, and admits waiting sequences, oldest first, while the batch has room (`max_num_seqs`,
`max_num_batched_tokens`) and the cache has free blocks for their whole prompt. A prompt longer
than the step's remaining token budget is computed in chunks over several steps (chunked prefill),
side by side with the decodes; a chunk computes exactly what the whole prompt would (the model
attends each token over its own causal prefix), so chunking never changes a sequence's results.

Preemption: when a running sequence needs a new block and none is free, the most recently admitted
running sequence is preempted by recomputation: its blocks are released (its full blocks stay in
the prefix cache, so readmission usually reuses them) and it goes back to the front of the waiting
queue with the tokens it has generated. Sampling is seeded by position, so a preempted sequence
produces the same tokens as one that never was.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from deepseek_recipe_engine.config import EngineConfig
from deepseek_recipe_engine.kv_cache import BlockManager
from deepseek_recipe_engine.sequence import Sequence, SequenceStatus


@dataclass(frozen=True)
class ScheduledTokens:
    """The tokens of one sequence computed in a step: positions [start, end)."""

    seq: Sequence
    start: int
    end: int

    @property
    def completes(self) -> bool:
        """Whether the sequence's every token is computed after this chunk (it then samples)."""
        return self.end == len(self.seq)


class Scheduler:
    """Decides which sequences run in each step."""

    def __init__(self, config: EngineConfig, blocks: BlockManager) -> None:
        self.config = config
        self.blocks = blocks
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []
        self.num_preemptions = 0  # for tests and metrics

    def add(self, seq: Sequence) -> None:
        """Queue a new sequence."""
        seq.status = SequenceStatus.WAITING
        self.waiting.append(seq)

    def has_work(self) -> bool:
        """Whether any sequence is waiting or running."""
        return bool(self.waiting or self.running)

    def schedule(self) -> list[ScheduledTokens]:
        """Pick this step's chunks: running sequences first, in admission order, then newly
        admitted ones, while the token budget lasts."""
        scheduled: list[ScheduledTokens] = []
        budget = self.config.max_num_batched_tokens
        for seq in list(self.running):
            if seq.status is not SequenceStatus.RUNNING or budget == 0:
                continue  # preempted earlier in this loop, or no budget left this step
            while not self.blocks.can_append(seq):
                self._preempt(self.running[-1])
                if seq.status is not SequenceStatus.RUNNING:
                    break
            if seq.status is SequenceStatus.RUNNING:
                self.blocks.append_slot(seq)
                scheduled.append(self._chunk(seq, budget))
                budget -= scheduled[-1].end - scheduled[-1].start
        while self.waiting and len(self.running) < self.config.max_num_seqs and budget > 0:
            seq = self.waiting[0]
            if not self.blocks.can_allocate(seq):
                break
            self.waiting.popleft()
            reused = self.blocks.allocate(seq)
            if not seq.announced:
                seq.num_cached_prompt_tokens = reused
            seq.status = SequenceStatus.RUNNING
            self.running.append(seq)
            scheduled.append(self._chunk(seq, budget))
            budget -= scheduled[-1].end - scheduled[-1].start
        return scheduled

    @staticmethod
    def _chunk(seq: Sequence, budget: int) -> ScheduledTokens:
        start = seq.num_computed_tokens
        return ScheduledTokens(seq, start, min(len(seq), start + budget))

    def finish(self, seq: Sequence) -> None:
        """Retire a running sequence and release its blocks."""
        self.running.remove(seq)
        self.blocks.free(seq)
        seq.status = SequenceStatus.FINISHED

    def cancel(self, request_id: int) -> Sequence | None:
        """Remove a waiting or running sequence; return it, or None if it is not here."""
        for seq in self.waiting:
            if seq.request_id == request_id:
                self.waiting.remove(seq)
                self.blocks.free(seq)
                seq.status = SequenceStatus.FINISHED
                return seq
        for seq in self.running:
            if seq.request_id == request_id:
                self.finish(seq)
                return seq
        return None

    def _preempt(self, seq: Sequence) -> None:
        self.num_preemptions += 1
        self.running.remove(seq)
        self.blocks.free(seq)
        seq.status = SequenceStatus.WAITING
        self.waiting.appendleft(seq)
