"""A conforming host built on the *published* deepseek-recipe 0.2.0 with a stand-in model.

Run by the peer environment's interpreter, from outside the repository, so that
`deepseek_recipe` is the published wheel (never this project's package, same import name):
`bench/.peer-venv/bin/python -I tests/conformance/peer_host.py STYLE API_KEY TOKENIZER_JSON`.
It listens on 127.0.0.1 (a free port, printed on the first line of stdout) until stdin closes.

The host does what a host on the library must do: check the key, convert the request (the
official errors), count the prompt with the V4 encoding (and prompt-cache hits on repeated
prefixes), let the stand-in model (`standin_text.py`) write its answer token by token through
the library's stream processor (the token limit applied) and send the chunks as SSE or the
accumulated response as JSON.
"""

from __future__ import annotations

import importlib
import json
import secrets
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.append(str(REPO_ROOT))  # last: `tests.conformance.standin_text`, never our library

from tests.conformance.standin_text import RequestFacts, fake_logprobs, model_text  # noqa: E402

peer: Any = importlib.import_module("deepseek_recipe")
if Path(peer.__file__).resolve().is_relative_to(REPO_ROOT / "deepseek_recipe"):
    raise SystemExit("peer_host imported this project's deepseek_recipe, not the published one")

ROUTES = {
    "/v1/chat/completions": (peer.ChatCompletionRequest, peer.ChatCompletionResponse, "chatcmpl-"),
    "/v1/responses": (peer.ResponsesRequest, peer.ResponsesResponse, "resp_"),
    "/v1/messages": (peer.MessagesRequest, peer.MessagesResponse, "msg_"),
}
MODELS = ("DeepSeek-V4-Pro", "DeepSeek-V4.1-Flash")
BLOCK = 16
"""Prompt-cache granularity: whole blocks of a prefix seen before count as hits."""


def error(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    """The official error body."""
    return {
        "error": {"message": message, "type": kind, "param": None, "code": "invalid_request_error"}
    }


class Host:
    """The library, the stand-in model and the prompt cache."""

    def __init__(self, style: str, api_key: str, tokenizer_json: str) -> None:
        self.style = style
        self.api_key = api_key
        self.tokenizer = peer.Tokenizer.from_file(tokenizer_json)
        self.encoding = peer.DeepseekV4Encoding().with_tokenizer(self.tokenizer)
        self.options = peer.ConversionOptions(
            reasoning_content_behavior=peer.ReasoningContentBehavior.Reject
        )
        self.seen: list[list[int]] = []
        self.lock = threading.Lock()

    def refused(self, headers: Any) -> dict[str, Any] | None:
        """None for the right key, else the official 401 body."""
        scheme, _, token = (headers.get("authorization") or "").partition(" ")
        key = token.strip() if scheme.lower() == "bearer" and token.strip() else None
        key = key or headers.get("x-api-key") or None
        if key == self.api_key:
            return None
        if key is None:
            return error(
                "Authentication Fails (auth header format should be Bearer sk-...)",
                "authentication_error",
            )
        return error(
            f"Authentication Fails, Your api key: ****{key[-4:]} is invalid", "authentication_error"
        )

    def cache_hits(self, ids: list[int]) -> int:
        """Whole blocks of the longest prefix shared with an earlier prompt (not the last one)."""
        with self.lock:
            best = 0
            for earlier in self.seen:
                common = 0
                for a, b in zip(earlier, ids, strict=False):
                    if a != b:
                        break
                    common += 1
                best = max(best, common)
            self.seen.append(ids)
        return min(best, len(ids) - 1) // BLOCK * BLOCK


def facts(converted: Any) -> RequestFacts:
    """What the stand-in model sees of a request the published library converted."""
    parsing = converted.parsing_options
    conversation = converted.conversation
    stage = parsing.thinking_initial_stage
    tools = [(t.name, t.parameters) for t in conversation.tools or []]
    return RequestFacts(
        thinking=stage is not None and stage.starts_in_reasoning(),
        forced=parsing.starts_in_tool_calls,
        may_call=parsing.parse_tool_calls,
        tools=tools,
        response_format=conversation.response_format,
        response_schema=conversation.response_schema,
    )


def generate(host: Host, path: str, body: bytes) -> tuple[int, dict[str, Any] | None, Any]:
    """(status, error body or None, chunk source) for one protocol request."""
    request_type, response_type, prefix = ROUTES[path]
    try:
        request = request_type(body)
        model = request.model
        echo = request.echo() if request_type is peer.ResponsesRequest else None
        converted = request.convert(host.options)
    except peer.ConversionError as exc:
        return exc.status_code, json.loads(exc.body), None
    except ValueError as exc:
        status = 400 if "JSON" in str(exc) else 422
        return status, error(f"Invalid request body: {exc}"), None
    prompt = list(host.encoding.encode(converted.conversation))
    hit = host.cache_hits(prompt)
    response_id = prefix + secrets.token_hex(12)
    generator = request_type.chunk_generator(converted, response_id, model)
    if echo is not None:
        generator = generator.with_echo(echo)
    processor = peer.StreamProcessor(generator, converted.parsing_options, host.tokenizer)
    options = converted.inference_options
    top = (options.top_logprobs or 0) if options.logprobs else 0
    usage = peer.PromptUsage(prompt_tokens=len(prompt), prompt_cache_hit_tokens=hit)

    def chunks() -> Any:
        yield from processor.push(peer.InferenceChunk.ready(prompt_usage=usage))
        ids = host.tokenizer.encode(model_text(host.style, facts(converted)))
        finish = peer.InferenceFinishReason.Stop
        for used, token in enumerate(ids, start=1):
            logprobs = [fake_logprobs(token, top)] if options.logprobs else None
            yield from processor.push(peer.InferenceChunk.tokens([token], logprobs))
            if processor.finished:
                return
            if options.max_tokens is not None and used >= options.max_tokens:
                finish = peer.InferenceFinishReason.Length
                break
        yield from processor.push(peer.InferenceChunk.finish(finish))
        yield from processor.finish()

    accumulated = response_type(response_id, model, int(time.time()), len(prompt), hit)
    return 200, None, (converted.stream, response_type, accumulated, chunks())


class Handler(BaseHTTPRequestHandler):
    """One request per connection (HTTP/1.0): the body is sent as it is produced."""

    host: Host

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def _json(self, status: int, body: Any) -> None:
        data = json.dumps(body, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        """`/v1/models`; the protocol routes take POST only."""
        if self.path in ROUTES:
            self._json(405, error("Method Not Allowed"))
        elif self.path != "/v1/models":
            self._json(404, error("Not Found"))
        elif (refused := self.host.refused(self.headers)) is not None:
            self._json(401, refused)
        else:
            data = [{"id": m, "object": "model", "owned_by": "deepseek"} for m in MODELS]
            self._json(200, {"object": "list", "data": data})

    def do_POST(self) -> None:
        """A protocol request."""
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.path not in ROUTES:
            self._json(404, error("Not Found"))
            return
        if (refused := self.host.refused(self.headers)) is not None:
            self._json(401, refused)
            return
        try:
            json.loads(body)
        except ValueError as exc:
            self._json(400, error(f"Invalid JSON request body: {exc}"))
            return
        status, failure, source = generate(self.host, self.path, body)
        if failure is not None:
            self._json(status, failure)
            return
        stream, response_type, accumulated, chunks = source
        if not stream:
            for chunk in chunks:
                accumulated.accumulate(chunk)
            self._json(200, json.loads(accumulated.to_json()))
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for chunk in chunks:
            name = response_type.sse_event_name(chunk)
            head = f"event: {name}\n" if name else ""
            self.wfile.write(f"{head}data: {chunk.to_json()}\n\n".encode())
            self.wfile.flush()
        done = response_type.sse_done_data()
        if done is not None:
            self.wfile.write(f"data: {done}\n\n".encode())


def main(style: str, api_key: str, tokenizer_json: str) -> None:
    """Serve until stdin closes."""
    Handler.host = Host(style, api_key, tokenizer_json)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_address[1], flush=True)
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main(*sys.argv[1:4])
