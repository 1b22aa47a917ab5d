"""Every bad request gets an official JSON error: bad bodies of any shape, unknown routes, wrong
methods, trailing slashes, input that is not HTTP. Never a 500, never plain text, no redirect."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deepseek_recipe_engine.server import PROTOCOL_PATHS, ServerSettings
from tests.server.live import API_KEY, LiveServer, start_server

HEADERS = {"authorization": f"Bearer {API_KEY}"}
VALID = {
    "/v1/chat/completions": {
        "model": "DeepSeek-V4-Pro",
        "messages": [{"role": "user", "content": "Hi"}],
        "thinking": {"type": "disabled"},
    },
    "/v1/responses": {"model": "DeepSeek-V4-Pro", "input": "Hi", "reasoning": {"effort": "none"}},
    "/v1/messages": {
        "model": "DeepSeek-V4-Pro",
        "max_tokens": 4,
        "messages": [{"role": "user", "content": "Hi"}],
    },
}


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    live = start_server(ServerSettings(api_key=API_KEY, max_completion_tokens=1))
    yield live
    live.stop()


@pytest.fixture(scope="module")
def client(server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, headers=HEADERS, timeout=30) as client:
        yield client


def assert_official_error(response: httpx.Response, status: int | None = None) -> dict[str, Any]:
    """The answer is the official error JSON (with `status` when given); returns its object."""
    assert response.headers["content-type"] == "application/json", response.text[:200]
    assert 400 <= response.status_code < 500, response.text[:200]
    if status is not None:
        assert response.status_code == status, response.text[:200]
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert isinstance(error["message"], str) and error["message"]
    assert error["param"] is None and error["code"] == "invalid_request_error"
    return error


@pytest.mark.parametrize("path", sorted(VALID))
@pytest.mark.parametrize("depth", [129, 1_000, 100_000])
def test_deep_nesting_is_invalid_json(client: httpx.Client, path: str, depth: int) -> None:
    nested = "[" * depth + "]" * depth
    bodies = [nested, json.dumps(VALID[path])[:-1] + f', "metadata": {nested}}}']
    for body in bodies:
        error = assert_official_error(client.post(path, content=body.encode()), 400)
        assert error["message"].startswith("invalid JSON request: recursion limit exceeded")


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (b"", 400),
        (b"{not json", 400),
        (b'{"model": "\xff"}', 400),  # not UTF-8
        (b'{"model": "DeepSeek-V4-Pro", "messages": [], "temperature": NaN}', 400),
        (b'{"model": "DeepSeek-V4-Pro", "messages": [], "max_tokens": 1e999}', 400),
        (b"null", 422),
        (b"[1, 2]", 422),
        (b'{"model": 1}', 422),
    ],
)
def test_bodies_that_are_not_requests(client: httpx.Client, body: bytes, status: int) -> None:
    assert_official_error(client.post("/v1/chat/completions", content=body), status)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=20,
)
FIELD_NAMES = st.sampled_from(
    "model messages input max_tokens temperature top_p stream tools tool_choice thinking "
    "response_format stop logprobs top_logprobs system reasoning stream_options instructions "
    "max_output_tokens text content".split()
)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    path=st.sampled_from(sorted(VALID)),
    changes=st.dictionaries(FIELD_NAMES, JSON_VALUES, max_size=4),
    message=JSON_VALUES,
)
def test_any_body_shape_gets_an_answer_or_an_official_error(
    client: httpx.Client, path: str, changes: dict[str, Any], message: Any
) -> None:
    """A valid request with random fields replaced (and a random message appended): a 200
    answer or a 4xx official error, never a 500."""
    body = {**VALID[path], **changes}
    if isinstance(body.get("messages"), list):
        body["messages"] = [*body["messages"], message]
    response = client.post(path, content=json.dumps(body).encode())
    if response.status_code != 200:
        assert_official_error(response)


@pytest.mark.parametrize("headers", [HEADERS, {}], ids=["with-key", "without-key"])
def test_unknown_paths_wrong_methods_and_trailing_slashes(
    server: LiveServer, headers: dict[str, str]
) -> None:
    with httpx.Client(base_url=server.base_url, headers=headers, follow_redirects=False) as http:
        for path in ("/", "/v2/chat/completions", "/v1/chat/completions/", "/v1/models/"):
            response = http.post(path, json=VALID["/v1/chat/completions"])
            assert "location" not in response.headers
            assert assert_official_error(response, 404)["message"] == "Not Found"
        for method, path in [("GET", "/v1/chat/completions"), ("PUT", "/v1/messages")]:
            response = http.request(method, path)
            assert assert_official_error(response, 405)["message"] == "Method Not Allowed"
            assert response.headers["allow"] == "POST"


def raw_exchange(server: LiveServer, data: bytes) -> bytes:
    """What the server answers to raw bytes before it closes the connection."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


@pytest.mark.parametrize(
    "data",
    [
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",  # a TLS hello
        b"GARBAGE\r\n\r\n",
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
        b"GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 40_000,  # headers over 16 KiB
    ],
    ids=["tls", "garbage", "bad-length", "huge-headers"],
)
def test_input_that_is_not_http_gets_the_official_400(server: LiveServer, data: bytes) -> None:
    head, _, body = raw_exchange(server, data).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 ")
    assert b"content-type: application/json" in head.lower()
    assert json.loads(body)["error"]["message"] == "Invalid HTTP request"


def test_every_protocol_path_is_routed(client: httpx.Client) -> None:
    for path in PROTOCOL_PATHS:
        assert client.post(path, content=b"{").status_code == 400
