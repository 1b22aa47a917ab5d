"""Fault injection in front of the live reference server: the suite must flag every deviation.

One reference server per module (tiny random model, `max_completion_tokens` capped, 127.0.0.1).
The fault proxy sits between the suite and it and applies one deviation class at a time, on the
cases where the server's answers carry what the fault edits (`Fault.cases`). Model checks stay
on: every selected case is one the tiny model passes (`test_clean_pass_through_scores_100`), the
model-dependent ones with toy cases (`toy_cases/`) that constrained decoding at temperature 0
completes within the cap. The detection rate is written to `fault_detection.json` in pytest's
base temp dir (and to $CONFORMANCE_FAULT_REPORT when set) and printed in the terminal summary
(tests/conformance/conftest.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from deepseek_recipe_conformance.cases import load_cases
from deepseek_recipe_conformance.model import Case, RunResult
from deepseek_recipe_conformance.oracle import RecipeOracle
from deepseek_recipe_conformance.runner import RunConfig, run_suite
from tests.conformance.fault_proxy import FaultProxy
from tests.conformance.fault_report import FAULT_SUMMARY
from tests.conformance.faults import BENIGN, FAULTS, Fault
from tests.conformance.http_server import serve
from tests.server.live import API_KEY, LiveServer, official_rule_server

MODEL = "DeepSeek-V4-Pro"
TOY_CASES = Path(__file__).with_name("toy_cases")
MAX_COMPLETION_TOKENS = 32
"""Every answer stops by this many tokens; the toy tool call needs about 21."""
OPTIONAL_DETECTION = frozenset({"cache_never_hits"})
"""Faults flagged by optional cases only: prefix-cache hits are best effort on the official API
too, so the `cache` family reports them without failing the run."""
FAULTS_IN_PARALLEL = 3
"""Fault classes run at once (each with up to 4 requests in flight): the engine batches them."""
MAX_IN_FLIGHT = 4 * FAULTS_IN_PARALLEL
"""Requests in flight for single runs (the clean pass-through, the benign variations)."""
BENIGN_CASES = ("streaming.", "tools.toy_named.chat.stream", "tools.toy_named.messages.stream")


@dataclass
class Detection:
    """What the suite reported for one fault class."""

    fault: Fault
    cases: list[str]
    findings: int = 0
    required_failures: int = 0
    checks: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def detected(self) -> bool:
        """Flagged by a check that fails the run (by any check for optional-only faults)."""
        if self.fault.name in OPTIONAL_DETECTION:
            return self.findings > 0
        return self.required_failures > 0


def all_cases() -> list[Case]:
    """The bundled cases plus the toy-model cases."""
    return load_cases(MODEL) + load_cases(MODEL, TOY_CASES)


def select(cases: list[Case], prefixes: tuple[str, ...]) -> list[Case]:
    """Cases whose id starts with one of `prefixes`; every prefix must match a case."""
    for prefix in prefixes:
        assert any(c.id.startswith(prefix) for c in cases), f"no case starts with {prefix!r}"
    return [c for c in cases if c.id.startswith(prefixes)]


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    yield from official_rule_server(MAX_COMPLETION_TOKENS)


async def run_through_proxy(
    upstream: str, fault: Fault | None, cases: list[Case], concurrency: int = 4
) -> RunResult:
    """Run `cases` against the proxy in front of `upstream`, with `fault` applied (None: none)."""
    async with (
        httpx.AsyncClient(timeout=60) as client,
        serve(FaultProxy(upstream, client, fault)) as proxy_url,
    ):
        config = RunConfig(
            proxy_url, API_KEY, MODEL, concurrency=concurrency, timeout_s=60, retries=0
        )
        return await run_suite(cases, config, RecipeOracle(MODEL))


def failures(result: RunResult) -> list[str]:
    """Every finding and case error, one line each."""
    found = [f"{f.case} {f.check}: {f.observed[:200]}" for f in result.findings()]
    return found + [f"{r.case.id}: {r.error}" for r in result.results if r.error is not None]


async def detect_all(upstream: str) -> dict[str, Detection]:
    """Run every fault class on its cases, `FAULTS_IN_PARALLEL` classes at a time (each through
    its own proxy, so one fault never touches another's answers)."""
    cases = all_cases()
    gate = asyncio.Semaphore(FAULTS_IN_PARALLEL)

    async def detect(fault: Fault) -> Detection:
        selected = select(cases, fault.cases)
        async with gate:
            result = await run_through_proxy(upstream, fault, selected)
        findings = result.findings()
        return Detection(
            fault,
            [c.id for c in selected],
            findings=len(findings),
            required_failures=len(result.required_failures()),
            checks=sorted({f.check for f in findings}),
            errors=[f"{r.case.id}: {r.error}" for r in result.results if r.error is not None],
        )

    detections = await asyncio.gather(*(detect(fault) for fault in FAULTS))
    return {d.fault.name: d for d in detections}


@pytest.fixture(scope="module")
def detections(
    server: LiveServer, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Detection]:
    started = time.monotonic()
    outcome = asyncio.run(detect_all(server.base_url))
    seconds = time.monotonic() - started
    detected = sum(d.detected for d in outcome.values())
    line = (
        f"fault detection: {detected}/{len(outcome)} classes "
        f"({100 * detected / len(outcome):.0f}%) against the live reference server, {seconds:.0f} s"
    )
    report = {
        "detected": detected,
        "classes": len(outcome),
        "rate": detected / len(outcome),
        "seconds": round(seconds, 1),
        "faults": {
            name: {
                "mimics": d.fault.mimics,
                "detected": d.detected,
                "cases": d.cases,
                "findings": d.findings,
                "required_failures": d.required_failures,
                "checks": d.checks,
                "errors": d.errors,
            }
            for name, d in outcome.items()
        },
    }
    text = json.dumps(report, indent=1)
    path = tmp_path_factory.getbasetemp() / "fault_detection.json"
    path.write_text(text, encoding="utf-8")
    if os.environ.get("CONFORMANCE_FAULT_REPORT"):
        Path(os.environ["CONFORMANCE_FAULT_REPORT"]).write_text(text, encoding="utf-8")
    missed = [name for name, d in outcome.items() if not d.detected]
    lines = [line, f"per-class report: {path}"] + [f"missed: {name}" for name in missed]
    request.config.stash[FAULT_SUMMARY] = lines
    return outcome


def test_clean_pass_through_scores_100(server: LiveServer) -> None:
    """Every case a fault runs on passes at 100% through the proxy with no fault, model checks
    included: a finding under a fault is then the fault's doing."""
    cases = select(all_cases(), tuple(p for f in FAULTS for p in f.cases))
    result = asyncio.run(run_through_proxy(server.base_url, None, cases, MAX_IN_FLIGHT))
    assert failures(result) == []
    assert result.passed and result.score == 1.0
    assert server.wait_blocks_free()


def test_at_least_twenty_fault_classes() -> None:
    assert len(FAULTS) >= 20
    assert len({f.name for f in FAULTS}) == len(FAULTS)
    assert all(f.cases for f in FAULTS)


@pytest.mark.parametrize("name", [f.name for f in FAULTS])
def test_fault_is_flagged(name: str, detections: dict[str, Detection]) -> None:
    detection = detections[name]
    assert detection.errors == []
    assert detection.detected, f"{name} ({detection.fault.mimics}) not flagged on {detection.cases}"


def test_detection_rate_is_recorded(
    detections: dict[str, Detection], record_testsuite_property: Callable[[str, object], None]
) -> None:
    rate = sum(d.detected for d in detections.values()) / len(detections)
    # A test-suite property: per-test properties are invalid in JUnit's xunit2 schema (pytest's
    # default), where pytest warns and the warning, an error here, fails the test.
    record_testsuite_property("fault_detection_rate", f"{rate:.4f}")
    assert rate == 1.0


@pytest.mark.parametrize("benign", BENIGN, ids=lambda f: f.name)
def test_benign_variations_are_not_flagged(server: LiveServer, benign: Fault) -> None:
    cases = select(all_cases(), BENIGN_CASES)
    result = asyncio.run(run_through_proxy(server.base_url, benign, cases, MAX_IN_FLIGHT))
    assert failures(result) == []
