"""Fault injection: the proxy applies one deviation class at a time; the suite must flag each.

Prints and records the detection rate (also written to $CONFORMANCE_FAULT_REPORT when set).
"""

import asyncio
import json
import os
from pathlib import Path

import httpx

from tests.conformance.fault_proxy import FaultProxy
from tests.conformance.faults import BENIGN, FAULTS
from tests.conformance.harness import all_cases, replay_host, run_against
from tests.conformance.http_server import serve


async def _findings_per_fault(faults):
    cases = all_cases()
    outcome = {}
    async with replay_host(cases) as (url, host), httpx.AsyncClient(timeout=30) as client:
        for fault in faults:
            host.seen.clear()
            async with serve(FaultProxy(url, client, fault)) as proxy_url:
                result = await run_against(proxy_url, cases)
            findings = result.findings()
            outcome[fault.name] = {
                "mimics": fault.mimics,
                "findings": len(findings),
                "required_failures": len(result.required_failures()),
                "families": sorted({r.case.family for r in result.results if r.status != "passed"}),
                "checks": sorted({f.check for f in findings}),
            }
    return outcome


def test_every_fault_class_is_detected(record_property):
    assert len(FAULTS) >= 20
    outcome = asyncio.run(_findings_per_fault(FAULTS))
    detected = [name for name, o in outcome.items() if o["findings"] > 0]
    rate = len(detected) / len(FAULTS)
    print(f"\nfault detection rate: {len(detected)}/{len(FAULTS)} ({100 * rate:.1f}%)")
    for name, o in outcome.items():
        print(f"  {name:32} {o['findings']:4} findings  {', '.join(o['checks'])}")
    record_property("fault_detection_rate", f"{rate:.4f}")
    target = os.environ.get("CONFORMANCE_FAULT_REPORT")
    if target:
        Path(target).write_text(
            json.dumps({"rate": rate, "faults": outcome}, indent=1), encoding="utf-8"
        )
    assert rate == 1.0, sorted(set(outcome) - set(detected))
    assert all(
        o["required_failures"] > 0
        for name, o in outcome.items()
        if name not in {"cache_never_hits"}
    )


def test_benign_variations_are_not_flagged():
    outcome = asyncio.run(_findings_per_fault(BENIGN))
    assert {name: o["findings"] for name, o in outcome.items()} == {f.name: 0 for f in BENIGN}
