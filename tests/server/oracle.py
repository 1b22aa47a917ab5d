"""The answer the live server must give to a seeded request, computed without the server.

The request is converted and encoded by the library, generated alone on the same model under the
server's documented settings (its seed for requests without one, its completion cap) and the
tokens go through the library's stream processor. Alone means: by a second engine (same seeded
weights, its own cache: generation does not depend on batching or cache hits, docs/engine.md), or
in front of vLLM by a request of the oracle's own to that vLLM. Only what the server
chooses on its own is taken from its answer: the response id, the timestamp and the prompt-cache
hits; random tool-call ids and the completion time are blanked in both.
"""

from __future__ import annotations

import json
import re
from typing import Any

from deepseek_recipe import convert
from deepseek_recipe.requests import Protocol
from deepseek_recipe.stream import StreamProcessor
from deepseek_recipe_engine.recipe_request import generation_request
from deepseek_recipe_engine.request import Finish, Ready, Tokens
from deepseek_recipe_engine.server import ReferenceServer, feed
from tests.server.live import LiveServer

TOOL_CALL_ID = re.compile(r"call_(\d{2,})_((?:ET_)?)[A-Za-z0-9]{20}[0-9]{4}")
"""The official tool-call id shape; the ids are random (the vectors' README)."""


def normalised(answer: dict[str, Any]) -> dict[str, Any]:
    """`answer` with random tool-call ids replaced and the completion time left out."""
    text = TOOL_CALL_ID.sub(lambda m: f"call_{m.group(1)}_{m.group(2)}<id>", json.dumps(answer))
    answer = json.loads(text)
    answer.pop("completed_at", None)
    return answer


def cache_hits(protocol: Protocol, answer: dict[str, Any]) -> int:
    """The prompt-cache hits an answer reports."""
    usage = answer["usage"]
    if protocol == "chat_completions":
        return usage["prompt_cache_hit_tokens"]
    if protocol == "responses":
        return usage["input_tokens_details"]["cached_tokens"]
    return usage["cache_read_input_tokens"]


class Oracle:
    """Expected answers for one live server."""

    def __init__(self, live: LiveServer) -> None:
        server: ReferenceServer = live.app.state.server
        self.settings = server.settings
        preparer = server.preparer
        self.tokenizers = preparer.tokenizers
        self.model_vocab = preparer.model_vocab
        self.context_limit = preparer.context_limit
        self.enforcement = preparer.enforcement
        assert live.generate_alone is not None, "this live server has no oracle"
        self.generate_alone = live.generate_alone

    def answer(
        self, body: dict[str, Any], protocol: Protocol, server_answer: dict[str, Any]
    ) -> dict[str, Any]:
        """The complete answer to `body`, normalised, with the id, timestamp and cache hits of
        `server_answer`."""
        converted = convert(body, protocol=protocol, options=self.settings.conversion_options)
        version = converted.model_version
        tokenizer = self.tokenizers.of(version)
        prompt_ids = converted.encode(tokenizer)
        request = generation_request(
            converted,
            prompt_ids,
            context_limit=self.context_limit,
            enforcement=self.enforcement,
            absent_token_ids=self.tokenizers.absent_ids(version, self.model_vocab),
        )
        if request.seed is None:
            request.seed = self.settings.default_seed
        if self.settings.max_completion_tokens is not None:
            request.max_tokens = min(request.max_tokens, self.settings.max_completion_tokens)
        result = self.generate_alone(request)
        created = server_answer.get("created", server_answer.get("created_at"))
        processor = StreamProcessor(
            converted,
            response_id=server_answer["id"],
            created=created if isinstance(created, int) else None,  # else the comparison fails
            tokenizer=tokenizer,
        )
        assert result.finish_reason is not None
        chunks = (
            Ready(result.prompt_tokens, cache_hits(protocol, server_answer)),
            Tokens(result.token_ids, result.logprobs or None),
            Finish(result.finish_reason, result.stop_token_id),
        )
        for chunk in chunks:
            if not processor.finished:
                feed(processor, chunk)
        processor.finish_sse()
        return normalised(json.loads(processor.response_json()))
