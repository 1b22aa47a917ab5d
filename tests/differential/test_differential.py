"""A bounded differential sample against the published deepseek-recipe 0.2.0 (runs only where
the peer environment `bench/.peer-venv` exists: `make bench-peer` creates it).

A fixed seed (stable coverage) and a fresh random seed (new cases on every run; printed on
failure to reproduce with `make diff SEED=...`)."""

from __future__ import annotations

import os

import pytest

from tests.differential.run import PEER_VENV, peer_available, report, run_kind

pytestmark = pytest.mark.skipif(
    not peer_available(), reason=f"no peer environment at {PEER_VENV} (make bench-peer)"
)

FIXED_SEED = 20261201
SAMPLE = int(os.environ.get("RECIPE_DIFF_SAMPLE", "1000"))
JOBS = os.cpu_count() or 1


def _run(seed: int) -> None:
    tally = run_kind("requests", seed, SAMPLE, JOBS, keep=20)
    print(report("requests", tally))
    differences = [
        f"{record['id']} [{record['category']}]: {record['mismatches'][0][:300]}"
        for record in tally.differences
    ]
    assert not differences, (
        f"seed {seed} (reproduce: make diff N={SAMPLE} SEED={seed}):\n" + "\n".join(differences)
    )


def test_requests_fixed_seed() -> None:
    _run(FIXED_SEED)


def test_requests_fresh_seed() -> None:
    _run(int.from_bytes(os.urandom(4), "big"))
