"""The async runner: sends each case's requests (bounded concurrency, timeouts, retries)."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from deepseek_recipe_conformance.checks import (
    REGISTRY,
    CheckContext,
    NotApplicable,
    NotExercised,
    Target,
    Violation,
)
from deepseek_recipe_conformance.model import (
    NOT_EXERCISED,
    PROTOCOL_PATHS,
    Case,
    CaseResult,
    CheckOutcome,
    CheckSpec,
    Exchange,
    Finding,
    Latency,
    RunResult,
    Severity,
    Step,
)
from deepseek_recipe_conformance.oracle import NoOracle, Oracle
from deepseek_recipe_conformance.views import output_from_body, output_from_stream

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
"""Statuses treated as transient: the request is retried with backoff."""


@dataclass(frozen=True)
class RunConfig:
    """Where and how to run: target, credentials, concurrency, timeouts and retries.

    `attempts` is how often a case that exercises a situation (a tool call, a length finish)
    is sent until the model produces it; `completion_cap` is the host's own limit on completion
    tokens per answer, if it has one (a length finish there is then correct).
    """

    base_url: str
    api_key: str
    model: str
    concurrency: int = 4
    timeout_s: float = 120.0
    retries: int = 3
    backoff_s: float = 1.0
    model_checks: bool = True
    attempts: int = 2
    completion_cap: int | None = None


ANTHROPIC_VERSION = "2023-06-01"


def headers_for(
    protocol: str, api_key: str, case_id: str, step: Step | None = None
) -> dict[str, str]:
    """Request headers: the case id, and the step's own credentials (`{api_key}` replaced), else
    bearer auth everywhere and `x-api-key` + `anthropic-version` for Messages."""
    headers = {"x-conformance-case": case_id}
    if step is None or step.method == "POST":
        headers["content-type"] = "application/json"
    if step is not None and step.headers is not None:
        return headers | {k: v.replace("{api_key}", api_key) for k, v in step.headers.items()}
    headers["authorization"] = f"Bearer {api_key}"
    if protocol == "messages":
        headers["x-api-key"] = api_key
        headers["anthropic-version"] = ANTHROPIC_VERSION
    return headers


async def _attempt(
    client: httpx.AsyncClient,
    exchange: Exchange,
    step: Step,
    url: str,
    headers: dict[str, str],
) -> None:
    exchange.raw = b""
    exchange.chunk_times = []
    exchange.transport_error = None
    exchange.started_at = time.monotonic()
    text = step.raw if step.raw is not None else json.dumps(exchange.body, ensure_ascii=False)
    content = text.encode("utf-8") if step.method == "POST" else None
    async with client.stream(step.method, url, content=content, headers=headers) as response:
        exchange.status = response.status_code
        exchange.headers = {k.lower(): v for k, v in response.headers.items()}
        buffer = bytearray()
        async for chunk in response.aiter_raw():
            buffer += chunk
            exchange.chunk_times.append((len(buffer) - 1, time.monotonic()))
        exchange.raw = bytes(buffer)
    exchange.finished_at = time.monotonic()


async def send(
    client: httpx.AsyncClient, config: RunConfig, case_id: str, protocol: str, step: Step
) -> Exchange:
    """Send one request; retry transport errors and transient statuses with exponential backoff."""
    endpoint = step.method == "POST" and step.path is None and step.raw is None
    exchange = Exchange(protocol=protocol, body=step.body, stream=step.stream, endpoint=endpoint)
    url = config.base_url.rstrip("/") + (step.path or PROTOCOL_PATHS[protocol])
    headers = headers_for(protocol, config.api_key, case_id, step)
    for attempt in range(config.retries + 1):
        exchange.attempts = attempt + 1
        try:
            request = _attempt(client, exchange, step, url, headers)
            await asyncio.wait_for(request, config.timeout_s)
        except (httpx.HTTPError, httpx.InvalidURL, asyncio.TimeoutError) as exc:
            exchange.status = None
            detail = str(exc) or f"no complete answer within {config.timeout_s:g}s"
            exchange.transport_error = f"{type(exc).__name__}: {detail}"
            exchange.finished_at = time.monotonic()
        transient = exchange.transport_error is not None or exchange.status in RETRY_STATUSES
        if not transient or attempt == config.retries:
            break
        delay = config.backoff_s * (2**attempt) * (1 + random.random() / 4)
        retry_after = exchange.headers.get("retry-after", "")
        if retry_after.isdigit():
            delay = max(delay, min(float(retry_after), 60.0))
        await asyncio.sleep(delay)
    return exchange


def latency_of(exchanges: list[Exchange]) -> Latency | None:
    """TTFT and tokens/s of the first streamed step with a 200 (else the first 200 step).

    Never raises: an answer too malformed to read gives timing without token counts.
    """
    try:
        return _measure(exchanges)
    except Exception:
        candidates = [e for e in exchanges if e.status == 200]
        if not candidates:
            return None
        return Latency(None, candidates[0].finished_at - candidates[0].started_at, None, None)


def _measure(exchanges: list[Exchange]) -> Latency | None:
    candidates = [e for e in exchanges if e.status == 200]
    if not candidates:
        return None
    exchange = next((e for e in candidates if e.stream), candidates[0])
    total = exchange.finished_at - exchange.started_at
    ttft = None
    if exchange.stream:
        output = output_from_stream(exchange.protocol, exchange.sse())
        ttft = _first_token_time(exchange)
    else:
        output = output_from_body(exchange.protocol, exchange.json())
    tokens = output.usage.completion if output.usage else None
    generating = total - (ttft or 0.0)
    rate = tokens / generating if tokens and generating > 0 else None
    return Latency(ttft_s=ttft, total_s=total, completion_tokens=tokens, tokens_per_s=rate)


GENERATED_KEYS = (
    "reasoning_content",
    "content",
    "tool_calls",
    "delta",
    "partial_json",
    "thinking",
    "text",
)


def _carries_tokens(payload: Any, protocol: str) -> bool:
    if not isinstance(payload, dict):
        return False
    if protocol == "chat":
        for choice in payload.get("choices") or []:
            delta = choice.get("delta", {}) if isinstance(choice, dict) else {}
            if any(delta.get(k) for k in ("reasoning_content", "content", "tool_calls")):
                return True
        return False
    if protocol == "responses":
        return str(payload.get("type", "")).endswith(".delta") and bool(payload.get("delta"))
    delta = payload.get("delta") if payload.get("type") == "content_block_delta" else None
    return isinstance(delta, dict) and any(delta.get(k) for k in GENERATED_KEYS)


def _first_token_time(exchange: Exchange) -> float | None:
    for event in exchange.sse().events:
        if _carries_tokens(event.json(), exchange.protocol):
            return exchange.time_at_offset(event.end_offset - 1)
    return None


def evaluate(
    case: Case,
    exchanges: list[Exchange],
    oracle: Oracle,
    model_checks: bool = True,
    target: Target | None = None,
) -> tuple[list[CheckOutcome], list[Finding]]:
    """Run every check of a case over its captured exchanges.

    With `model_checks` False, checks that judge the model's own choices are skipped. A check
    the case exercises whose situation did not arise is `NOT_EXERCISED` (no finding yet).
    """
    ctx = CheckContext(case, exchanges, oracle, target or Target())
    outcomes: list[CheckOutcome] = []
    findings: list[Finding] = []
    for spec in case.checks:
        if spec.assumes_model and not model_checks:
            outcomes.append(CheckOutcome(spec.name, "skipped", "depends on the model's choices"))
            continue
        outcome, found = _run_check(case, spec, ctx)
        outcomes.append(outcome)
        findings += found
    return outcomes, findings


def _run_check(
    case: Case, spec: CheckSpec, ctx: CheckContext
) -> tuple[CheckOutcome, list[Finding]]:
    info = REGISTRY[spec.name]
    params = dict(spec.params)
    violations: list[tuple[str, Violation]] = []
    skipped: list[NotApplicable] = []
    try:
        if info.scope == "case":
            violations = [("", v) for v in info.fn(ctx, **params)]
        else:
            indexes = [params.pop("step")] if "step" in params else range(len(ctx.exchanges))
            for index in indexes:
                label = f"step {index}: " if len(ctx.exchanges) > 1 else ""
                try:
                    step = ctx.step(index)
                    if step.exchange.transport_error is not None and spec.name != "http.status":
                        raise NotApplicable(f"no response: {step.exchange.transport_error}")
                    violations += [(label, v) for v in info.fn(step, **params)]
                except NotApplicable as exc:
                    skipped.append(exc)
            if skipped and len(skipped) == len(list(indexes)):
                exercised = [e for e in skipped if isinstance(e, NotExercised)]
                detail = "; ".join(str(e) for e in skipped)
                raise NotExercised(detail) if exercised else NotApplicable(detail)
    except NotExercised as exc:
        status = NOT_EXERCISED if spec.exercise else "skipped"
        return CheckOutcome(spec.name, status, str(exc)), []
    except NotApplicable as exc:
        return CheckOutcome(spec.name, "skipped", str(exc)), []
    except Exception as exc:
        # The answer has a shape the check cannot read: that is a deviation too.
        observed = f"the check could not read it: {type(exc).__name__}: {exc}"
        violations = [("", Violation("an answer in the official shape", observed))]
    required = case.required if spec.required is None else spec.required
    findings = [
        Finding(
            case=case.id,
            check=spec.name,
            expected=v.expected,
            source=spec.source or info.source,
            observed=label + v.observed,
            severity=spec.severity or v.severity or info.severity,
            required=required,
        )
        for label, v in violations
    ]
    status = "failed" if any(f.severity.value != "info" for f in findings) else "passed"
    return CheckOutcome(spec.name, status, findings[0].observed if findings else ""), findings


async def run_case(
    client: httpx.AsyncClient, config: RunConfig, case: Case, oracle: Oracle
) -> CaseResult:
    """Run one case's steps in order and check them; a case that exercises a situation the
    model did not produce is sent again (up to `config.attempts` times in all), then its
    unexercised checks are reported as `info` findings."""
    target = Target(config.completion_cap)
    attempts = max(1, config.attempts) if case.exercises else 1
    attempt = 0
    while True:
        attempt += 1
        exchanges = [
            await send(client, config, case.id, case.protocol, step) for step in case.steps
        ]
        outcomes, findings = evaluate(case, exchanges, oracle, config.model_checks, target)
        waiting = [o for o in outcomes if o.status == NOT_EXERCISED]
        if not waiting or any(f.fails_run for f in findings) or attempt >= attempts:
            break
    findings += [
        Finding(
            case=case.id,
            check=o.name,
            expected="the situation this case exercises",
            source=REGISTRY[o.name].source,
            observed=f"not exercised in {attempt} attempt(s): {o.detail}",
            severity=Severity.INFO,
            required=False,
        )
        for o in waiting
    ]
    error = None
    if all(e.transport_error is not None for e in exchanges):
        error = exchanges[0].transport_error
    return CaseResult(
        case=case, outcomes=outcomes, findings=findings, latency=latency_of(exchanges), error=error
    )


async def run_suite(
    cases: list[Case],
    config: RunConfig,
    oracle: Oracle | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> RunResult:
    """Run all cases with at most `config.concurrency` in flight; results keep the case order."""
    oracle = oracle or NoOracle()
    semaphore = asyncio.Semaphore(max(1, config.concurrency))
    timeout = httpx.Timeout(config.timeout_s, connect=min(config.timeout_s, 10.0))
    limits = httpx.Limits(max_connections=max(1, config.concurrency))
    started = time.time()
    # Plain-http targets need no TLS context (loading the CA bundle costs ~1 s per client).
    verify = not config.base_url.startswith("http://")
    async with httpx.AsyncClient(
        timeout=timeout, limits=limits, transport=transport, verify=verify
    ) as client:

        async def guarded(case: Case) -> CaseResult:
            async with semaphore:
                result = await run_case(client, config, case, oracle)
            if on_result is not None:
                on_result(result)
            return result

        results = await asyncio.gather(*(guarded(c) for c in cases))
    return RunResult(config.base_url, config.model, started, time.time(), list(results))
