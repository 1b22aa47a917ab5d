"""A faithful fake host: answers with recorded official exchanges (golden stream/request vectors).

* invalid requests recorded in the request vectors get their official status and body;
* other requests get the chunks (stream) or the accumulated body (non-stream) of a stream
  vector with the same request features whose output fits the case's scenario;
* prompt usage is the recipe's count when the request vectors know it, and an exact repeat of
  a request is reported as a full prompt-cache hit.
"""

from __future__ import annotations

import json
import random
import re
import string
from typing import Any

from deepseek_recipe_conformance.model import PROTOCOL_PATHS
from deepseek_recipe_conformance.oracle import VectorOracle, request_key
from tests.conformance.http_server import Request, Response
from tests.conformance.recordings import Recording, RecordingIndex

PATH_PROTOCOLS = {path: protocol for protocol, path in PROTOCOL_PATHS.items()}
CALL_PLACEHOLDER = re.compile(r"^call_(\d{2,})_(ET_)?<R(\d+)>$")
CREATED = 1_760_000_000


def error_body(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    """The official error body shape."""
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


def json_response(status: int, body: Any) -> Response:
    """A JSON response."""
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return Response(status, {"content-type": "application/json"}, [data])


def _fill(value: Any, ids: dict[str, str], rng: random.Random) -> Any:
    if isinstance(value, dict):
        return {k: _fill(v, ids, rng) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, ids, rng) for v in value]
    if value == "<CREATED>" or value == "<CREATED_AT>":
        return CREATED
    if value == "<COMPLETED_AT>":
        return CREATED + 1
    if isinstance(value, str):
        match = CALL_PLACEHOLDER.match(value)
        if match:
            if value not in ids:
                alnum = "".join(rng.choices(string.ascii_letters + string.digits, k=20))
                digits = "".join(rng.choices(string.digits, k=4))
                ids[value] = f"call_{match.group(1)}_{match.group(2) or ''}{alnum}{digits}"
            return ids[value]
    return value


def set_prompt_usage(protocol: str, value: Any, prompt: int | None, hit: int | None) -> None:
    """Rewrite prompt-side usage (in place) wherever a usage object occurs."""
    if isinstance(value, list):
        for item in value:
            set_prompt_usage(protocol, item, prompt, hit)
        return
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        if key == "usage" and isinstance(item, dict):
            _rewrite_usage(protocol, item, prompt, hit)
        else:
            set_prompt_usage(protocol, item, prompt, hit)


def _rewrite_usage(
    protocol: str, usage: dict[str, Any], prompt: int | None, hit: int | None
) -> None:
    if protocol == "messages":
        total = usage.get("input_tokens", 0) + usage.get("cache_read_input_tokens", 0)
        total = total if prompt is None else prompt
        cached = min(total, usage.get("cache_read_input_tokens", 0) if hit is None else hit)
        usage["input_tokens"], usage["cache_read_input_tokens"] = total - cached, cached
        return
    key_prompt = "prompt_tokens" if protocol == "chat" else "input_tokens"
    key_completion = "completion_tokens" if protocol == "chat" else "output_tokens"
    if prompt is not None:
        usage[key_prompt] = prompt
    total = usage[key_prompt]
    if protocol == "chat":
        cached = min(total, usage["prompt_cache_hit_tokens"] if hit is None else hit)
        usage["prompt_tokens_details"]["cached_tokens"] = cached
        usage["prompt_cache_hit_tokens"], usage["prompt_cache_miss_tokens"] = cached, total - cached
    else:
        cached = min(total, usage["input_tokens_details"]["cached_tokens"] if hit is None else hit)
        usage["input_tokens_details"]["cached_tokens"] = cached
    usage["total_tokens"] = total + usage[key_completion]


def stream_bytes(protocol: str, chunks: list[dict[str, Any]], done_data: str | None) -> list[bytes]:
    """SSE framing of recorded chunks: one write per event."""
    out = []
    for chunk in chunks:
        data = json.dumps(chunk["data"], ensure_ascii=False, separators=(",", ":"))
        name = chunk["sse_event"]
        out.append(((f"event: {name}\n" if name else "") + f"data: {data}\n\n").encode("utf-8"))
    if done_data is not None:
        out.append(f"data: {done_data}\n\n".encode())
    return out


class ReplayHost:
    """The fake host's request handler."""

    def __init__(
        self, index: RecordingIndex, oracle: VectorOracle, scenarios: dict[str, str], api_key: str
    ) -> None:
        self.index = index
        self.oracle = oracle
        self.scenarios = scenarios
        self.api_key = api_key
        self.seen: set[str] = set()
        self.rng = random.Random(7)
        self.unmatched: list[str] = []

    def _authorized(self, protocol: str, request: Request) -> bool:
        if request.headers.get("authorization") == f"Bearer {self.api_key}":
            return True
        return protocol == "messages" and request.headers.get("x-api-key") == self.api_key

    async def __call__(self, request: Request) -> Response:
        """Answer one request."""
        protocol = PATH_PROTOCOLS.get(request.path)
        if protocol is None or request.method != "POST":
            return json_response(404, error_body("Not Found", "not_found_error"))
        if not self._authorized(protocol, request):
            return json_response(401, error_body("Authentication Fails", "authentication_error"))
        try:
            body = json.loads(request.body)
        except ValueError:
            return json_response(400, error_body("invalid JSON request"))
        known_error = self.oracle.expected_error(protocol, body)
        if known_error is not None:
            return json_response(*known_error)
        scenario = self.scenarios.get(request.headers.get("x-conformance-case", ""), "plain")
        recording = self.index.find(protocol, body, scenario)
        if recording is None:
            self.unmatched.append(request.headers.get("x-conformance-case", "?"))
            return json_response(
                501, error_body(f"no recording for this request ({scenario})", "server_error")
            )
        return self._replay(protocol, body, recording)

    def _replay(self, protocol: str, body: dict[str, Any], recording: Recording) -> Response:
        ids: dict[str, str] = {}
        key = request_key(
            protocol, {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
        )
        repeated = key in self.seen
        self.seen.add(key)
        prompt = self.oracle.count_prompt_tokens(protocol, body)
        stream = body.get("stream") is True
        if stream:
            chunks = _fill(recording.chunks, ids, self.rng)
            if repeated or prompt is not None:
                set_prompt_usage(protocol, chunks, prompt, _hit(protocol, chunks, prompt, repeated))
            data = stream_bytes(protocol, chunks, recording.done_data)
            return Response(
                200, {"content-type": "text/event-stream", "cache-control": "no-cache"}, data
            )
        response = _fill(recording.response, ids, self.rng)
        if repeated or prompt is not None:
            set_prompt_usage(protocol, response, prompt, _hit(protocol, response, prompt, repeated))
        return json_response(200, response)


def _hit(protocol: str, value: Any, prompt: int | None, repeated: bool) -> int | None:
    """Full hit on a repeat (the whole prompt), else keep the recorded hit."""
    if not repeated:
        return None
    if prompt is not None:
        return prompt
    return 1 << 62  # clamped to the prompt size by the usage rewrite
