"""From a step's scheduled tokens to next-token logits, on the engine's device.

On the CPU the reference forward (`DeepseekModel.forward`) runs on each sequence's gathered
context. On the GPU path the fused kernels run (`FusedForward`), and a step that only decodes runs
as a CUDA graph captured for its batch-size bucket: the batch is padded to the bucket with rows
that write into a scratch cache block no sequence owns and attend only to it. Padding never
changes a real row's result, since every kernel computes each row on its own.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from deepseek_recipe_engine.config import EngineConfig
from deepseek_recipe_engine.kernels import uses_kernels
from deepseek_recipe_engine.kv_cache import BlockManager
from deepseek_recipe_engine.model import DeepseekModel, StepInput
from deepseek_recipe_engine.scheduler import ScheduledTokens

if TYPE_CHECKING:
    from deepseek_recipe_engine.fused import KernelStep

DECODE_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
"""Batch sizes that decode steps are padded to (those up to `max_num_seqs`, and that itself)."""


def decode_buckets(max_num_seqs: int) -> list[int]:
    """The batch-size buckets of an engine running at most `max_num_seqs` sequences."""
    return sorted({b for b in DECODE_BUCKETS if b < max_num_seqs} | {max_num_seqs})


@dataclass
class DecodeGraph:
    """One bucket's decode step: its static input rows, and its graph and static logits once
    captured (without CUDA, under Triton's interpreter, the step runs eagerly on the rows)."""

    packed: torch.Tensor  # [3 + blocks, bucket] int32: ids, positions, slots, block table
    step: KernelStep  # views of `packed`
    graph: torch.cuda.CUDAGraph | None = None
    logits: torch.Tensor | None = None  # [bucket, vocab] written by each replay


class StepRunner:
    """Owns the paged KV cache and computes the logits of a step's completing sequences."""

    def __init__(self, model: DeepseekModel, config: EngineConfig, blocks: BlockManager) -> None:
        self.model = model
        self.config = config
        self.blocks = blocks
        self.device = torch.device(config.device)
        # One block beyond the manager's: the scratch block of padding rows (never handed out).
        self.scratch_block = config.num_blocks
        slots = (config.num_blocks + 1) * config.block_size
        dtype = next(model.parameters()).dtype
        self.kv_cache = torch.zeros(model.kv_cache_shape(slots), device=self.device, dtype=dtype)
        self.max_blocks = -(-config.max_model_len // config.block_size)
        self.fused = None
        self.graphs: dict[int, DecodeGraph] = {}
        if uses_kernels(self.device):
            from deepseek_recipe_engine.fused import FusedForward  # imports Triton

            self.fused = FusedForward(model, config.block_size)
            self.buckets = decode_buckets(config.max_num_seqs)
            self._pool = torch.cuda.graph_pool_handle() if self.device.type == "cuda" else None
            for bucket in reversed(self.buckets):  # the largest first, so the rest reuse its pool
                self.graphs[bucket] = self._capture(bucket)

    def logits(self, scheduled: list[ScheduledTokens]) -> torch.Tensor:
        """Compute the scheduled tokens (writing their latents into the cache); return the
        next-token logits [completing sequences, vocab] (fp32) of the sequences whose every token
        is then computed, in order. On the GPU the work is queued, not waited for."""
        if self.fused is None:
            hidden = self.model(self._step_input(scheduled), self.kv_cache)
            completing = [i for i, work in enumerate(scheduled) if work.completes]
            return self.model.logits(hidden[completing])
        if all(work.end - work.start == 1 and work.completes for work in scheduled):
            bucket_index = bisect.bisect_left(self.buckets, len(scheduled))
            if bucket_index < len(self.buckets):
                return self._replay(self.graphs[self.buckets[bucket_index]], scheduled)
        return self._run_eager(scheduled)

    def _step_input(self, scheduled: list[ScheduledTokens]) -> StepInput:
        ids, positions, slots, lens, contexts = [], [], [], [], []
        for work in scheduled:
            ids.extend(work.seq.token_ids[work.start : work.end])
            positions.append(torch.arange(work.start, work.end))
            context = self.blocks.slots(work.seq, 0, work.end)
            slots.append(context[work.start :])
            contexts.append(context)
            lens.append(work.end - work.start)
        return StepInput(
            input_ids=torch.tensor(ids),
            positions=torch.cat(positions),
            slot_mapping=torch.cat(slots),
            query_lens=lens,
            context_slots=contexts,
        )

    def _token_rows(self, scheduled: list[ScheduledTokens]) -> np.ndarray:
        """[3, tokens] int32: each scheduled token's id, position and cache slot."""
        ids, positions, slots = [], [], []
        for work in scheduled:
            ids.extend(work.seq.token_ids[work.start : work.end])
            for position in range(work.start, work.end):
                positions.append(position)
                slots.append(self.blocks.slot(work.seq, position))
        return np.array([ids, positions, slots], dtype=np.int32)

    def _run_eager(self, scheduled: list[ScheduledTokens]) -> torch.Tensor:
        from deepseek_recipe_engine.fused import KernelStep  # imports Triton

        assert self.fused is not None
        rows = self._token_rows(scheduled)
        lengths = [work.end - work.start for work in scheduled]
        width = max(len(work.seq.block_table) for work in scheduled)
        tables = np.full((len(scheduled), width), self.scratch_block, dtype=np.int32)
        for row, work in enumerate(scheduled):
            tables[row, : len(work.seq.block_table)] = work.seq.block_table
        ends = np.cumsum(lengths)
        last_rows = [
            int(end) - 1 for end, work in zip(ends, scheduled, strict=True) if work.completes
        ]
        step = KernelStep(
            input_ids=self._upload(rows[0]),
            positions=self._upload(rows[1]),
            slots=self._upload(rows[2]),
            token_seqs=self._upload(np.repeat(np.arange(len(scheduled)), lengths)),
            block_tables=self._upload(tables),
            last_rows=self._upload(np.asarray(last_rows)).long(),
        )
        return self.fused.logits(step, self.kv_cache)

    def _upload(self, array: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.ascontiguousarray(array, dtype=np.int32)).to(self.device)

    def _padding(self, bucket: int) -> np.ndarray:
        """[3 + blocks, bucket] int32 rows of padding: id 0 at position 0, in the scratch block."""
        packed = np.full((3 + self.max_blocks, bucket), self.scratch_block, dtype=np.int32)
        packed[0:2] = 0
        packed[2] = self.scratch_block * self.config.block_size
        return packed

    def _capture(self, bucket: int) -> DecodeGraph:
        from deepseek_recipe_engine.fused import KernelStep  # imports Triton

        assert self.fused is not None
        packed = torch.from_numpy(self._padding(bucket)).to(self.device)
        step = KernelStep(
            input_ids=packed[0],
            positions=packed[1],
            slots=packed[2],
            token_seqs=torch.arange(bucket, dtype=torch.int32, device=self.device),
            block_tables=packed[3:].t(),
            last_rows=None,
        )
        if self._pool is None:
            return DecodeGraph(packed, step)
        side = torch.cuda.Stream(self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):  # compiles every kernel before the capture
            self.fused.logits(step, self.kv_cache)
        torch.cuda.current_stream(self.device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self._pool):
            logits = self.fused.logits(step, self.kv_cache)
        return DecodeGraph(packed, step, graph, logits)

    def _replay(self, decode: DecodeGraph, scheduled: list[ScheduledTokens]) -> torch.Tensor:
        packed = self._padding(decode.packed.shape[1])
        packed[:3, : len(scheduled)] = self._token_rows(scheduled)
        for row, work in enumerate(scheduled):
            packed[3 : 3 + len(work.seq.block_table), row] = work.seq.block_table
        decode.packed.copy_(torch.from_numpy(packed))
        if decode.graph is None:
            assert self.fused is not None
            return self.fused.logits(decode.step, self.kv_cache)[: len(scheduled)]
        decode.graph.replay()
        assert decode.logits is not None
        return decode.logits[: len(scheduled)]
