"""vLLM as a server backend: token ids in and out over vLLM's `/v1/completions`.

Each generation is one streamed completion whose `prompt` is the recipe's token ids
(`add_special_tokens: false`, so nothing is added), with every sampling setting given explicitly
(vLLM would otherwise take the model's `generation_config.json` defaults), the end-of-sentence
stop token, `return_token_ids` (the generated ids of each chunk, and the prompt ids echoed back,
which must equal the ids sent), `logprobs` with `return_tokens_as_token_ids`, and the output
constraint as an llguidance grammar in `structured_outputs` (vLLM must run the `guidance`
structured-output backend). Stop sequences are the recipe's (they never apply inside reasoning),
so none is sent; a stop sequence ends the answer by closing the stream, which aborts the request.

vLLM reports prompt-cache hits only at the end of a stream, but the protocols' first chunk carries
them (Messages' `message_start`), so a generation starts with a probe: the same prompt with
`max_tokens: 1`, whose `usage.prompt_tokens_details.cached_tokens` (vLLM needs
`--enable-prompt-tokens-details`) are the hits a request finds; the probe leaves the prompt in the
cache, so the generation then recomputes only the last partial block. See docs/backends.md.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from deepseek_recipe_engine.backend import BackendError
from deepseek_recipe_engine.errors import SERVER_ERROR
from deepseek_recipe_engine.remote import (
    Endpoint,
    RemoteBackend,
    RemoteOptions,
    RemoteStream,
    fetch_json,
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

__all__ = ["PromptEcho", "VllmBackend", "completion_body", "token_logprobs"]

logger = logging.getLogger("deepseek_recipe_engine.vllm_backend")

TOKEN_ID_PREFIX = "token_id:"
"""How vLLM names a token in logprobs with `return_tokens_as_token_ids`."""


@dataclass
class PromptEcho:
    """What the prompt ids vLLM echoed back showed, over every generation so far."""

    identical: int = 0
    different: int = 0
    missing: int = 0

    def summary(self) -> str:
        """One line for the log."""
        return (
            f"prompt ids echoed by vLLM: {self.identical} identical, {self.different} different, "
            f"{self.missing} missing"
        )


def completion_body(request: GenerationRequest) -> dict[str, Any]:
    """The streamed `/v1/completions` body of a generation."""
    body: dict[str, Any] = {
        "prompt": request.prompt_ids,
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
        "top_p": request.top_p,
        "top_k": 0,
        "min_p": 0.0,
        "presence_penalty": 0.0,
        "frequency_penalty": 0.0,
        "repetition_penalty": 1.0,
        "stop_token_ids": request.stop_token_ids,
        "add_special_tokens": False,
        "skip_special_tokens": False,
        "return_token_ids": True,
        "stream": True,
    }
    if request.seed is not None:
        body["seed"] = request.seed
    if request.logprobs:
        body["logprobs"] = request.top_logprobs
        body["return_tokens_as_token_ids"] = True
    if request.grammar is not None:
        body["structured_outputs"] = {"grammar": request.grammar}
    if request.banned_token_ids:
        body["logit_bias"] = request.banned_token_bias()
    return body


def probe_body(prompt_ids: list[int]) -> dict[str, Any]:
    """The probe that finds a prompt's cache hits (and leaves the prompt cached)."""
    return {
        "prompt": prompt_ids,
        "max_tokens": 1,
        "temperature": 0.0,
        "add_special_tokens": False,
    }


def cached_tokens(answer: Mapping[str, Any]) -> int | None:
    """`usage.prompt_tokens_details.cached_tokens` of a completion (None when absent)."""
    usage = answer.get("usage") if isinstance(answer, dict) else None
    details = usage.get("prompt_tokens_details") if isinstance(usage, dict) else None
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return cached if isinstance(cached, int) else None


def token_logprobs(logprobs: Mapping[str, Any], top: int) -> list[TokenLogprob]:
    """One `TokenLogprob` per token of a chunk's `logprobs`, `top` alternatives each (vLLM also
    lists the sampled token when it is not among the top ones: it is left out)."""
    result = []
    for name, logprob, alternatives in zip(
        logprobs["tokens"], logprobs["token_logprobs"], logprobs["top_logprobs"], strict=True
    ):
        ranked = sorted(
            ((_token_id(key), float(value)) for key, value in (alternatives or {}).items()),
            key=lambda item: -item[1],
        )
        result.append(TokenLogprob(_token_id(name), float(logprob), ranked[:top]))
    return result


def _token_id(name: str) -> int:
    if not name.startswith(TOKEN_ID_PREFIX):
        raise ValueError(f"logprob token {name!r} is not named by its id")
    return int(name[len(TOKEN_ID_PREFIX) :])


class VllmBackend(RemoteBackend):
    """Generations on one or more vLLM OpenAI-compatible servers."""

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
        self.prompt_echo = PromptEcho()
        self._warned_no_cache_details = False

    @property
    def context_limit(self) -> int:
        """vLLM's `max_model_len` (the smallest of the servers')."""
        return self._context_limit

    @property
    def vocab_size(self) -> int | None:
        """The model's vocabulary size when given (vLLM does not list it)."""
        return self._vocab_size

    async def aclose(self) -> None:
        """Close the connections; log what the prompt echoes showed (an error if any differed)."""
        echo = self.prompt_echo
        level = logging.ERROR if echo.different or echo.missing else logging.INFO
        logger.log(level, "%s", echo.summary())
        await super().aclose()

    async def submit(self, request: GenerationRequest) -> RemoteStream:
        """Probe the cache, then start the streamed completion on the least busy server."""

        async def start(endpoint: Endpoint) -> RemoteStream:
            url = f"{endpoint.url}/v1/completions"
            probe = await fetch_json(self.client, "POST", url, probe_body(request.prompt_ids))
            hits = self._cache_hits(probe)
            response = await open_stream(self.client, "POST", url, completion_body(request))
            chunks = self._chunks(response, request, hits)
            return RemoteStream(chunks, self.finisher(endpoint))

        return await self.submit_to_pool(start)

    def _cache_hits(self, probe: Mapping[str, Any]) -> int:
        hits = cached_tokens(probe)
        if hits is None:
            if not self._warned_no_cache_details:
                self._warned_no_cache_details = True
                logger.warning(
                    "vLLM reports no cached_tokens (start it with --enable-prompt-tokens-details);"
                    " prompt cache hits are reported as 0"
                )
            return 0
        return hits

    async def _chunks(
        self, response: httpx.Response, request: GenerationRequest, hits: int
    ) -> AsyncIterator[Chunk]:
        try:
            yield Ready(len(request.prompt_ids), hits)
            echoed = False
            async for data in sse_data(response):
                event = json.loads(data)
                if "error" in event:
                    raise BackendError(500, f"{SERVER_ERROR}: {event['error']}")
                for choice in event.get("choices") or []:
                    if "prompt_token_ids" in choice and choice["prompt_token_ids"] is not None:
                        echoed = True
                        self._check_echo(choice["prompt_token_ids"], request.prompt_ids)
                    for chunk in self._choice_chunks(choice, request):
                        yield chunk
                        if isinstance(chunk, Finish):
                            if not echoed:
                                self.prompt_echo.missing += 1
                            return
        finally:
            await response.aclose()

    def _check_echo(self, echoed: list[int], sent: list[int]) -> None:
        if echoed == sent:
            self.prompt_echo.identical += 1
            return
        self.prompt_echo.different += 1
        logger.error(
            "vLLM echoed other prompt ids than were sent (%d vs %d)", len(echoed), len(sent)
        )
        raise BackendError(500, f"{SERVER_ERROR}: the backend changed the prompt")

    @staticmethod
    def _choice_chunks(choice: Mapping[str, Any], request: GenerationRequest) -> list[Chunk]:
        """The chunks of one streamed choice: its new ids (the stop token left out), its finish."""
        ids = list(choice.get("token_ids") or [])
        logprobs = (
            token_logprobs(choice["logprobs"], request.top_logprobs)
            if request.logprobs and choice.get("logprobs") and ids
            else None
        )
        reason = choice.get("finish_reason")
        stop_id: int | None = None
        if reason == "stop" and ids and ids[-1] in request.stop_token_ids:
            stop_id = ids.pop()  # reported in `Finish`, never as text (request.py)
            logprobs = logprobs[:-1] if logprobs is not None else None
        chunks: list[Chunk] = [Tokens(ids, logprobs)] if ids else []
        if reason is None:
            return chunks
        if reason == "stop":
            if stop_id is None and isinstance(choice.get("stop_reason"), int):
                stop_id = choice["stop_reason"]
            return [*chunks, Finish("stop", stop_id)]
        if reason == "length":
            return [*chunks, Finish("length")]
        raise BackendError(500, f"{SERVER_ERROR}: the backend ended with {reason!r}")
