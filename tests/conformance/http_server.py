"""A minimal HTTP/1.1 server on 127.0.0.1 for tests: one request per connection, bounded sizes."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 8 * 1024 * 1024


@dataclass
class Request:
    """A parsed request."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Response:
    """A response; `chunks` are written with chunked transfer encoding, one write each."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    chunk_delay_s: float = 0.0


Handler = Callable[[Request], Awaitable[Response]]

REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    422: "Unprocessable Entity",
    500: "Internal Server Error",
    501: "Not Implemented",
    502: "Bad Gateway",
}


async def _read_request(reader: asyncio.StreamReader) -> Request | None:
    head = await reader.readuntil(b"\r\n\r\n")
    if len(head) > MAX_HEADER_BYTES:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    if length > MAX_BODY_BYTES:
        return None
    body = await reader.readexactly(length)
    return Request(method, path, headers, body)


async def _write_response(writer: asyncio.StreamWriter, response: Response) -> None:
    reason = REASONS.get(response.status, "Status")
    head = [
        f"HTTP/1.1 {response.status} {reason}",
        "transfer-encoding: chunked",
        "connection: close",
    ]
    head += [f"{k}: {v}" for k, v in response.headers.items()]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
    for chunk in response.chunks:
        if chunk:
            writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            await writer.drain()
            if response.chunk_delay_s:
                await asyncio.sleep(response.chunk_delay_s)
    writer.write(b"0\r\n\r\n")
    await writer.drain()


@contextlib.asynccontextmanager
async def serve(handler: Handler) -> AsyncIterator[str]:
    """Run `handler` on a random local port; yields the base URL."""

    async def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await _read_request(reader)
            response = Response(413) if request is None else await handler(request)
            await _write_response(writer, response)
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    server = await asyncio.start_server(on_connection, "127.0.0.1", 0, limit=MAX_HEADER_BYTES)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        await server.wait_closed()
