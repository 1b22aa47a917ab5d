"""The runner against real sockets: the replay host passes 100%; retries, timeouts, auth headers."""

import asyncio
import json

from deepseek_recipe.stream import StreamProcessor
from deepseek_recipe_conformance.cases import load_cases
from deepseek_recipe_conformance.model import NOT_EXERCISED, Severity
from deepseek_recipe_conformance.oracle import NoOracle, RecipeOracle
from deepseek_recipe_conformance.runner import RunConfig, evaluate, run_suite
from tests.conformance.conftest import chat_body
from tests.conformance.harness import MODEL, all_cases, config, replay_host, run_against
from tests.conformance.http_server import Request, Response, serve


def test_suite_passes_the_faithful_replay_host():
    async def scenario():
        cases = all_cases()
        async with replay_host(cases) as (url, host):
            result = await run_against(url, cases)
        return cases, host, result

    cases, host, result = asyncio.run(scenario())
    assert {case.split(".")[0] for case in host.standin_answers} <= {"json_output", "stop"}
    optional = {c.id for c in cases if not c.required}  # known deviations of this recipe
    found = [f for f in result.findings() if f.severity is not Severity.INFO]
    assert [f for f in found if f.case not in optional] == []
    assert result.passed
    assert len(result.results) == len(cases) >= 150
    streamed = [r for r in result.results if any(s.stream for s in r.case.steps)]
    assert streamed and all(
        r.latency and r.latency.ttft_s is not None
        for r in streamed
        if r.case.family != "validation"
    )
    assert all(
        r.latency and r.latency.tokens_per_s for r in result.results if r.case.family == "usage"
    )


def _plain_chat():
    usage = {
        "prompt_tokens": 3,
        "completion_tokens": 1,
        "total_tokens": 4,
        "prompt_tokens_details": {"cached_tokens": 0},
        "prompt_cache_hit_tokens": 0,
        "prompt_cache_miss_tokens": 3,
    }
    return chat_body({"content": "hi"}, usage=usage)


def _one_case(prefix: str):
    return [c for c in load_cases(MODEL) if c.id.startswith(prefix)][:1]


def test_transient_errors_are_retried_with_backoff():
    calls = []

    async def flaky(request: Request) -> Response:
        calls.append(request)
        if len(calls) == 1:
            return Response(
                503,
                {"content-type": "application/json"},
                [b'{"error": {"message": "Server Overloaded"}}'],
            )
        if len(calls) == 2:
            return Response(429, {"content-type": "application/json", "retry-after": "0"}, [b"{}"])
        return Response(
            200, {"content-type": "application/json"}, [json.dumps(_plain_chat()).encode()]
        )

    async def scenario():
        async with serve(flaky) as url:
            return await run_suite(
                _one_case("usage.non_thinking.chat.body"),
                RunConfig(url, "k", MODEL, retries=3, backoff_s=0.01),
            )

    result = asyncio.run(scenario())
    assert len(calls) == 3
    assert result.passed, result.findings()
    headers = calls[0].headers
    assert (
        headers["authorization"] == "Bearer k"
        and headers["x-conformance-case"] == "usage.non_thinking.chat.body"
    )


def test_messages_requests_carry_x_api_key_and_timeouts_are_errors():
    seen = []

    async def slow(request: Request) -> Response:
        seen.append(request)
        await asyncio.sleep(2)
        return Response(200, {}, [b"{}"])

    async def scenario():
        async with serve(slow) as url:
            cfg = RunConfig(url, "k", MODEL, timeout_s=0.3, retries=1, backoff_s=0.01)
            return await run_suite(_one_case("usage.non_thinking.messages.body"), cfg)

    result = asyncio.run(scenario())
    assert seen[0].path == "/v1/messages"
    assert seen[0].headers["x-api-key"] == "k" and seen[0].headers["anthropic-version"]
    assert len(seen) == 2  # one retry
    assert result.results[0].status == "error" and "Timeout" in (result.results[0].error or "")
    assert not result.passed
    assert [f.check for f in result.findings()] == ["http.status"]


def test_unreachable_host_is_an_error_not_a_crash():
    async def scenario():
        async with serve(lambda r: None) as url:  # type: ignore[arg-type, return-value]
            pass
        return await run_suite(_one_case("thinking.default.chat"), config(url))

    result = asyncio.run(scenario())
    assert result.results[0].status == "error"


def test_model_checks_skip_only_checks_that_assume_the_model():
    case = next(c for c in load_cases(MODEL) if c.id == "equivalence.plain.chat")
    assuming = [s.name for s in case.checks if s.assumes_model]
    assert assuming == ["equivalence.stream_vs_body"]
    outcomes, _ = evaluate(case, [], NoOracle(), model_checks=False)
    skipped = [o for o in outcomes if o.detail == "depends on the model's choices"]
    assert [o.name for o in skipped] == assuming


def test_cases_that_exercise_a_situation_are_retried_then_reported():
    calls = []
    oracle = RecipeOracle(MODEL)

    async def no_tools(request: Request) -> Response:
        """A conforming host whose model never calls a tool."""
        calls.append(request)
        body = json.loads(request.body)
        processor = StreamProcessor(oracle.convert("chat", body))
        prompt = oracle.count_prompt_tokens("chat", body)
        processor.push({"kind": "ready", "prompt_tokens": prompt, "prompt_cache_hit_tokens": 0})
        processor.push({"kind": "text", "content": "Sunny.", "token_count": 2})
        processor.push({"kind": "finish", "finish_reason": "stop"})
        answer = processor.response_json().encode()
        return Response(200, {"content-type": "application/json"}, [answer])

    async def scenario():
        async with serve(no_tools) as url:
            cfg = RunConfig(url, "k", MODEL, retries=0, attempts=3)
            return await run_suite(_one_case("tools.auto.chat.body"), cfg, oracle)

    result = asyncio.run(scenario())
    assert len(calls) == 3
    info = [f for f in result.findings() if f.severity is Severity.INFO]
    assert {f.check for f in info} == {"finish.tool_calls", "tools.arguments_schema"}
    assert all("not exercised in 3 attempt(s)" in f.observed and not f.fails_run for f in info)
    statuses = {o.name: o.status for o in result.results[0].outcomes}
    assert statuses["finish.tool_calls"] == NOT_EXERCISED


def test_steps_send_their_own_credentials_and_routes():
    seen = []

    async def record(request: Request) -> Response:
        seen.append(request)
        return Response(401, {"content-type": "application/json"}, [b"{}"])

    async def scenario():
        cases = [
            c
            for c in load_cases(MODEL)
            if c.id in ("auth.wrong.chat", "auth.x_api_key.messages", "auth.bearer.models")
        ]
        async with serve(record) as url:
            await run_suite(cases, RunConfig(url, "sk-right", MODEL, retries=0))
        return {r.headers["x-conformance-case"]: r for r in seen}

    by_case = asyncio.run(scenario())
    wrong = by_case["auth.wrong.chat"].headers
    assert (
        wrong["authorization"] == "Bearer sk-conformance-invalid-7f3a" and "x-api-key" not in wrong
    )
    anthropic = by_case["auth.x_api_key.messages"].headers
    assert anthropic["x-api-key"] == "sk-right" and "authorization" not in anthropic
    models = by_case["auth.bearer.models"]
    assert models.method == "GET" and models.path == "/v1/models" and models.body == b""
