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


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    limits = ConnectionLimits(
        header_timeout_s=TIMEOUT_S, body_timeout_s=TIMEOUT_S, max_connections=CAP
    )
    live = start_server(
        ServerSettings(api_key=API_KEY, max_completion_tokens=2, connection_limits=limits)
    )
    yield live
    live.stop()


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


def test_slow_headers_and_bodies_are_answered_408_and_closed(server: LiveServer) -> None:
    start = time.monotonic()
    slow = open_slow(server, 20, PARTIAL_HEADERS) + open_slow(server, 20, PARTIAL_BODY)
    received = [status_and_error(answer(sock)) for sock in slow]
    elapsed = time.monotonic() - start
    assert all(status == 408 for status, _ in received)
    assert {message for _, message in received} == {
        "Request Timeout: the request headers took too long",
        "Request Timeout: the request body took too long",
    }
    assert TIMEOUT_S <= elapsed < TIMEOUT_S + 3
    assert chat_works(server)


def test_the_cap_makes_room_by_closing_the_longest_waiting(server: LiveServer) -> None:
    """Three times the cap in slow connections: the open count stays at the cap, the oldest
    waiting ones are answered 503, and a normal client is still served meanwhile."""
    slow = open_slow(server, 3 * CAP, PARTIAL_HEADERS)
    time.sleep(0.2)  # the server accepts them all
    assert open_connections(server) <= CAP
    assert chat_works(server)
    statuses = [status_and_error(answer(sock))[0] for sock in slow]
    # Evicted: 503 (or a reset when evicted before its bytes were read); the rest timed out.
    assert statuses.count(503) + statuses.count(0) >= 2 * CAP - 1
    assert statuses.count(503) > 0
    assert 0 < statuses.count(408) <= CAP
    assert wait_until(lambda: open_connections(server) == 0)


def test_a_connection_cap_with_every_connection_busy_answers_503(server: LiveServer) -> None:
    """Connections past their headers (here: sending a body) are not closed for newcomers."""
    busy = open_slow(server, CAP, PARTIAL_BODY)
    time.sleep(0.2)
    refused = answer(socket.create_connection(("127.0.0.1", server.port), timeout=10))
    assert status_and_error(refused) == (503, "Server Overloaded")
    assert {status_and_error(answer(sock))[0] for sock in busy} == {408}


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
