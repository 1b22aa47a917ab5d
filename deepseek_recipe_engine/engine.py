"""The step loop (`EngineCore`, synchronous) and the async API over it (`Engine`)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import queue
import secrets
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import torch

from deepseek_recipe_engine.config import EngineConfig, ModelConfig, model_config
from deepseek_recipe_engine.kernels import uses_kernels
from deepseek_recipe_engine.kv_cache import BlockManager
from deepseek_recipe_engine.model import DeepseekModel
from deepseek_recipe_engine.request import (
    Chunk,
    Finish,
    FinishReason,
    GenerationRequest,
    Ready,
    TokenLogprob,
    Tokens,
)
from deepseek_recipe_engine.runner import StepRunner
from deepseek_recipe_engine.sampler import MAX_TOP_LOGPROBS, Sampled, SamplingRow, sample
from deepseek_recipe_engine.scheduler import ScheduledTokens, Scheduler
from deepseek_recipe_engine.sequence import Sequence

Output = tuple[int, Chunk]
"""A chunk for the request with the given id."""


DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}
"""The engine's compute dtypes by name (`EngineConfig.dtype`)."""


def model_dtype(config: EngineConfig) -> torch.dtype:
    """The dtype of an engine config; ValueError for an unknown name, or for bfloat16 where the
    fused kernels do not run (the CPU path is float32 only)."""
    if config.dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {sorted(DTYPES)}, not {config.dtype!r}")
    if config.dtype != "float32" and not uses_kernels(config.device):
        raise ValueError(f"dtype {config.dtype} needs a CUDA device")
    return DTYPES[config.dtype]


def build_model(config: EngineConfig, model_cfg: ModelConfig | None = None) -> DeepseekModel:
    """The model an engine config names: seeded weights, or loaded from `weights_path`.

    Weights are made on the CPU in float32 and then moved and cast, so a seed gives the same
    weights on every device (rounded once for bfloat16).
    """
    dtype = model_dtype(config)
    model = DeepseekModel(model_cfg or model_config(config.model))
    if config.weights_path is not None:
        model = model.load(config.weights_path)
    else:
        model = model.init_weights(config.weights_seed)
    return model.to(config.device, dtype).eval()


@dataclass
class GenerationResult:
    """Everything one request produced, gathered from its chunks."""

    prompt_tokens: int = 0
    prompt_cache_hit_tokens: int = 0
    token_ids: list[int] = field(default_factory=list)
    logprobs: list[TokenLogprob] = field(default_factory=list)
    finish_reason: FinishReason | None = None
    stop_token_id: int | None = None

    def add(self, chunk: Chunk) -> None:
        """Fold one chunk into the result."""
        if isinstance(chunk, Ready):
            self.prompt_tokens = chunk.prompt_tokens
            self.prompt_cache_hit_tokens = chunk.prompt_cache_hit_tokens
        elif isinstance(chunk, Tokens):
            self.token_ids.extend(chunk.token_ids)
            self.logprobs.extend(chunk.logprobs or [])
        else:
            self.finish_reason = chunk.reason
            self.stop_token_id = chunk.stop_token_id


class EngineCore:
    """Owns the model, the cache and the scheduler; each `step` advances every running sequence."""

    def __init__(self, config: EngineConfig, model: DeepseekModel | None = None) -> None:
        self.config = config
        self.model = model or build_model(config)
        self.blocks = BlockManager(config.num_blocks, config.block_size)
        self.scheduler = Scheduler(config, self.blocks)
        self.runner = StepRunner(self.model, config, self.blocks)
        self._ids = itertools.count()
        # A sequence never outgrows the cache (so it can always run once it is alone) nor RoPE.
        self.max_len = min(
            config.max_model_len,
            config.num_blocks * config.block_size,
            self.model.config.max_position_embeddings,
        )

    def validate(self, request: GenerationRequest) -> None:
        """Raise ValueError if the request can never run on this engine."""
        vocab = self.model.config.vocab_size
        if not request.prompt_ids:
            raise ValueError("prompt_ids must not be empty")
        if any(not 0 <= t < vocab for t in request.prompt_ids):
            raise ValueError(f"prompt_ids must be in [0, {vocab})")
        if len(request.prompt_ids) >= self.max_len:
            raise ValueError(
                f"prompt of {len(request.prompt_ids)} tokens exceeds the limit {self.max_len}"
            )
        if request.max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        if request.temperature < 0 or not 0 < request.top_p <= 1:
            raise ValueError("temperature must be >= 0 and top_p in (0, 1]")
        if not 0 <= request.top_logprobs <= MAX_TOP_LOGPROBS:
            raise ValueError(f"top_logprobs must be in [0, {MAX_TOP_LOGPROBS}]")

    def new_sequence(self, request: GenerationRequest) -> Sequence:
        """Validate a request; wrap it in a sequence with a fresh id (and a seed if it has none)."""
        self.validate(request)
        seed = request.seed if request.seed is not None else secrets.randbits(63)
        return Sequence.from_request(next(self._ids), request, seed)

    def add_request(self, request: GenerationRequest) -> int:
        """Validate and queue a request; return its id."""
        seq = self.new_sequence(request)
        self.scheduler.add(seq)
        return seq.request_id

    def cancel(self, request_id: int) -> list[Output]:
        """Stop a request and free its blocks; yields its `Finish("cancelled")` if it was live."""
        seq = self.scheduler.cancel(request_id)
        return [] if seq is None else [(request_id, Finish("cancelled"))]

    def has_work(self) -> bool:
        """Whether any request is waiting or running."""
        return self.scheduler.has_work()

    def step(self) -> list[Output]:
        """Run one batch: schedule, compute, sample; return the chunks produced."""
        scheduled = self.scheduler.schedule()
        outputs: list[Output] = []
        for work in scheduled:
            if not work.seq.announced:
                work.seq.announced = True
                ready = Ready(work.seq.num_prompt_tokens, work.seq.num_cached_prompt_tokens)
                outputs.append((work.seq.request_id, ready))
        if not scheduled:
            return outputs
        logits = self.runner.logits(scheduled)  # queued on the GPU: the host carries on
        completing, rows = [], []
        for work in scheduled:
            seq = work.seq
            seq.num_computed_tokens = work.end
            self.blocks.register_computed(seq)
            if work.completes:
                completing.append(seq)
                rows.append(self._sampling_row(seq))
        for seq, sampled in zip(completing, self._sample(logits, rows), strict=True):
            seq.token_ids.append(sampled.token_id)
            reason = self._finish_reason(seq, sampled.token_id)
            if reason != "stop":  # a stop token is reported in `Finish`, never as output text
                logprobs = [sampled.logprob] if sampled.logprob is not None else None
                outputs.append((seq.request_id, Tokens([sampled.token_id], logprobs)))
            if reason is not None:
                self.scheduler.finish(seq)
                stop_id = sampled.token_id if reason == "stop" else None
                outputs.append((seq.request_id, Finish(reason, stop_id)))
        return outputs

    def next_token_logits(self, prompt_ids: list[int]) -> torch.Tensor:
        """Logits [vocab] after `prompt_ids`, computed through the cache (blocks freed after)."""
        seq = self.new_sequence(GenerationRequest(prompt_ids=prompt_ids))
        if not self.blocks.can_allocate(seq):
            raise RuntimeError("no free cache blocks for the prompt")
        self.blocks.allocate(seq)
        try:
            return self.runner.logits([ScheduledTokens(seq, seq.num_computed_tokens, len(seq))])[0]
        finally:
            self.blocks.free(seq)

    def generate(self, requests: list[GenerationRequest]) -> list[GenerationResult]:
        """Run requests together to completion (synchronously)."""
        ids = [self.add_request(r) for r in requests]
        results = {i: GenerationResult() for i in ids}
        while self.has_work():
            for request_id, chunk in self.step():
                results[request_id].add(chunk)
        return [results[i] for i in ids]

    def _finish_reason(self, seq: Sequence, token_id: int) -> FinishReason | None:
        if token_id in seq.request.stop_token_ids:
            return "stop"
        if seq.num_completion_tokens >= seq.request.max_tokens:
            return "length"
        if len(seq) >= self.max_len:
            return "length"
        return None

    @staticmethod
    def _sampling_row(seq: Sequence) -> SamplingRow:
        req = seq.request
        return SamplingRow(
            temperature=req.temperature,
            top_p=req.top_p,
            seed=seq.seed,
            position=len(seq),
            logprobs=req.logprobs,
            top_logprobs=req.top_logprobs if req.logprobs else 0,
            token_ids=seq.token_ids,
            logits_processor=req.logits_processor,
            banned_token_ids=tuple(req.banned_token_ids),
        )

    def _sample(self, logits: torch.Tensor, rows: list[SamplingRow]) -> list[Sampled]:
        if self.runner.fused is None:
            return sample(logits, rows)
        from deepseek_recipe_engine.device_sampler import sample_on_device  # imports Triton

        return sample_on_device(logits, rows)


class EngineError(RuntimeError):
    """A step failed (e.g. a logits processor raised); every live stream ends with this error."""


class RequestStream:
    """The chunks of one submitted request, as an async iterator; `cancel()` stops it early."""

    def __init__(self, engine: Engine, request_id: int) -> None:
        self.request_id = request_id
        self._engine = engine
        self._queue: asyncio.Queue[Chunk | Exception] = asyncio.Queue()
        self._done = False

    def __aiter__(self) -> AsyncIterator[Chunk]:
        return self

    async def __anext__(self) -> Chunk:
        if self._done:
            raise StopAsyncIteration
        chunk = await self._queue.get()
        if isinstance(chunk, Exception):
            self._done = True
            raise chunk
        if isinstance(chunk, Finish):
            self._done = True
        return chunk

    def put(self, chunk: Chunk | Exception) -> None:
        """Deliver a chunk, or the error that ended the request (on the stream's event loop)."""
        self._queue.put_nowait(chunk)

    def cancel(self) -> None:
        """Ask the engine to stop this request; a `Finish("cancelled")` chunk follows."""
        if not self._done:
            self._engine.cancel(self.request_id)

    async def aclose(self) -> None:
        """Stop listening; cancels the request if it has not finished."""
        self.cancel()
        self._done = True


class Engine:
    """Async front of `EngineCore`: a background thread runs steps while requests stream."""

    def __init__(self, config: EngineConfig, model: DeepseekModel | None = None) -> None:
        self.core = EngineCore(config, model)
        self._commands: queue.SimpleQueue[Callable[[], list[Output]]] = queue.SimpleQueue()
        self._streams: dict[int, tuple[asyncio.AbstractEventLoop, RequestStream]] = {}
        self._wake = threading.Event()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="engine-steps", daemon=True)
        self._thread.start()

    def submit(self, request: GenerationRequest) -> RequestStream:
        """Queue a request (must be called from a running event loop); returns its chunk stream."""
        loop = asyncio.get_running_loop()
        seq = self.core.new_sequence(request)
        stream = RequestStream(self, seq.request_id)
        self._streams[seq.request_id] = (loop, stream)
        self._post(lambda: self._add(seq))
        return stream

    def cancel(self, request_id: int) -> None:
        """Stop a request; its stream ends with `Finish("cancelled")` and its blocks are freed."""
        self._post(lambda: self.core.cancel(request_id))

    def close(self) -> None:
        """Stop the step thread; streams still open end with `EngineError`."""
        self._stopped = True
        self._wake.set()
        self._thread.join()
        self._fail_all(EngineError("engine closed"))

    def _add(self, seq: Sequence) -> list[Output]:
        self.core.scheduler.add(seq)
        return []

    def _post(self, command: Callable[[], list[Output]]) -> None:
        self._commands.put(command)
        self._wake.set()

    def _run(self) -> None:
        while not self._stopped:
            outputs: list[Output] = []
            try:
                while not self._commands.empty():
                    outputs.extend(self._commands.get()())
                if self.core.has_work():
                    outputs.extend(self.core.step())
            except Exception as error:  # a failed step ends every live stream instead of hanging it
                self._deliver(outputs)
                self._fail_all(EngineError(f"engine step failed: {error!r}"))
                continue
            self._deliver(outputs)
            if not self.core.has_work() and self._commands.empty():
                self._wake.wait()
                self._wake.clear()

    def _deliver(self, outputs: list[Output]) -> None:
        for request_id, chunk in outputs:
            entry = self._streams.get(request_id)
            if entry is None:
                continue
            if isinstance(chunk, Finish):
                del self._streams[request_id]
            self._send(entry, chunk)

    def _fail_all(self, error: EngineError) -> None:
        for request_id in list(self._streams):
            self.core.cancel(request_id)
            self._send(self._streams.pop(request_id), error)

    @staticmethod
    def _send(
        entry: tuple[asyncio.AbstractEventLoop, RequestStream], item: Chunk | Exception
    ) -> None:
        loop, stream = entry
        with contextlib.suppress(RuntimeError):  # the caller's event loop is already closed
            loop.call_soon_threadsafe(stream.put, item)
