"""The fault-injection proxy: a host in front of the reference server, optionally with another
model, optionally breaking one official behaviour.

Each request goes to the upstream server, which authenticates, validates and counts the prompt
(usage, cache hits). With a stand-in model the proxy then answers every successful request
itself: the model's text through the recipe (`standin.answer`), with the upstream's prompt usage
(the upstream is asked for a single token, its text is not used). A fault edits the request
before it is forwarded, skips a host duty (`Quirks`) or edits the answer on the wire.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from deepseek_recipe_conformance.model import PROTOCOL_PATHS
from deepseek_recipe_conformance.sse import parse_sse
from deepseek_recipe_conformance.views import output_from_body, output_from_stream
from tests.conformance.faults import Fault, Forwarded
from tests.conformance.http_server import Request, Response
from tests.conformance.standin import Quirks, StandinModel, answer, convert_request
from tests.conformance.wire import Wire

PATH_PROTOCOLS = {path: protocol for protocol, path in PROTOCOL_PATHS.items()}
HOP_HEADERS = {"host", "content-length", "transfer-encoding", "connection"}
LIMIT_KEYS = {"chat": "max_tokens", "responses": "max_output_tokens", "messages": "max_tokens"}


def prompt_usage(protocol: str, status: int, raw: bytes, stream: bool) -> tuple[int, int]:
    """(prompt tokens, cache hits) of an upstream answer."""
    if status != 200:
        return 0, 0
    if stream:
        output = output_from_stream(protocol, parse_sse(raw))
    else:
        try:
            output = output_from_body(protocol, json.loads(raw))
        except ValueError:
            return 0, 0
    usage = output.usage
    return (usage.prompt or 0, usage.cache_hit or 0) if usage else (0, 0)


class FaultProxy:
    """Request handler: the upstream's (or the stand-in's) answer, edited by `fault`."""

    def __init__(
        self,
        upstream: str,
        client: httpx.AsyncClient,
        fault: Fault | None,
        model: StandinModel | None = None,
        upstream_key: str = "",
        served_model: str = "DeepSeek-V4-Pro",
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.client = client
        self.fault = fault
        self.model = model
        self.upstream_key = upstream_key
        self.served_model = served_model

    async def __call__(self, request: Request) -> Response:
        """Forward, answer, edit (streams keep one write per event)."""
        protocol = PATH_PROTOCOLS.get(request.path)
        try:
            body: Any = json.loads(request.body)
        except ValueError:
            body = None
        converted = None
        if protocol is not None and isinstance(body, dict) and request.method == "POST":
            converted = convert_request(protocol, body, self.served_model)
        headers = {k: v for k, v in request.headers.items() if k not in HOP_HEADERS}
        forwarded = Forwarded(
            protocol,
            request.method,
            request.path,
            headers,
            request.body,
            converted is not None,
            self.upstream_key,
        )
        if self.fault is not None and self.fault.request is not None:
            self.fault.request(forwarded)
        generate = self.model is not None and converted is not None and protocol is not None
        content = forwarded.body
        if generate and protocol is not None:  # the upstream's text is not used: one token
            content = json.dumps({**body, LIMIT_KEYS[protocol]: 1}).encode()
        upstream = await self.client.request(
            forwarded.method,
            self.upstream + forwarded.path,
            content=content if forwarded.method == "POST" else None,
            headers=forwarded.headers,
        )
        status, raw = upstream.status_code, upstream.content
        headers = {k: v for k, v in upstream.headers.items() if k.lower() not in HOP_HEADERS}
        if generate and status == 200 and converted is not None and protocol is not None:
            assert self.model is not None
            quirks = self.fault.quirks if self.fault is not None else Quirks()
            usage = prompt_usage(protocol, status, raw, converted.stream)
            generated = answer(converted, self.model, usage, cap=None, quirks=quirks)
            status, raw = generated.status, generated.body
            headers = {**headers, **generated.headers}
        if self.fault is None:
            return Response(status, headers, [raw])
        request_body = body if isinstance(body, dict) else {}
        wire = Wire.decode(protocol or "", request_body, status, headers, raw, request.path)
        self.fault.apply(wire)
        return Response(wire.status, wire.headers, wire.encode())
