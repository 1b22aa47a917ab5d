"""SGLang as a server backend: token ids in and out over SGLang's native `/generate`.

Each generation is one streamed `/generate` request with `input_ids` (the recipe's prompt ids) and
explicit `sampling_params` (SGLang would otherwise take the model's `generation_config.json`
defaults): `max_new_tokens`, `temperature`, `top_p`, `top_k: -1`, `min_p`, the penalties off, the
end-of-sentence stop token, `sampling_seed`, a `logit_bias` of -100 on the prompt-only markup, and
the output constraint as an llguidance grammar in `ebnf` (SGLang must run `--grammar-backend
llguidance`, which reads Lark). Logprobs come from
`return_logprob` / `top_logprobs_num` as `(logprob, token id, text)` entries in `meta_info`.

Every streamed chunk is `{"text", "output_ids", "meta_info"}`; `meta_info` carries
`cached_tokens` from the first chunk on, so no probe is needed (unlike vLLM). `output_ids` and the
logprob lists hold the whole output so far, or only the new part when SGLang runs
`--incremental-streaming-output`; both are read. `meta_info.finish_reason` is null until the last
chunk, then `{"type": "stop" | "length" | "abort", ...}`.

Written against SGLang's documented request and response shapes and unit-tested against them; it
was never run against a live SGLang (SGLang does not run on the machines this was built on).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import httpx

from deepseek_recipe_engine.backend import BackendError
from deepseek_recipe_engine.errors import SERVER_ERROR
from deepseek_recipe_engine.remote import (
    Endpoint,
    RemoteBackend,
    RemoteOptions,
    RemoteStream,
    open_stream,
    sse_data,
)
from deepseek_recipe_engine.request import (
    Chunk,
    ConstraintEnforcement,
    Finish,
    GenerationRequest,
    Ready,
    TokenLogprob,
    Tokens,
)

__all__ = ["SglangBackend", "SglangChunkReader", "generate_body"]


def generate_body(request: GenerationRequest) -> dict[str, Any]:
    """The streamed `/generate` body of a generation."""
    sampling: dict[str, Any] = {
        "max_new_tokens": request.max_tokens,
        "temperature": request.temperature,
        "top_p": request.top_p,
        "top_k": -1,
        "min_p": 0.0,
        "presence_penalty": 0.0,
        "frequency_penalty": 0.0,
        "repetition_penalty": 1.0,
        "stop_token_ids": request.stop_token_ids,
        "skip_special_tokens": False,
        "no_stop_trim": True,
    }
    if request.seed is not None:
        sampling["sampling_seed"] = request.seed
    if request.grammar is not None:
        sampling["ebnf"] = request.grammar
    if request.banned_token_ids:
        sampling["logit_bias"] = request.banned_token_bias()
    body: dict[str, Any] = {
        "input_ids": request.prompt_ids,
        "sampling_params": sampling,
        "stream": True,
    }
    if request.logprobs:
        body["return_logprob"] = True
        body["top_logprobs_num"] = request.top_logprobs
        body["logprob_start_len"] = -1
    return body


class SglangChunkReader:
    """Turns the streamed `/generate` chunks of one generation into backend chunks."""

    def __init__(self, request: GenerationRequest) -> None:
        self.request = request
        self.seen = 0  # output ids already turned into chunks
        self.ready = False

    def read(self, event: Mapping[str, Any]) -> list[Chunk]:
        """The chunks one streamed event adds (the last one ends with `Finish`)."""
        meta = event.get("meta_info")
        if not isinstance(meta, dict):
            raise BackendError(500, f"{SERVER_ERROR}: a chunk without meta_info")
        chunks: list[Chunk] = []
        if not self.ready:
            self.ready = True
            cached = meta.get("cached_tokens")
            hits = cached if isinstance(cached, int) else 0
            chunks.append(Ready(len(self.request.prompt_ids), hits))
        ids, logprobs = self._new_output(event, meta)
        finish = meta.get("finish_reason")
        stop_id: int | None = None
        if isinstance(finish, dict) and finish.get("type") == "stop":
            if ids and ids[-1] in self.request.stop_token_ids:
                stop_id = ids.pop()  # reported in `Finish`, never as text (request.py)
                logprobs = logprobs[:-1] if logprobs is not None else None
            elif isinstance(finish.get("matched"), int):
                stop_id = finish["matched"]
        if ids:
            chunks.append(Tokens(ids, logprobs))
        if finish is None:
            return chunks
        kind = finish.get("type") if isinstance(finish, dict) else None
        if kind == "stop":
            return [*chunks, Finish("stop", stop_id)]
        if kind == "length":
            return [*chunks, Finish("length")]
        raise BackendError(500, f"{SERVER_ERROR}: the backend ended with {finish!r}")

    def _new_output(
        self, event: Mapping[str, Any], meta: Mapping[str, Any]
    ) -> tuple[list[int], list[TokenLogprob] | None]:
        """The ids (and logprobs) not seen before.

        A cumulative chunk holds every id so far (at least `completion_tokens`); an incremental
        one only the new ids, so that with those seen before they make `completion_tokens`.
        """
        output = list(event.get("output_ids") or [])
        incremental = self.seen > 0 and self.seen + len(output) == meta.get("completion_tokens")
        start = 0 if incremental else self.seen
        ids = output[start:]
        self.seen += len(ids)
        if not self.request.logprobs or not ids:
            return ids, None
        tokens = list(meta.get("output_token_logprobs") or [])[start : start + len(ids)]
        tops = list(meta.get("output_top_logprobs") or [])[start : start + len(ids)]
        if len(tokens) != len(ids):
            raise BackendError(500, f"{SERVER_ERROR}: logprobs do not match the output ids")
        tops += [None] * (len(ids) - len(tops))
        top = self.request.top_logprobs
        logprobs = [
            _token_logprob(entry, alt, top) for entry, alt in zip(tokens, tops, strict=True)
        ]
        return ids, logprobs


def _token_logprob(
    entry: Sequence[Any], alternatives: Sequence[Sequence[Any]] | None, top: int
) -> TokenLogprob:
    """An SGLang `(logprob, token id, text)` entry and its alternatives as a `TokenLogprob`."""
    ranked = sorted(((int(a[1]), float(a[0])) for a in alternatives or []), key=lambda a: -a[1])
    return TokenLogprob(int(entry[1]), float(entry[0]), ranked[:top])


class SglangBackend(RemoteBackend):
    """Generations on one or more SGLang servers."""

    constraint_enforcement: ConstraintEnforcement = "grammar"

    def __init__(
        self,
        urls: list[str],
        *,
        context_limit: int,
        options: RemoteOptions | None = None,
        vocab_size: int | None = None,
    ) -> None:
        super().__init__(urls, options or RemoteOptions())
        self._context_limit = context_limit
        self._vocab_size = vocab_size

    @property
    def context_limit(self) -> int:
        """SGLang's context length (the smallest of the servers')."""
        return self._context_limit

    @property
    def vocab_size(self) -> int | None:
        """The model's vocabulary size when given (SGLang does not list it)."""
        return self._vocab_size

    async def submit(self, request: GenerationRequest) -> RemoteStream:
        """Start the streamed `/generate` request on the least busy server."""

        async def start(endpoint: Endpoint) -> RemoteStream:
            url = f"{endpoint.url}/generate"
            response = await open_stream(self.client, "POST", url, generate_body(request))
            return RemoteStream(_chunks(response, request), self.finisher(endpoint))

        return await self.submit_to_pool(start)


async def _chunks(response: httpx.Response, request: GenerationRequest) -> AsyncIterator[Chunk]:
    reader = SglangChunkReader(request)
    try:
        async for data in sse_data(response):
            event = json.loads(data)
            if "error" in event:
                raise BackendError(500, f"{SERVER_ERROR}: {event['error']}")
            for chunk in reader.read(event):
                yield chunk
                if isinstance(chunk, Finish):
                    return
    finally:
        await response.aclose()
