"""The server's request limits: generations in flight, and request-body bytes held in memory."""

from __future__ import annotations

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from deepseek_recipe_engine.errors import SERVER_OVERLOADED, error_response

__all__ = ["ByteBudget", "ConcurrencyLimit", "read_body"]


class ConcurrencyLimit:
    """Counts requests in flight; refuses beyond the limit instead of queueing."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.in_flight = 0

    def try_acquire(self) -> bool:
        """Take a slot if one is free."""
        if self.in_flight >= self.limit:
            return False
        self.in_flight += 1
        return True

    def release(self) -> None:
        """Give a slot back."""
        self.in_flight -= 1


class ByteBudget:
    """Bytes of request bodies held by all requests together, up to `limit`."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0

    def try_take(self, size: int) -> bool:
        """Hold `size` more bytes if they fit."""
        if self.held + size > self.limit:
            return False
        self.held += size
        return True

    def give_back(self, size: int) -> None:
        """Release bytes taken earlier."""
        self.held -= size


async def read_body(request: Request, max_bytes: int, budget: ByteBudget) -> bytes | Response:
    """The request body, its size taken from `budget` (the caller gives it back), or an error:
    413 over `max_bytes`, 503 when the budget is spent, 400 when the client went away."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        return _too_large(max_bytes)
    body = bytearray()
    failure: Response | None = None
    try:
        async for piece in request.stream():
            if len(body) + len(piece) > max_bytes:
                failure = _too_large(max_bytes)
            elif not budget.try_take(len(piece)):
                failure = error_response(503, SERVER_OVERLOADED)
            if failure is not None:
                break
            body += piece
    except ClientDisconnect:  # the answer goes nowhere; the handler just ends
        failure = error_response(400, "Client disconnected before the request body ended")
    if failure is not None:
        budget.give_back(len(body))
        return failure
    return bytes(body)


def _too_large(limit: int) -> Response:
    return error_response(413, f"Request body too large: the limit is {limit} bytes")
