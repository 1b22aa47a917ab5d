"""The connection layer of the reference server: read deadlines, a connection cap, JSON errors.

uvicorn's h11 protocol waits for a request's headers and body as long as the client likes, so a
client that sends them slowly (or never) holds its connection, and a file descriptor, forever.
`GuardedProtocol` adds, per connection:

* a deadline for the request headers (from the connection, or the end of the previous answer,
  to the end of the headers) and one for the body (from the end of the headers to its end); a
  late request is answered 408 and closed;
* a cap on the open connections of the server: a new connection beyond it closes the one that
  has waited longest for its request headers, or is answered 503 when every connection is busy;
* the official JSON error instead of uvicorn's plain-text 400 for input that is not HTTP/1.1.

Conditions are logged once, then at most once a minute with a count (`RepeatFilter`), never once
per socket. `uvicorn_config` builds the uvicorn configuration that uses the protocol.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from deepseek_recipe_engine.errors import SERVER_OVERLOADED, raw_error

__all__ = ["ConnectionLimits", "GuardedProtocol", "RepeatFilter", "uvicorn_config"]

Phase = Literal["headers", "body"]

FD_RESERVE = 128
"""File descriptors kept free beside the connections (cache files, image fetches, logs)."""


class RepeatFilter(logging.Filter):
    """Lets a message through once, then at most once per `interval_s`, with how many times it
    was held back in between: one line per condition, not per socket."""

    def __init__(self, interval_s: float = 60.0) -> None:
        super().__init__()
        self.interval_s = interval_s
        self._last: dict[tuple[int, str], float] = {}
        self._held: dict[tuple[int, str], int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        """Whether `record` is logged; a logged repeat says how many were held back."""
        key = (record.levelno, str(record.msg))
        now = time.monotonic()
        last = self._last.get(key)
        if last is not None and now - last < self.interval_s:
            self._held[key] = self._held.get(key, 0) + 1
            return False
        self._last[key] = now
        held = self._held.pop(key, 0)
        if held:
            record.msg = f"{record.getMessage()} (and {held} more times since the last report)"
            record.args = ()
        return True


logger = logging.getLogger("uvicorn.error.connections")
logger.addFilter(RepeatFilter())


@dataclass(frozen=True)
class ConnectionLimits:
    """How long a client may take to send a request, and how many connections may be open."""

    header_timeout_s: float = 10.0
    """From the connection (or the end of the previous answer) to the end of the headers."""
    body_timeout_s: float = 60.0
    """From the end of the headers to the end of the body."""
    idle_timeout_s: float = 5.0
    """A kept-alive connection with no new request is closed after this (uvicorn's keep-alive)."""
    max_connections: int = 2048
    """Open connections; lowered to fit the process's file-descriptor limit (`fitted`)."""
    accept_backlog: int = 128
    """The listen backlog, which is also how many connections the event loop accepts at once:
    a flood of connections is taken in small batches between the streams' chunks."""

    def fitted(self) -> ConnectionLimits:
        """These limits with `max_connections` within the file-descriptor limit, which is raised
        towards its hard limit first when that is needed and allowed."""
        needed = self.max_connections + FD_RESERVE
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != resource.RLIM_INFINITY and soft < needed:
            raised = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
                soft = raised
            except (ValueError, OSError):
                pass
        if soft == resource.RLIM_INFINITY or soft >= needed:
            return self
        fitted = max(1, soft - FD_RESERVE)
        logger.warning(
            "max_connections lowered from %d to %d to fit the file-descriptor limit %d",
            self.max_connections,
            fitted,
            soft,
        )
        return replace(self, max_connections=fitted)


class GuardedProtocol(H11Protocol):
    """uvicorn's h11 protocol with read deadlines, a connection cap and JSON error answers.

    Subclassed per server by `guarded_protocol`, which sets `limits` and a fresh `waiting`.
    """

    limits: ClassVar[ConnectionLimits]
    waiting: ClassVar[dict[GuardedProtocol, None]]
    """The server's connections waiting for request headers, the longest waiting first."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.logger = logger  # uvicorn's own per-request warnings are rate-limited too
        self._phase: Phase | None = None
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Register the connection, making room under the cap, and start its header deadline."""
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections and not self._evict_waiting():
            logger.warning(
                "connection cap of %d reached with every connection busy: answering 503",
                self.limits.max_connections,
            )
            self._close_with(503, SERVER_OVERLOADED)
            return
        self._follow_request_state()

    def connection_lost(self, exc: Exception | None) -> None:
        """Drop the deadline, then let uvicorn end the request cycle."""
        self._enter(None)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """Parse as uvicorn does, then follow the request into its next phase."""
        super().data_received(data)
        self._follow_request_state()

    def on_response_complete(self) -> None:
        """After an answer the connection waits for the next request's headers."""
        super().on_response_complete()
        self._follow_request_state()

    def send_400_response(self, msg: str) -> None:
        """Input that is not HTTP/1.1 (or headers over h11's 16 KiB): the official JSON 400."""
        self._close_with(400, "Invalid HTTP request")

    def _follow_request_state(self) -> None:
        state = self.conn.their_state
        phase: Phase | None = None
        if not self.transport.is_closing():
            phase = "headers" if state is h11.IDLE else "body" if state is h11.SEND_BODY else None
        if phase != self._phase:
            self._enter(phase)

    def _enter(self, phase: Phase | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self.waiting.pop(self, None)
        self._phase = phase
        if phase == "headers":
            self.waiting[self] = None
            self._deadline = self.loop.call_later(self.limits.header_timeout_s, self._headers_late)
        elif phase == "body":
            self._deadline = self.loop.call_later(self.limits.body_timeout_s, self._body_late)

    def _headers_late(self) -> None:
        logger.warning(
            "closed connections whose request headers took over %s s (408)",
            self.limits.header_timeout_s,
        )
        self._close_with(408, "Request Timeout: the request headers took too long")

    def _body_late(self) -> None:
        logger.warning(
            "closed connections whose request body took over %s s (408)",
            self.limits.body_timeout_s,
        )
        if self.cycle is not None and self.cycle.response_started:
            self._enter(None)
            self.transport.close()
        else:
            self._close_with(408, "Request Timeout: the request body took too long")

    def _evict_waiting(self) -> bool:
        oldest = next((c for c in self.waiting if c is not self), None)
        if oldest is None:
            return False
        logger.warning(
            "connection cap of %d reached: closing the connections waiting longest for headers",
            self.limits.max_connections,
        )
        oldest._close_with(503, SERVER_OVERLOADED)
        return True

    def _close_with(self, status: int, message: str) -> None:
        self._enter(None)
        self.connections.discard(self)  # no longer counts against the cap while it closes
        if not self.transport.is_closing():
            self.transport.write(raw_error(status, message))
            self.transport.close()


def guarded_protocol(limits: ConnectionLimits) -> type[GuardedProtocol]:
    """A `GuardedProtocol` class of one server: its limits and its own waiting set."""
    return type("ServerProtocol", (GuardedProtocol,), {"limits": limits.fitted(), "waiting": {}})


def uvicorn_config(app: Any, limits: ConnectionLimits, **options: Any) -> uvicorn.Config:
    """The uvicorn configuration serving `app` through `GuardedProtocol` with `limits`;
    `options` are passed on (host, port, log_level, ...)."""
    return uvicorn.Config(
        app,
        http=guarded_protocol(limits),
        timeout_keep_alive=limits.idle_timeout_s,  # type: ignore[arg-type]
        backlog=limits.accept_backlog,
        ws="none",  # no WebSocket routes: an upgrade request is plain HTTP here
        **options,
    )
