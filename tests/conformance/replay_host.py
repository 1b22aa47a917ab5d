"""A faithful fake host: the official API's behaviour from the golden vectors and the recipe.

* credentials are checked first, with the official 401 bodies; `GET /v1/models` lists the model;
  unknown paths, wrong methods and unparsable bodies get official-shaped errors;
* invalid requests get the recipe's official status and body;
* other requests are answered with the model output recorded in a stream vector whose request
  has the same features and whose output fits the case's scenario (else with a stand-in
  model's), processed by the recipe for this very request as a host does (its stop sequences,
  its token limit), with the recipe's prompt-token count and a full cache hit on an exact
  repeat.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from deepseek_recipe import ConversionOptions, ConvertedRequest, RecipeError, Tokenizer, convert
from deepseek_recipe.stream import StreamProcessor
from deepseek_recipe_conformance.model import PROTOCOL_PATHS
from deepseek_recipe_conformance.oracle import VECTOR_PROTOCOLS, RecipeOracle, request_key
from tests.conformance.http_server import Request, Response
from tests.conformance.recordings import RecordingIndex
from tests.conformance.standin import StandinModel

PATH_PROTOCOLS = {path: protocol for protocol, path in PROTOCOL_PATHS.items()}
MODELS_PATH = "/v1/models"
TOKENIZER = Tokenizer.deepseek_v4()
FALLBACK_MODEL = StandinModel("wordy")
"""Answers requests no recording fits (e.g. strict JSON schemas, which no vector records)."""


def error_body(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    """The official error body shape (the official API's code is always the request kind)."""
    return {
        "error": {"message": message, "type": kind, "param": None, "code": "invalid_request_error"}
    }


def json_response(status: int, body: Any) -> Response:
    """A JSON response."""
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return Response(status, {"content-type": "application/json"}, [data])


def _key(headers: dict[str, str]) -> str | None:
    scheme, _, token = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return headers.get("x-api-key") or None


class ReplayHost:
    """The fake host's request handler."""

    def __init__(
        self, index: RecordingIndex, model: str, scenarios: dict[str, str], api_key: str
    ) -> None:
        self.index = index
        self.model = model
        self.oracle = RecipeOracle(model)
        self.options = ConversionOptions(
            reasoning_content_behavior="reject", model_aliases={model: "DeepseekV4Pro"}
        )
        self.scenarios = scenarios
        self.api_key = api_key
        self.seen: set[str] = set()
        self.standin_answers: list[str] = []
        """Cases no recording fits: a stand-in model answered them."""

    def _refused(self, request: Request) -> Response | None:
        key = _key(request.headers)
        if key == self.api_key:
            return None
        if key is None:
            message = "Authentication Fails (auth header format should be Bearer sk-...)"
        else:
            message = f"Authentication Fails, Your api key: ****{key[-4:]} is invalid"
        return json_response(401, error_body(message, "authentication_error"))

    async def __call__(self, request: Request) -> Response:
        """Answer one request."""
        protocol = PATH_PROTOCOLS.get(request.path)
        if protocol is None and request.path != MODELS_PATH:
            return json_response(404, error_body("Not Found"))
        if request.method != ("GET" if protocol is None else "POST"):
            return json_response(405, error_body("Method Not Allowed"))
        refused = self._refused(request)
        if refused is not None:
            return refused
        if protocol is None:
            entry = {"id": self.model, "object": "model", "owned_by": "deepseek"}
            return json_response(200, {"object": "list", "data": [entry]})
        try:
            body = json.loads(request.body)
        except ValueError as exc:
            return json_response(400, error_body(f"Invalid JSON request body: {exc}"))
        known_error = self.oracle.expected_error(protocol, body) if isinstance(body, dict) else None
        if known_error is not None:
            return json_response(*known_error)
        try:
            converted = convert(body, protocol=VECTOR_PROTOCOLS[protocol], options=self.options)
        except RecipeError as exc:
            return json_response(422, error_body(f"Failed to deserialize the request: {exc}"))
        scenario = self.scenarios.get(request.headers.get("x-conformance-case", ""), "plain")
        recording = self.index.find(protocol, body, scenario)
        if recording is None:
            self.standin_answers.append(request.headers.get("x-conformance-case", "?"))
            text = FALLBACK_MODEL.text(converted)
            inputs = [{"kind": "text", "content": text, "token_count": len(TOKENIZER.encode(text))}]
            inputs.append({"kind": "finish", "finish_reason": "stop"})
        else:
            inputs = recording.inputs
        return self._answer(protocol, body, converted, inputs)

    def _answer(
        self,
        protocol: str,
        body: dict[str, Any],
        converted: ConvertedRequest,
        inputs: list[dict[str, Any]],
    ) -> Response:
        key = request_key(
            protocol, {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
        )
        repeated = key in self.seen
        self.seen.add(key)
        prompt = self.oracle.count_prompt_tokens(protocol, body) or 0
        processor = StreamProcessor(converted)
        ready = {"kind": "ready", "prompt_tokens": prompt, "prompt_cache_hit_tokens": 0}
        if repeated:
            ready["prompt_cache_hit_tokens"] = prompt
        data = processor.push_sse(ready)
        limit = converted.inference_options.get("max_tokens")
        used, finish = 0, "stop"
        for chunk in inputs:
            if processor.finished or (limit is not None and used >= limit):
                finish = "length"
                break
            if chunk["kind"] == "finish":  # a recorded length: the text ran out here
                finish = "stop" if chunk["finish_reason"] == "length" else chunk["finish_reason"]
                break
            for piece, count in _within_limit(chunk, None if limit is None else limit - used):
                data += processor.push_sse(piece)
                used += count
        if not processor.finished:
            data += processor.push_finish(finish)
        data += processor.finish_sse()
        if converted.stream:
            return Response(200, {"content-type": "text/event-stream"}, [data])
        return json_response(200, json.loads(processor.response_json()))


def _within_limit(chunk: dict[str, Any], room: int | None) -> Iterator[tuple[dict[str, Any], int]]:
    """A recorded text or tokens chunk as pushed by a host with `room` tokens left: whole when
    it fits, else its first `room` tokens (a text chunk is tokenized to cut it)."""
    if chunk["kind"] == "ready":
        return
    if chunk["kind"] == "tokens":
        ids = chunk["token_ids"]
        pairs = chunk.get("logprobs")
        cut = len(ids) if room is None else min(room, len(ids))
        logprobs = None if pairs is None else pairs[:cut]
        yield {**chunk, "token_ids": ids[:cut], "logprobs": logprobs}, cut
        return
    count = int(chunk.get("token_count") or 0)
    if room is None or count <= room:
        yield chunk, count
        return
    ids = TOKENIZER.encode(chunk["content"], allow_special=True)[:room]
    yield {"kind": "tokens", "token_ids": ids, "logprobs": None}, len(ids)
