"""The fault-injection proxy: forwards every request to the upstream host and applies one fault."""

from __future__ import annotations

import json

import httpx

from deepseek_recipe_conformance.model import PROTOCOL_PATHS
from tests.conformance.faults import Fault
from tests.conformance.http_server import Request, Response
from tests.conformance.wire import Wire

PATH_PROTOCOLS = {path: protocol for protocol, path in PROTOCOL_PATHS.items()}
HOP_HEADERS = {"host", "content-length", "transfer-encoding", "connection"}


class FaultProxy:
    """Request handler: upstream answer, edited by `fault` (None = pass through unchanged)."""

    def __init__(self, upstream: str, client: httpx.AsyncClient, fault: Fault | None) -> None:
        self.upstream = upstream.rstrip("/")
        self.client = client
        self.fault = fault

    async def __call__(self, request: Request) -> Response:
        """Forward, edit, answer (streams keep one write per event)."""
        headers = {k: v for k, v in request.headers.items() if k not in HOP_HEADERS}
        answer = await self.client.post(
            self.upstream + request.path, content=request.body, headers=headers
        )
        response_headers = {k: v for k, v in answer.headers.items() if k.lower() not in HOP_HEADERS}
        protocol = PATH_PROTOCOLS.get(request.path)
        if protocol is None or self.fault is None:
            return Response(answer.status_code, response_headers, [answer.content])
        try:
            body = json.loads(request.body)
        except ValueError:
            body = {}
        wire = Wire.decode(protocol, body, answer.status_code, response_headers, answer.content)
        self.fault.apply(wire)
        return Response(wire.status, wire.headers, wire.encode())
