"""Limits over raw HTTP: body size, concurrency (429), keep-alive comments, disconnect = cancel."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import openai
import pytest

from deepseek_recipe_engine import EngineConfig
from deepseek_recipe_engine.server import ServerSettings
from tests.server.live import API_KEY, LiveServer, start_server

HEADERS = {"authorization": f"Bearer {API_KEY}"}


def chat(max_tokens: int, stream: bool = True) -> dict[str, object]:
    return {
        "model": "DeepSeek-V4-Pro",
        "messages": [{"role": "user", "content": "Tell me a long story."}],
        "max_tokens": max_tokens,
        "stream": stream,
        "thinking": {"type": "disabled"},
    }


@pytest.fixture(scope="module")
def narrow() -> Iterator[LiveServer]:
    """One sequence at a time, two generations in flight at most, quick keep-alives."""
    server = start_server(
        ServerSettings(
            api_key=API_KEY,
            max_concurrent_requests=2,
            keepalive_interval_s=0.05,
            max_body_bytes=4096,
        ),
        EngineConfig(model="tiny", max_num_seqs=1),
    )
    yield server
    server.stop()


def test_missing_key_is_401(narrow: LiveServer) -> None:
    response = httpx.post(f"{narrow.base_url}/v1/chat/completions", json=chat(2, False))
    assert response.status_code == 401
    assert response.json() == {
        "error": {
            "message": "Authentication Fails (auth header format should be Bearer sk-...)",
            "type": "authentication_error",
            "param": None,
            "code": "invalid_request_error",
        }
    }


def test_body_too_large_is_413(narrow: LiveServer) -> None:
    body = chat(2, False)
    body["messages"] = [{"role": "user", "content": "x" * 5000}]
    response = httpx.post(f"{narrow.base_url}/v1/chat/completions", json=body, headers=HEADERS)
    assert response.status_code == 413
    assert response.json()["error"]["type"] == "invalid_request_error"


def test_invalid_json_is_400(narrow: LiveServer) -> None:
    response = httpx.post(
        f"{narrow.base_url}/v1/chat/completions", content=b"{not json", headers=HEADERS
    )
    assert response.status_code == 400
    assert set(response.json()["error"]) == {"message", "type", "param", "code"}


def test_unknown_path_and_wrong_method_are_official_errors(narrow: LiveServer) -> None:
    missing = httpx.post(f"{narrow.base_url}/v1/nothing", headers=HEADERS, json={})
    wrong = httpx.get(f"{narrow.base_url}/v1/chat/completions", headers=HEADERS)
    for response, status in ((missing, 404), (wrong, 405)):
        assert response.status_code == status
        assert response.headers["content-type"] == "application/json"
        assert set(response.json()["error"]) == {"message", "type", "param", "code"}
    assert wrong.headers["allow"] == "POST"


def test_keepalive_429_and_disconnect_cancel(narrow: LiveServer) -> None:
    url = f"{narrow.base_url}/v1/chat/completions"
    with httpx.Client(timeout=60) as first_client, httpx.Client(timeout=60) as second_client:
        first_cm = first_client.stream("POST", url, json=chat(1500), headers=HEADERS)
        first = first_cm.__enter__()
        assert first.status_code == 200
        first_lines = first.iter_lines()
        assert next(line for line in first_lines if line.startswith("data:"))  # generating
        second_cm = second_client.stream("POST", url, json=chat(3), headers=HEADERS)
        second = second_cm.__enter__()
        assert second.status_code == 200
        # A third generation is over the limit: the official 429, through the SDK.
        client = openai.OpenAI(base_url=f"{narrow.base_url}/v1", api_key=API_KEY, max_retries=0)
        with pytest.raises(openai.RateLimitError) as caught:
            client.chat.completions.create(
                model="DeepSeek-V4-Pro", messages=[{"role": "user", "content": "hi"}]
            )
        assert caught.value.response.json() == {
            "error": {
                "message": "Rate Limit Reached",
                "type": "rate_limit_error",
                "param": None,
                "code": "invalid_request_error",
            }
        }
        # The second request waits behind the first (one sequence at a time): keep-alives.
        second_lines = second.iter_lines()
        waiting = [next(second_lines) for _ in range(4)]
        assert ": keep-alive" in waiting
        # Dropping the first connection cancels its generation; the second one then runs.
        first_cm.__exit__(None, None, None)
        rest = [line for line in second_lines if line.startswith("data:")]
        assert rest[-1] == "data: [DONE]"
        final = json.loads(rest[-2].removeprefix("data: "))
        assert 1 <= final["usage"]["completion_tokens"] <= 3
        second_cm.__exit__(None, None, None)
    assert narrow.wait_blocks_free()  # 1500 tokens would take far longer: it was cancelled
    deadline = time.monotonic() + 5
    while narrow.app_in_flight() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert narrow.app_in_flight() == 0


def test_non_stream_keepalive_and_disconnect_cancel(narrow: LiveServer) -> None:
    url = f"{narrow.base_url}/v1/chat/completions"
    with (
        httpx.Client(timeout=30) as client,
        client.stream("POST", url, json=chat(1500, stream=False), headers=HEADERS) as response,
    ):
        assert response.status_code == 200
        # Tokens flow, but a non-stream answer sends nothing until the end: empty lines meanwhile.
        assert next(response.iter_bytes()).strip() == b""
    # 1500 tokens take far longer than this: the generation was cancelled with the connection.
    assert narrow.wait_blocks_free(timeout_s=5)
    assert narrow.app_in_flight() == 0
