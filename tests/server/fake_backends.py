"""Scripted stand-ins for vLLM's `/v1/completions` and SGLang's `/generate`, on 127.0.0.1.

Each answers with the shapes those servers document (vllm_backend.py, sglang_backend.py): the
generated ids of a `Script`, in chunks, with the prompt echoed, cache hits, logprobs and a finish.
Every request body is recorded, and so is every stream the client closed before its end (the
backend's abort).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

EOS = 1


@dataclass
class Script:
    """What the fake generates for every request."""

    chunks: list[list[int]] = field(default_factory=lambda: [[300, 301], [302]])
    finish: str = "length"  # `stop` appends the end-of-sentence id to the last chunk
    cached_tokens: int = 32
    max_model_len: int = 4096
    status: int = 200  # another status: every generation request is answered with it
    chunk_delay_s: float = 0.0
    error_after_chunks: int | None = None  # stream an error event after this many chunks
    echo_offset: int = 0  # added to the first echoed prompt id (0: echo what was sent)


@dataclass
class FakeServer:
    """A running fake: its URL, its script and what it saw."""

    script: Script
    requests: list[dict[str, Any]] = field(default_factory=list)
    aborted: int = 0  # streams the client closed before their end
    completed: int = 0
    server: uvicorn.Server | None = None
    thread: threading.Thread | None = None
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def generations(self) -> list[dict[str, Any]]:
        """The generation requests seen (vLLM's cache probes left out)."""
        return [r for r in self.requests if r.get("stream")]

    def wait_for(self, condition: Any, timeout_s: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout_s
        while not condition() and time.monotonic() < deadline:
            time.sleep(0.02)
        return bool(condition())

    def stop(self) -> None:
        assert self.server is not None and self.thread is not None
        self.server.should_exit = True
        self.thread.join(timeout=10)


def _logprobs_vllm(ids: list[int], top: int) -> dict[str, Any]:
    tops = []
    for token in ids:
        alternatives = {f"token_id:{token + k}": -0.5 - k for k in range(max(top, 1))}
        alternatives[f"token_id:{token}"] = -0.25
        tops.append(alternatives)
    return {
        "tokens": [f"token_id:{t}" for t in ids],
        "token_logprobs": [-0.25] * len(ids),
        "top_logprobs": tops,
        "text_offset": [0] * len(ids),
    }


def _vllm_app(fake: FakeServer) -> Starlette:
    script = fake.script

    async def models(request: Request) -> Response:
        data = [{"id": "tiny", "object": "model", "max_model_len": script.max_model_len}]
        return JSONResponse({"object": "list", "data": data})

    async def completions(request: Request) -> Response:
        body = await request.json()
        fake.requests.append(body)
        if script.status != 200:
            return JSONResponse(
                {"error": {"message": "scripted failure", "code": script.status}},
                status_code=script.status,
            )
        usage = {"prompt_tokens": len(body["prompt"]), "completion_tokens": 1}
        usage["prompt_tokens_details"] = {"cached_tokens": script.cached_tokens}
        if not body.get("stream"):  # the cache probe
            choice = {"index": 0, "text": "x", "finish_reason": "length"}
            return JSONResponse({"choices": [choice], "usage": usage})
        return StreamingResponse(_vllm_stream(fake, body), media_type="text/event-stream")

    return Starlette(
        routes=[
            Route("/v1/models", models, methods=["GET"]),
            Route("/v1/completions", completions, methods=["POST"]),
        ]
    )


def _scripted_chunks(script: Script) -> list[list[int]]:
    chunks = [list(c) for c in script.chunks]
    if script.finish == "stop":
        chunks[-1].append(EOS)
    return chunks


async def _vllm_stream(fake: FakeServer, body: dict[str, Any]) -> AsyncIterator[str]:
    script = fake.script
    chunks = _scripted_chunks(script)
    try:
        for index, ids in enumerate(chunks):
            if script.error_after_chunks is not None and index == script.error_after_chunks:
                yield "data: " + json.dumps({"error": {"message": "boom", "code": 500}}) + "\n\n"
                yield "data: [DONE]\n\n"
                fake.completed += 1
                return
            await asyncio.sleep(script.chunk_delay_s)
            choice: dict[str, Any] = {"index": 0, "text": "", "token_ids": ids}
            if index == 0:
                echo = list(body["prompt"])
                echo[0] += script.echo_offset
                choice["prompt_token_ids"] = echo
            if body.get("logprobs") is not None:
                choice["logprobs"] = _logprobs_vllm(ids, body["logprobs"])
            last = index == len(chunks) - 1
            choice["finish_reason"] = script.finish if last else None
            choice["stop_reason"] = None
            yield "data: " + json.dumps({"id": "cmpl-1", "choices": [choice]}) + "\n\n"
        yield "data: [DONE]\n\n"
        fake.completed += 1
    except asyncio.CancelledError:
        fake.aborted += 1
        raise


def _sglang_app(fake: FakeServer, *, incremental: bool) -> Starlette:
    script = fake.script

    async def models(request: Request) -> Response:
        data = [{"id": "tiny", "object": "model", "max_model_len": script.max_model_len}]
        return JSONResponse({"object": "list", "data": data})

    async def generate(request: Request) -> Response:
        body = await request.json()
        fake.requests.append(body)
        if script.status != 200:
            return JSONResponse({"error": {"message": "scripted failure"}}, script.status)
        return StreamingResponse(
            _sglang_stream(fake, body, incremental=incremental), media_type="text/event-stream"
        )

    return Starlette(
        routes=[
            Route("/v1/models", models, methods=["GET"]),
            Route("/generate", generate, methods=["POST"]),
        ]
    )


def sglang_events(
    script: Script, body: dict[str, Any], *, incremental: bool
) -> list[dict[str, Any]]:
    """The streamed `/generate` events of a script, as SGLang documents them."""
    events = []
    output: list[int] = []
    token_logprobs: list[list[Any]] = []
    top_logprobs: list[list[list[Any]]] = []
    chunks = _scripted_chunks(script)
    for index, ids in enumerate(chunks):
        output += ids
        new_logprobs = [[-0.25, t, None] for t in ids]
        new_tops = [
            [[-0.5 - k, t + k, None] for k in range(body.get("top_logprobs_num", 0))] for t in ids
        ]
        token_logprobs += new_logprobs
        top_logprobs += new_tops
        last = index == len(chunks) - 1
        finish = None
        if last:
            finish = (
                {"type": "stop", "matched": EOS}
                if script.finish == "stop"
                else {"type": "length", "length": len(output)}
            )
        meta: dict[str, Any] = {
            "id": "rid",
            "finish_reason": finish,
            "prompt_tokens": len(body["input_ids"]),
            "completion_tokens": len(output),
            "cached_tokens": script.cached_tokens,
        }
        if body.get("return_logprob"):
            meta["output_token_logprobs"] = new_logprobs if incremental else list(token_logprobs)
            meta["output_top_logprobs"] = new_tops if incremental else list(top_logprobs)
        events.append(
            {
                "text": "",
                "output_ids": list(ids) if incremental else list(output),
                "meta_info": meta,
            }
        )
    return events


async def _sglang_stream(
    fake: FakeServer, body: dict[str, Any], *, incremental: bool
) -> AsyncIterator[str]:
    try:
        for event in sglang_events(fake.script, body, incremental=incremental):
            await asyncio.sleep(fake.script.chunk_delay_s)
            yield "data: " + json.dumps(event) + "\n\n"
        yield "data: [DONE]\n\n"
        fake.completed += 1
    except asyncio.CancelledError:
        fake.aborted += 1
        raise


def start_fake(
    kind: str = "vllm", script: Script | None = None, *, incremental: bool = False, port: int = 0
) -> FakeServer:
    """A fake vLLM (`kind="vllm"`) or SGLang (`"sglang"`) server in a background thread, on
    `port` (0: any free port)."""
    fake = FakeServer(script or Script())
    app = _vllm_app(fake) if kind == "vllm" else _sglang_app(fake, incremental=incremental)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    fake.port = sock.getsockname()[1]
    fake.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    fake.thread = threading.Thread(target=fake.server.run, kwargs={"sockets": [sock]}, daemon=True)
    fake.thread.start()
    deadline = time.monotonic() + 20
    while not fake.server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the fake backend did not start")
        time.sleep(0.02)
    return fake


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
