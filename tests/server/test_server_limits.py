"""Limits over raw HTTP: body size, concurrency (429), keep-alive comments, disconnect = cancel."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator

import httpx
import openai
import pytest

from deepseek_recipe_engine import EngineConfig
from deepseek_recipe_engine.sequence import Sequence, SequenceStatus
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


def test_keepalive_and_429(narrow: LiveServer) -> None:
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
        first_cm.__exit__(None, None, None)
        rest = [line for line in second_lines if line.startswith("data:")]
        assert rest[-1] == "data: [DONE]"
        final = json.loads(rest[-2].removeprefix("data: "))
        assert 1 <= final["usage"]["completion_tokens"] <= 3
        second_cm.__exit__(None, None, None)
    assert narrow.wait_blocks_free()
    assert wait_until(lambda: narrow.app_in_flight() == 0)


def running_sequence(server: LiveServer) -> Sequence:
    """The one sequence the narrow engine runs (it runs one at a time)."""
    running = list(server.engine.core.scheduler.running)
    assert len(running) == 1
    return running[0]


def wait_until(condition: Callable[[], bool], timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


BUDGET = 1800
# Tokens a sequence may still get between the client's disconnect and the engine's next step.
IN_FLIGHT_TOKENS = 200


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "non-stream"])
def test_disconnect_cancels_the_generation(narrow: LiveServer, stream: bool) -> None:
    """The sequence stops growing right after the client leaves: without cancellation it would
    run on to its budget (nothing else is submitted meanwhile)."""
    url = f"{narrow.base_url}/v1/chat/completions"
    with (
        httpx.Client(timeout=30) as client,
        client.stream("POST", url, json=chat(BUDGET, stream), headers=HEADERS) as response,
    ):
        assert response.status_code == 200
        # Streams send tokens; a non-stream answer sends empty lines until the end.
        assert next(response.iter_lines()) is not None
        assert wait_until(lambda: bool(narrow.engine.core.scheduler.running))
        sequence = running_sequence(narrow)
        assert wait_until(lambda: sequence.num_completion_tokens > 0)
        at_disconnect = sequence.num_completion_tokens
    assert wait_until(lambda: sequence.status is SequenceStatus.FINISHED), "still generating"
    assert sequence.num_completion_tokens < at_disconnect + IN_FLIGHT_TOKENS < BUDGET
    assert narrow.wait_blocks_free(timeout_s=5)
    assert wait_until(lambda: narrow.app_in_flight() == 0)
