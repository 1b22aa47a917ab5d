"""Fault injection in front of the live reference server: the suite flags every deviation and
raises nothing against conforming hosts whose model is not DeepSeek's.

One reference server per module (tiny random model, 127.0.0.1). The fault proxy sits between
the suite and it. It answers successful requests with a deterministic stand-in model through
the recipe (`standin.py`: a conforming host with another model; the upstream authenticates,
validates and counts the prompt), and applies at most one fault class (`faults.py`).

* Detection: each fault class runs on the cases where its stand-in's answers carry what the
  fault breaks (`Fault.cases`); it is flagged when a required check fails.
* False alarms: every stand-in model (`OTHER_MODELS`: shorter answers, no tool calls, other
  wording, tool calls everywhere) runs the whole suite, and the transport variations
  (`BENIGN`) the streaming cases, all with model checks on; none may raise a finding above
  `info` (cases whose situation a model never produces are reported as not exercised).

Both rates go to `fault_detection.json` in pytest's base temp dir (and to
$CONFORMANCE_FAULT_REPORT when set) and to the terminal summary (tests/conformance/conftest.py).
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
from deepseek_recipe_conformance.checks import REGISTRY
from deepseek_recipe_conformance.model import Case, RunResult, Severity
from deepseek_recipe_conformance.oracle import RecipeOracle
from deepseek_recipe_conformance.runner import RunConfig, run_suite
from tests.conformance.fault_proxy import FaultProxy
from tests.conformance.fault_report import FAULT_SUMMARY
from tests.conformance.faults import BENIGN, FAULTS, OTHER_MODELS, SERVED_MODEL, Fault
from tests.conformance.http_server import serve
from tests.conformance.standin import StandinModel
from tests.server.live import API_KEY, LiveServer, official_rule_server

OPTIONAL_DETECTION = frozenset({"cache_never_hits"})
"""Faults flagged by optional cases only: prefix-cache hits are best effort on the official API
too, so the `cache` family reports them without failing the run."""
RUNS_IN_PARALLEL = 4
"""Suite runs at once (each with 4 requests in flight; the upstream generates one token)."""
BENIGN_CASES = ("streaming.", "tools.named.chat.stream", "tools.named.messages.stream")
TRANSPORT_MODEL = StandinModel("wordy")


@dataclass
class Outcome:
    """What the suite reported for one fault class or one conforming host."""

    name: str
    mimics: str
    cases: list[str]
    findings: list[str] = field(default_factory=list)
    required_failures: int = 0
    checks: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    not_exercised: int = 0

    @property
    def detected(self) -> bool:
        """A fault: flagged by a check that fails the run (any check for optional-only faults)."""
        if self.name in OPTIONAL_DETECTION:
            return bool(self.findings)
        return self.required_failures > 0

    @property
    def false_alarm(self) -> bool:
        """A conforming host: any finding above info, or a case that could not run."""
        return bool(self.findings) or bool(self.errors)


def select(cases: list[Case], prefixes: tuple[str, ...]) -> list[Case]:
    """Cases whose id starts with one of `prefixes`; every prefix must match a case."""
    for prefix in prefixes:
        assert any(c.id.startswith(prefix) for c in cases), f"no case starts with {prefix!r}"
    return [c for c in cases if c.id.startswith(prefixes)]


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    yield from official_rule_server(32)


async def run_through_proxy(
    upstream: str, fault: Fault | None, model: StandinModel, cases: list[Case]
) -> RunResult:
    """Run `cases` (model checks on) against the stand-in host in front of `upstream`."""
    async with (
        httpx.AsyncClient(timeout=60) as client,
        serve(FaultProxy(upstream, client, fault, model, API_KEY, SERVED_MODEL)) as proxy_url,
    ):
        config = RunConfig(proxy_url, API_KEY, SERVED_MODEL, timeout_s=60, retries=0)
        return await run_suite(cases, config, RecipeOracle(SERVED_MODEL))


def outcome(name: str, mimics: str, cases: list[Case], result: RunResult) -> Outcome:
    """Summary of one run."""
    findings = [f for f in result.findings() if f.severity is not Severity.INFO]
    return Outcome(
        name,
        mimics,
        [c.id for c in cases],
        findings=[f"{f.case} {f.check}: {f.observed[:200]}" for f in findings],
        required_failures=len(result.required_failures()),
        checks=sorted({f.check for f in findings}),
        errors=[f"{r.case.id}: {r.error}" for r in result.results if r.error is not None],
        not_exercised=sum(f.severity is Severity.INFO for f in result.findings()),
    )


async def run_all(upstream: str) -> tuple[dict[str, Outcome], dict[str, Outcome]]:
    """Every fault class on its cases and every conforming host on its cases."""
    cases = load_cases(SERVED_MODEL)
    gate = asyncio.Semaphore(RUNS_IN_PARALLEL)

    async def run(
        name: str, mimics: str, fault: Fault | None, model: StandinModel, chosen: list[Case]
    ) -> Outcome:
        async with gate:
            result = await run_through_proxy(upstream, fault, model, chosen)
        return outcome(name, mimics, chosen, result)

    faults = [run(f.name, f.mimics, f, f.model, select(cases, f.cases)) for f in FAULTS]
    # Optional cases are known deviations of the upstream (this project's recipe), not the host's.
    required = [c for c in cases if c.required]
    hosts = [
        run(f"model:{m.style}", f"a conforming host with the {m.style!r} model", None, m, required)
        for m in OTHER_MODELS
    ]
    hosts += [
        run(b.name, b.mimics, b, TRANSPORT_MODEL, select(cases, BENIGN_CASES)) for b in BENIGN
    ]
    done = await asyncio.gather(*faults, *hosts)
    return {o.name: o for o in done[: len(faults)]}, {o.name: o for o in done[len(faults) :]}


def _report(faults: dict[str, Outcome], hosts: dict[str, Outcome], seconds: float) -> dict:
    detected = sum(o.detected for o in faults.values())
    alarms = sum(o.false_alarm for o in hosts.values())
    return {
        "detected": detected,
        "classes": len(faults),
        "detection_rate": detected / len(faults),
        "false_alarms": alarms,
        "conforming_hosts": len(hosts),
        "false_alarm_rate": alarms / len(hosts),
        "seconds": round(seconds, 1),
        "faults": {name: vars(o) | {"detected": o.detected} for name, o in faults.items()},
        "conforming": {name: vars(o) | {"false_alarm": o.false_alarm} for name, o in hosts.items()},
    }


@pytest.fixture(scope="module")
def outcomes(
    server: LiveServer, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, Outcome], dict[str, Outcome]]:
    started = time.monotonic()
    faults, hosts = asyncio.run(run_all(server.base_url))
    report = _report(faults, hosts, time.monotonic() - started)
    text = json.dumps(report, indent=1, ensure_ascii=False)
    path = tmp_path_factory.getbasetemp() / "fault_detection.json"
    path.write_text(text, encoding="utf-8")
    if os.environ.get("CONFORMANCE_FAULT_REPORT"):
        Path(os.environ["CONFORMANCE_FAULT_REPORT"]).write_text(text, encoding="utf-8")
    request.config.stash[FAULT_SUMMARY] = [
        f"fault detection: {report['detected']}/{report['classes']} classes "
        f"({100 * report['detection_rate']:.0f}%), false alarms: {report['false_alarms']}/"
        f"{report['conforming_hosts']} conforming hosts ({100 * report['false_alarm_rate']:.0f}%)"
        f", against the live reference server, {report['seconds']:.0f} s",
        f"per-class report: {path}",
        *[f"missed: {name}" for name, o in faults.items() if not o.detected],
        *[
            f"false alarm: {name}: {o.findings[:1] or o.errors[:1]}"
            for name, o in hosts.items()
            if o.false_alarm
        ],
    ]
    return faults, hosts


def test_at_least_sixty_fault_classes_cover_every_family() -> None:
    assert len(FAULTS) >= 60
    assert len({f.name for f in FAULTS}) == len(FAULTS)
    cases = load_cases(SERVED_MODEL)
    covered = {c.family for f in FAULTS for c in select(cases, f.cases)}
    assert covered == {c.family for c in cases}


def test_every_check_flags_some_fault_class(
    outcomes: tuple[dict[str, Outcome], dict[str, Outcome]],
) -> None:
    fired = {check for o in outcomes[0].values() if o.detected for check in o.checks}
    assert set(REGISTRY) - fired == set()


@pytest.mark.parametrize("name", [f.name for f in FAULTS])
def test_fault_is_flagged(
    name: str, outcomes: tuple[dict[str, Outcome], dict[str, Outcome]]
) -> None:
    found = outcomes[0][name]
    assert found.errors == []
    assert found.detected, f"{name} ({found.mimics}) not flagged on {found.cases}"


@pytest.mark.parametrize(
    "name", [f"model:{m.style}" for m in OTHER_MODELS] + [b.name for b in BENIGN]
)
def test_conforming_host_raises_nothing(
    name: str, outcomes: tuple[dict[str, Outcome], dict[str, Outcome]]
) -> None:
    found = outcomes[1][name]
    assert found.findings == [] and found.errors == [], (found.findings + found.errors)[:10]


def test_rates_are_recorded(
    outcomes: tuple[dict[str, Outcome], dict[str, Outcome]],
    record_testsuite_property: Callable[[str, object], None],
) -> None:
    faults, hosts = outcomes
    detection = sum(o.detected for o in faults.values()) / len(faults)
    false_alarms = sum(o.false_alarm for o in hosts.values()) / len(hosts)
    # Test-suite properties: per-test properties are invalid in JUnit's xunit2 schema (pytest's
    # default), where pytest warns and the warning, an error here, fails the test.
    record_testsuite_property("fault_detection_rate", f"{detection:.4f}")
    record_testsuite_property("false_alarm_rate", f"{false_alarms:.4f}")
    assert detection == 1.0 and false_alarms == 0.0
