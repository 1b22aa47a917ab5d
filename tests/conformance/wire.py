"""An HTTP answer in editable form (JSON body or list of SSE events) and back to bytes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from deepseek_recipe_conformance.sse import parse_sse


@dataclass
class Wire:
    """A response being edited by a fault: status, headers and either `body` or `events`."""

    protocol: str
    request: dict[str, Any]
    status: int
    headers: dict[str, str]
    body: Any = None
    events: list[list[Any]] = field(default_factory=list)
    streamed: bool = False
    keepalive: bool = False
    crlf: bool = False
    write_size: int | None = None
    raw_body: bytes = b""
    path: str = ""

    @classmethod
    def decode(
        cls,
        protocol: str,
        request: dict[str, Any],
        status: int,
        headers: dict[str, str],
        raw: bytes,
        path: str = "",
    ) -> Wire:
        """Parse an upstream answer (`protocol` is empty outside the protocol endpoints)."""
        wire = cls(protocol, request, status, dict(headers), raw_body=raw, path=path)
        if headers.get("content-type", "").startswith("text/event-stream"):
            wire.streamed = True
            for event in parse_sse(raw).events:
                data = event.json()
                wire.events.append([event.event, data if data is not None else event.data])
        else:
            try:
                wire.body = json.loads(raw)
            except ValueError:
                wire.body = None
        return wire

    def payloads(self) -> list[dict[str, Any]]:
        """The JSON objects of the stream, in order (editable in place)."""
        return [e[1] for e in self.events if isinstance(e[1], dict)]

    def encode(self) -> list[bytes]:
        """Bytes to send: one write per event (or the JSON body), re-split when `write_size`."""
        out = self._frames()
        if self.write_size is None:
            return out
        joined = b"".join(out)
        return [joined[i : i + self.write_size] for i in range(0, len(joined), self.write_size)]

    def _frames(self) -> list[bytes]:
        if not self.streamed:
            if self.body is None:
                return [self.raw_body]
            return [json.dumps(self.body, ensure_ascii=False, separators=(",", ":")).encode()]
        newline = "\r\n" if self.crlf else "\n"
        out = []
        for name, data in self.events:
            text = (
                data
                if isinstance(data, str)
                else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
            )
            prefix = f": keep-alive{newline}{newline}" if self.keepalive else ""
            head = f"event: {name}{newline}" if name is not None else ""
            out.append(f"{prefix}{head}data: {text}{newline}{newline}".encode())
        return out
