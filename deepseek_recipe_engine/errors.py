"""The reference server's error answers: one JSON shape for every status it sends.

Every error is `{"error": {"message", "type", "param": null, "code"}}`, the official API's shape.
Client errors (4xx) have the `type` of their class (`invalid_request_error`,
`authentication_error`, `rate_limit_error`) and the `code` `invalid_request_error`, as the
official API sends them; server errors (5xx) have `server_error` as both. Route-level errors are
Starlette responses; `raw_error` is the same answer as HTTP/1.1 bytes for the connection layer,
which answers before any app runs.
"""

from __future__ import annotations

import http
import json
from collections.abc import Mapping
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

__all__ = [
    "SERVER_ERROR",
    "SERVER_OVERLOADED",
    "error_body",
    "error_response",
    "exception_handlers",
    "raw_error",
]

INVALID_REQUEST = "invalid_request_error"

# The names of the official error-code page for 500 and 503.
SERVER_ERROR = "Server Error"
SERVER_OVERLOADED = "Server Overloaded"


def error_body(status: int, message: str, kind: str = INVALID_REQUEST) -> bytes:
    """The official error body for `status`, as compact UTF-8 JSON (`kind` is the 4xx `type`)."""
    if status >= 500:
        kind = code = "server_error"
    else:
        code = INVALID_REQUEST
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def error_response(
    status: int,
    message: str,
    kind: str = INVALID_REQUEST,
    headers: Mapping[str, str] | None = None,
) -> Response:
    """An official error answer."""
    return Response(
        error_body(status, message, kind),
        status_code=status,
        headers=headers,
        media_type="application/json",
    )


def raw_error(status: int, message: str) -> bytes:
    """A complete HTTP/1.1 error answer that closes the connection, for the connection layer."""
    body = error_body(status, message)
    head = (
        f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}\r\n"
        f"content-type: application/json\r\ncontent-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


async def _http_exception(request: Request, error: Exception) -> Response:
    """404, 405 and the other errors Starlette's router raises, in the official shape."""
    assert isinstance(error, HTTPException)
    return error_response(error.status_code, error.detail, headers=error.headers)


async def _unexpected(request: Request, error: Exception) -> Response:
    """A bug: the official 500 body (the ASGI server logs the exception)."""
    return error_response(500, SERVER_ERROR)


def exception_handlers() -> dict[Any, Any]:
    """Starlette's `exception_handlers`: no route error or bug answers plain text."""
    return {HTTPException: _http_exception, Exception: _unexpected}
