"""An HTTP transport that records every answer an SDK client reads, body included, so that the
SDK tests can validate the raw JSON strictly (tests/server/sdk_strict.py) besides reading the
SDKs' leniently parsed objects."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx2
from pydantic import ValidationError

from tests.server import sdk_strict

PROTOCOL_SUFFIXES = {
    "/chat/completions": "chat_completions",
    "/responses": "responses",
    "/messages": "messages",
}


@dataclass
class Exchange:
    """One request and the answer as far as the client read it."""

    method: str
    path: str
    status: int
    content_type: str
    body: bytearray = field(default_factory=bytearray)

    def events(self) -> list[tuple[str | None, object]]:
        """The complete SSE events of a stream answer."""
        return sdk_strict.parse_sse(self.body.decode("utf-8"))

    def describe(self) -> str:
        """`METHOD path -> status`, for failure messages."""
        return f"{self.method} {self.path} -> {self.status}"


class Recorder:
    """Keeps every exchange of its transports until `take()`."""

    def __init__(self) -> None:
        self._exchanges: list[Exchange] = []

    def transport(self) -> httpx2.BaseTransport:
        """A transport (of `httpx2`, the SDKs' HTTP client) that forwards over HTTP and records
        into this recorder."""
        return _RecordingTransport(self._exchanges)

    def last(self) -> Exchange:
        """The latest exchange (it stays for `take()`)."""
        return self._exchanges[-1]

    def take(self) -> list[Exchange]:
        """The exchanges since the last call."""
        taken = list(self._exchanges)
        self._exchanges.clear()
        return taken


class _TeeStream(httpx2.SyncByteStream):
    def __init__(self, stream: httpx2.SyncByteStream, exchange: Exchange) -> None:
        self._stream = stream
        self._exchange = exchange

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._stream:
            self._exchange.body += chunk
            yield chunk

    def close(self) -> None:
        self._stream.close()


class _RecordingTransport(httpx2.BaseTransport):
    def __init__(self, exchanges: list[Exchange]) -> None:
        self._inner = httpx2.HTTPTransport()
        self._exchanges = exchanges

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = self._inner.handle_request(request)
        exchange = Exchange(
            request.method,
            request.url.path,
            response.status_code,
            response.headers.get("content-type", ""),
        )
        self._exchanges.append(exchange)
        assert isinstance(response.stream, httpx2.SyncByteStream)
        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=_TeeStream(response.stream, exchange),
            extensions=response.extensions,
        )

    def close(self) -> None:
        self._inner.close()


def check_exchange(exchange: Exchange) -> None:
    """Validates an answer strictly as the SDK type of its endpoint: an error body, `/models`, a
    complete answer, or every event of a stream (read to its end by the test)."""
    if exchange.content_type.startswith("text/event-stream"):
        protocol = next(p for s, p in PROTOCOL_SUFFIXES.items() if exchange.path.endswith(s))
        sdk_strict.validate_stream(protocol, exchange.events())
        return
    payload = json.loads(exchange.body)  # leading keep-alive newlines are JSON whitespace
    if exchange.status >= 400:
        sdk_strict.validate_error(payload)
    elif exchange.path.endswith("/models"):
        sdk_strict.validate_models(payload)
    else:
        protocol = next(p for s, p in PROTOCOL_SUFFIXES.items() if exchange.path.endswith(s))
        sdk_strict.validate(sdk_strict.COMPLETE_TYPES[protocol], payload)


def check_all(exchanges: list[Exchange]) -> None:
    """Raises `AssertionError` naming every exchange that does not validate, and why."""
    problems = []
    for exchange in exchanges:
        try:
            check_exchange(exchange)
        except (AssertionError, ValidationError, ValueError) as error:
            problems.append(f"{exchange.describe()}: {error}")
    assert not problems, "answers that do not validate strictly:\n" + "\n".join(problems)
