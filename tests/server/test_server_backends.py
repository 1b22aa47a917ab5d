"""The server in front of vLLM and SGLang (vllm_backend.py, sglang_backend.py, remote.py), against
scripted stand-ins that answer with those servers' documented shapes (fake_backends.py).

Each answer must be the library's processing of the ids the backend generated; what the server
sends the backend (prompt ids, sampling settings, grammar) must be the recipe's; failures,
overload, timeouts and disconnects must give the official error bodies and abort the backend's
request; several backends share the load and one out of reach is left out and retried.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from deepseek_recipe import ConversionOptions, Tokenizer, convert
from deepseek_recipe_engine.constraints import request_grammar
from deepseek_recipe_engine.engine import GenerationResult
from deepseek_recipe_engine.remote import EndpointPool, RemoteOptions
from deepseek_recipe_engine.request import Finish, GenerationRequest, Ready, Tokens
from deepseek_recipe_engine.server import ServerSettings
from deepseek_recipe_engine.sglang_backend import SglangBackend, SglangChunkReader, generate_body
from deepseek_recipe_engine.vllm_backend import VllmBackend, completion_body, token_logprobs
from tests.server.fake_backends import (
    EOS,
    FakeServer,
    Script,
    closed_port,
    sglang_events,
    start_fake,
)
from tests.server.live import API_KEY, LiveServer, serve_backend
from tests.server.oracle import Oracle, normalised

OPTIONS = ConversionOptions(reasoning_content_behavior="reject")
HEADERS = {"authorization": f"Bearer {API_KEY}"}
CHAT = {
    "model": "DeepSeek-V4-Pro",
    "messages": [{"role": "user", "content": "Hello!"}],
    "thinking": {"type": "disabled"},
    "seed": 5,
}


def scripted(script: Script) -> Any:
    """The oracle's generation: the script's ids, as the backend streams them."""

    def generate(request: GenerationRequest) -> GenerationResult:
        result = GenerationResult()
        result.add(Ready(len(request.prompt_ids), script.cached_tokens))
        ids = [t for chunk in script.chunks for t in chunk]
        result.add(Tokens(ids, None))
        result.add(Finish("stop", EOS) if script.finish == "stop" else Finish("length"))
        return result

    return generate


def front(
    backend_kind: type[VllmBackend] | type[SglangBackend],
    urls: list[str],
    script: Script,
    **options: Any,
) -> LiveServer:
    settings = ServerSettings(api_key=API_KEY, conversion_options=OPTIONS, default_seed=3)
    backend = backend_kind(
        urls, context_limit=script.max_model_len, options=RemoteOptions(**options)
    )
    return serve_backend(settings, backend, generate_alone=scripted(script))


@pytest.fixture
def fakes() -> Iterator[list[FakeServer]]:
    started: list[FakeServer] = []
    yield started
    for fake in started:
        fake.stop()


@pytest.fixture
def servers() -> Iterator[list[LiveServer]]:
    started: list[LiveServer] = []
    yield started
    for server in started:
        server.stop()


def vllm_pair(
    fakes: list[FakeServer], servers: list[LiveServer], script: Script, **options: Any
) -> tuple[FakeServer, LiveServer]:
    fake = start_fake("vllm", script)
    fakes.append(fake)
    live = front(VllmBackend, [fake.url], script, **options)
    servers.append(live)
    return fake, live


def post(live: LiveServer, path: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{live.base_url}{path}", json=body, headers=HEADERS, timeout=30)


def encoded(body: dict[str, Any], protocol: str = "chat_completions") -> list[int]:
    return convert(body, protocol=protocol, options=OPTIONS).encode(Tokenizer.deepseek_v41())


def test_chat_answer_is_the_library_processing_of_vllm_ids(fakes, servers) -> None:
    script = Script(finish="stop")
    fake, live = vllm_pair(fakes, servers, script)
    body = {**CHAT, "max_tokens": 9, "logprobs": True, "top_logprobs": 2}
    answer = post(live, "/v1/chat/completions", body).json()
    expected = Oracle(live).answer(body, "chat_completions", answer)
    # The oracle leaves logprobs out (the script has none): compare them separately.
    logprobs = answer["choices"][0].pop("logprobs")
    expected["choices"][0].pop("logprobs")
    assert normalised(answer) == expected
    assert answer["choices"][0]["finish_reason"] == "stop"
    assert answer["usage"]["prompt_cache_hit_tokens"] == script.cached_tokens
    assert [entry["logprob"] for entry in logprobs["content"]] == [-0.25, -0.25, -0.25]
    assert [len(entry["top_logprobs"]) for entry in logprobs["content"]] == [2, 2, 2]
    probe, generation = fake.requests
    prompt = encoded(body)
    assert probe["prompt"] == prompt and probe["max_tokens"] == 1 and not probe.get("stream")
    assert generation["prompt"] == prompt
    assert generation["add_special_tokens"] is False
    assert generation["stop_token_ids"] == [EOS]
    assert generation["max_tokens"] == 9 and generation["seed"] == 5
    assert (generation["temperature"], generation["top_p"], generation["top_k"]) == (1.0, 1.0, 0)
    assert generation["logprobs"] == 2 and generation["return_tokens_as_token_ids"] is True
    assert generation["return_token_ids"] is True and "structured_outputs" not in generation
    assert live.backend.prompt_echo.identical == 1  # type: ignore[attr-defined]
    assert live.wait_idle()


def test_stream_and_messages_start_carry_the_cache_hits(fakes, servers) -> None:
    script = Script(cached_tokens=48)
    _, live = vllm_pair(fakes, servers, script)
    body = {"model": "DeepSeek-V4-Pro", "max_tokens": 8, "messages": CHAT["messages"]}
    raw = post(live, "/v1/messages", {**body, "stream": True})
    start = json.loads(raw.text.split("data: ", 1)[1].split("\n", 1)[0])
    assert start["type"] == "message_start"
    assert start["message"]["usage"]["cache_read_input_tokens"] == 48
    whole = post(live, "/v1/messages", body).json()
    assert normalised(whole) == Oracle(live).answer(body, "messages", whole)


def test_constraint_is_sent_as_the_recipe_grammar(fakes, servers) -> None:
    fake, live = vllm_pair(fakes, servers, Script())
    body = {
        **CHAT,
        "messages": [{"role": "user", "content": "Answer in json"}],
        "response_format": {"type": "json_object"},
        "max_tokens": 4,
    }
    assert post(live, "/v1/chat/completions", body).status_code == 200
    grammar = request_grammar(convert(body, protocol="chat_completions", options=OPTIONS))
    assert grammar is not None
    assert fake.generations()[0]["structured_outputs"] == {"grammar": grammar}


def test_invalid_constraint_is_refused_before_the_backend(fakes, servers) -> None:
    fake, live = vllm_pair(fakes, servers, Script())
    body = {
        "model": "DeepSeek-V4-Pro",
        "input": "hi",
        "text": {"format": {"type": "json_schema", "name": "x", "schema": {"type": "bogus"}}},
    }
    answer = post(live, "/v1/responses", body)
    assert answer.status_code == 400
    assert fake.requests == []


def test_client_disconnect_aborts_the_vllm_request(fakes, servers) -> None:
    script = Script(chunks=[[300 + i] for i in range(40)], chunk_delay_s=0.1)
    fake, live = vllm_pair(fakes, servers, script)
    body = {**CHAT, "max_tokens": 40, "stream": True}
    with httpx.stream(
        "POST", f"{live.base_url}/v1/chat/completions", json=body, headers=HEADERS, timeout=30
    ) as response:
        for line in response.iter_lines():
            if line.startswith("data:"):
                break
    assert fake.wait_for(lambda: fake.aborted == 1)
    assert fake.completed == 0
    assert live.wait_idle()


def test_stop_sequence_ends_the_answer_and_aborts_the_vllm_request(fakes, servers) -> None:
    tokenizer = Tokenizer.deepseek_v4()
    words = ["Hello", " there", " STOP", " and", " more"]
    chunks = [tokenizer.encode(w) for w in words] + [[300 + i] for i in range(20)]
    fake, live = vllm_pair(fakes, servers, Script(chunks=chunks, chunk_delay_s=0.05))
    answer = post(live, "/v1/chat/completions", {**CHAT, "max_tokens": 64, "stop": ["STOP"]})
    assert answer.json()["choices"][0]["message"]["content"] == "Hello there "
    assert answer.json()["choices"][0]["finish_reason"] == "stop"
    assert fake.wait_for(lambda: fake.aborted == 1)


@pytest.mark.parametrize(
    ("status", "expected_status", "message"),
    [
        (503, 503, "Server Overloaded"),
        (429, 503, "Server Overloaded"),
        (500, 500, "Server Error"),
        (400, 400, "scripted failure"),
    ],
)
def test_backend_refusals_are_official_errors(
    fakes, servers, status: int, expected_status: int, message: str
) -> None:
    _, live = vllm_pair(fakes, servers, Script(status=status))
    answer = post(live, "/v1/chat/completions", {**CHAT, "max_tokens": 4})
    assert answer.status_code == expected_status
    error = answer.json()["error"]
    assert error["message"] == message
    kind = "server_error" if expected_status >= 500 else "invalid_request_error"
    assert error["type"] == kind and error["param"] is None
    assert live.wait_idle() and live.app_in_flight() == 0


def test_no_reachable_backend_is_503(servers) -> None:
    live = front(VllmBackend, [f"http://127.0.0.1:{closed_port()}"], Script())
    servers.append(live)
    answer = post(live, "/v1/chat/completions", {**CHAT, "max_tokens": 4})
    assert answer.status_code == 503
    assert answer.json()["error"]["message"] == "Server Overloaded"


def test_failure_during_generation_is_an_error_body(fakes, servers) -> None:
    _, live = vllm_pair(fakes, servers, Script(error_after_chunks=1))
    answer = post(live, "/v1/chat/completions", {**CHAT, "max_tokens": 4})
    assert answer.status_code == 200  # the answer had started (keep-alives may have been sent)
    error = json.loads(answer.text.strip())["error"]
    assert error["type"] == "server_error" and error["message"].startswith("Server Error")


def test_backend_timeout_ends_the_answer_with_an_error(fakes, servers) -> None:
    script = Script(chunk_delay_s=2.0)
    fake, live = vllm_pair(fakes, servers, script, read_timeout_s=0.3)
    answer = post(live, "/v1/chat/completions", {**CHAT, "max_tokens": 4})
    error = json.loads(answer.text.strip())["error"]
    assert error["type"] == "server_error"
    assert fake.wait_for(lambda: fake.aborted == 1)


def test_changed_prompt_echo_fails_the_request(fakes, servers) -> None:
    _, live = vllm_pair(fakes, servers, Script(echo_offset=7))
    answer = post(live, "/v1/chat/completions", {**CHAT, "max_tokens": 4})
    assert json.loads(answer.text.strip())["error"]["type"] == "server_error"
    echo = live.backend.prompt_echo  # type: ignore[attr-defined]
    assert (echo.identical, echo.different) == (0, 1)


def test_load_goes_to_the_backend_with_fewest_requests(fakes, servers) -> None:
    script = Script(chunks=[[300 + i] for i in range(30)], chunk_delay_s=0.1)
    first, second = start_fake("vllm", script), start_fake("vllm", script)
    fakes += [first, second]
    live = front(VllmBackend, [first.url, second.url], script)
    servers.append(live)
    body = {**CHAT, "max_tokens": 30, "stream": True}
    url = f"{live.base_url}/v1/chat/completions"
    with httpx.stream("POST", url, json=body, headers=HEADERS, timeout=30) as held:
        next(held.iter_lines())  # one generation in flight on one backend
        busy = first if first.generations() else second
        post(live, "/v1/chat/completions", {**CHAT, "max_tokens": 2})
        idle = second if busy is first else first
        assert len(busy.generations()) == 1 and len(idle.generations()) == 1


def test_backend_out_of_reach_is_left_out_then_retried(fakes, servers) -> None:
    port = closed_port()
    script = Script()
    working = start_fake("vllm", script)
    fakes.append(working)
    live = front(VllmBackend, [f"http://127.0.0.1:{port}", working.url], script, retry_after_s=1.0)
    servers.append(live)
    for _ in range(4):
        assert post(live, "/v1/chat/completions", {**CHAT, "max_tokens": 2}).status_code == 200
    assert len(working.generations()) == 4
    down = live.backend.pool.endpoints[0]  # type: ignore[attr-defined]
    assert down.down_until > time.monotonic()
    revived = start_fake("vllm", script, port=port)  # the server comes back
    fakes.append(revived)
    time.sleep(1.1)
    for _ in range(4):
        assert post(live, "/v1/chat/completions", {**CHAT, "max_tokens": 2}).status_code == 200
    assert revived.generations() and down.down_until == 0.0


def test_endpoint_pool_ranks_by_outstanding_and_skips_endpoints_down() -> None:
    now = [100.0]
    pool = EndpointPool(["http://a", "http://b", "http://c"], 5.0, clock=lambda: now[0])
    a, b, c = pool.endpoints
    a.outstanding, b.outstanding, c.outstanding = 2, 0, 1
    assert pool.ranked() == [b, c, a]
    pool.mark_down(b)
    assert pool.ranked() == [c, a]
    now[0] += 5.0
    assert pool.ranked()[0] is b
    a.outstanding = b.outstanding = c.outstanding = 0
    firsts = {pool.ranked()[0].url for _ in range(3)}
    assert firsts == {"http://a", "http://b", "http://c"}  # ties are taken in turn


def test_vllm_logprobs_keep_the_top_alternatives_only() -> None:
    chunk = {
        "tokens": ["token_id:7", "token_id:9"],
        "token_logprobs": [-0.1, -3.0],
        "top_logprobs": [
            {"token_id:7": -0.1, "token_id:8": -2.0},
            {"token_id:4": -0.5, "token_id:5": -1.0, "token_id:9": -3.0},
        ],
    }
    first, second = token_logprobs(chunk, 2)
    assert (first.token_id, first.logprob, first.top_logprobs) == (7, -0.1, [(7, -0.1), (8, -2.0)])
    assert second.token_id == 9 and second.top_logprobs == [(4, -0.5), (5, -1.0)]


# --- SGLang -------------------------------------------------------------------------------------


def sglang_request(**fields: Any) -> GenerationRequest:
    return GenerationRequest(prompt_ids=[5, 6, 7], stop_token_ids=[EOS], **fields)


def test_vllm_body_biases_banned_tokens_away() -> None:
    request = GenerationRequest(prompt_ids=[5, 6], stop_token_ids=[EOS], banned_token_ids=[3, 9])
    assert completion_body(request)["logit_bias"] == {"3": -100.0, "9": -100.0}
    assert "logit_bias" not in completion_body(GenerationRequest(prompt_ids=[5, 6]))


@pytest.mark.parametrize("incremental", [False, True], ids=["cumulative", "incremental"])
def test_sglang_chunks_from_documented_events(incremental: bool) -> None:
    script = Script(chunks=[[300, 301], [302], [303, 304]], finish="stop", cached_tokens=2)
    request = sglang_request(max_tokens=9, logprobs=True, top_logprobs=2)
    events = sglang_events(script, generate_body(request), incremental=incremental)
    reader = SglangChunkReader(request)
    chunks = [chunk for event in events for chunk in reader.read(event)]
    assert chunks[0] == Ready(3, 2)
    tokens = [c for c in chunks if isinstance(c, Tokens)]
    assert [t.token_ids for t in tokens] == [[300, 301], [302], [303, 304]]
    assert all(
        lp.top_logprobs == [(lp.token_id, -0.5), (lp.token_id + 1, -1.5)]
        for t in tokens
        for lp in t.logprobs or []
    )
    assert chunks[-1] == Finish("stop", EOS)


def test_sglang_generate_body_is_explicit() -> None:
    request = sglang_request(max_tokens=9, temperature=0.5, top_p=0.9, seed=4, grammar="start: x")
    body = generate_body(request)
    assert body["input_ids"] == [5, 6, 7] and body["stream"] is True
    sampling = body["sampling_params"]
    assert sampling["max_new_tokens"] == 9 and sampling["sampling_seed"] == 4
    assert (sampling["temperature"], sampling["top_p"], sampling["top_k"]) == (0.5, 0.9, -1)
    assert sampling["stop_token_ids"] == [EOS] and sampling["ebnf"] == "start: x"
    assert "return_logprob" not in body and "logit_bias" not in sampling
    banned = generate_body(sglang_request(banned_token_ids=[3, 9]))["sampling_params"]
    assert banned["logit_bias"] == {"3": -100.0, "9": -100.0}


@pytest.mark.parametrize("incremental", [False, True], ids=["cumulative", "incremental"])
def test_chat_through_sglang_is_the_library_answer(fakes, servers, incremental: bool) -> None:
    script = Script(finish="stop", cached_tokens=16)
    fake = start_fake("sglang", script, incremental=incremental)
    fakes.append(fake)
    live = front(SglangBackend, [fake.url], script)
    servers.append(live)
    body = {**CHAT, "max_tokens": 9}
    answer = post(live, "/v1/chat/completions", body).json()
    assert normalised(answer) == Oracle(live).answer(body, "chat_completions", answer)
    assert fake.requests[0]["input_ids"] == encoded(body)
    streamed = post(live, "/v1/chat/completions", {**body, "stream": True})
    assert streamed.text.endswith("data: [DONE]\n\n")
