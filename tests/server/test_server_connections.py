"""Slow and idle clients cannot hold connections: read deadlines, the connection cap, and one
log line per condition. A few hundred sockets on 127.0.0.1, a few seconds."""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from deepseek_recipe_engine.connections import ConnectionLimits, RepeatFilter
from deepseek_recipe_engine.server import ServerSettings
from tests.server.live import API_KEY, LiveServer, start_server

HEADERS = {"authorization": f"Bearer {API_KEY}"}
TIMEOUT_S = 1.0
CAP = 100
PARTIAL_HEADERS = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
PARTIAL_BODY = (
    b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
    b"Authorization: Bearer " + API_KEY.encode() + b"\r\nContent-Length: 1000\r\n\r\n{"
)


def serve(timeout_s: float, cap: int) -> Iterator[LiveServer]:
    limits = ConnectionLimits(
        header_timeout_s=timeout_s, body_timeout_s=timeout_s, max_connections=cap
    )
    live = start_server(
        ServerSettings(api_key=API_KEY, max_completion_tokens=2, connection_limits=limits)
    )
    yield live
    live.stop()


@pytest.fixture(scope="module")
def quick() -> Iterator[LiveServer]:
    """Short read deadlines."""
    yield from serve(TIMEOUT_S, 1000)


@pytest.fixture(scope="module")
def capped() -> Iterator[LiveServer]:
    """A small connection cap; deadlines longer than a test takes to fill it."""
    yield from serve(10.0, CAP)


def open_slow(server: LiveServer, count: int, data: bytes) -> list[socket.socket]:
    """`count` connections that each send `data` and then nothing."""
    sockets = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        sock.sendall(data)
        sockets.append(sock)
    return sockets


def answer(sock: socket.socket) -> bytes:
    """Everything the server sent before closing the connection (it must close it); empty when
    it reset the connection, as a close with unread input does."""
    received = b""
    with sock:
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except ConnectionResetError:
            return b""
    return received


def status_and_error(received: bytes) -> tuple[int, str]:
    """The status and error message of an answer (0 and "reset" for a reset)."""
    if not received:
        return 0, "reset"
    head, _, body = received.partition(b"\r\n\r\n")
    assert b"content-type: application/json" in head
    return int(head.split()[1]), json.loads(body)["error"]["message"]


def wait_until(condition: Callable[[], bool], timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


def open_connections(server: LiveServer) -> int:
    return len(server.server.server_state.connections)


def chat_works(server: LiveServer) -> bool:
    body = {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}]}
    response = httpx.post(
        f"{server.base_url}/v1/chat/completions", json=body, headers=HEADERS, timeout=10
    )
    return response.status_code == 200 and response.json()["object"] == "chat.completion"


def test_slow_headers_and_bodies_are_answered_408_and_closed(quick: LiveServer) -> None:
    start = time.monotonic()
    slow = open_slow(quick, 20, PARTIAL_HEADERS) + open_slow(quick, 20, PARTIAL_BODY)
    received = [status_and_error(answer(sock)) for sock in slow]
    elapsed = time.monotonic() - start
    assert all(status == 408 for status, _ in received)
    assert {message for _, message in received} == {
        "Request Timeout: the request headers took too long",
        "Request Timeout: the request body took too long",
    }
    assert TIMEOUT_S <= elapsed < TIMEOUT_S + 3
    assert chat_works(quick)


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server has answered or closed `sock` (without waiting)."""
    sock.setblocking(False)
    try:
        sock.recv(65536)
    except BlockingIOError:
        return False
    except ConnectionResetError:
        pass
    return True


def test_the_cap_makes_room_by_closing_the_longest_waiting(capped: LiveServer) -> None:
    """Three times the cap in slow connections: the open count stays at the cap, the oldest
    waiting ones are answered 503 (and closed), and a normal client is still served."""
    slow = open_slow(capped, 3 * CAP, PARTIAL_HEADERS)
    assert wait_until(lambda: open_connections(capped) == CAP)
    assert chat_works(capped)
    closed = [closed_by_server(sock) for sock in slow]
    assert closed[: 2 * CAP] == [True] * 2 * CAP  # the oldest went first
    assert closed.count(False) >= CAP - 1  # the newest stay (one made room for the chat)
    assert open_connections(capped) <= CAP
    for sock in slow:
        sock.close()
    assert wait_until(lambda: open_connections(capped) == 0)


def test_a_connection_cap_with_every_connection_busy_answers_503(capped: LiveServer) -> None:
    """Connections past their headers (here: sending a body) are not closed for newcomers."""
    busy = open_slow(capped, CAP, PARTIAL_BODY)
    assert wait_until(lambda: open_connections(capped) == CAP)
    refused = answer(socket.create_connection(("127.0.0.1", capped.port), timeout=10))
    assert status_and_error(refused) == (503, "Server Overloaded")
    assert not any(closed_by_server(sock) for sock in busy)
    for sock in busy:
        sock.close()
    assert wait_until(lambda: open_connections(capped) == 0)


def test_a_condition_is_logged_once_then_counted() -> None:
    logger = logging.getLogger("tests.repeat_filter")
    logger.propagate = False
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logger.addHandler(handler)
    logger.addFilter(RepeatFilter(interval_s=0.2))
    for _ in range(1000):
        logger.warning("closed %d slow connections", 1)
    logger.warning("another condition")
    time.sleep(0.25)
    logger.warning("closed %d slow connections", 1)
    assert [record.getMessage() for record in records] == [
        "closed 1 slow connections",
        "another condition",
        "closed 1 slow connections (and 999 more times since the last report)",
    ]
