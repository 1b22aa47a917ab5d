"""Conforming hosts built on the published deepseek-recipe 0.2.0 (`peer_host.py`, one process
each) with the stand-in models: the whole suite, model checks on, raises nothing above info.

Needs the published package: `bench/.peer-venv` (`make bench-peer`) or the interpreter named by
$RECIPE_PEER_PYTHON; skipped without it.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from deepseek_recipe_conformance.cases import load_cases
from deepseek_recipe_conformance.model import RunResult, Severity
from deepseek_recipe_conformance.oracle import RecipeOracle
from deepseek_recipe_conformance.runner import RunConfig, run_suite
from tests.conformance.standin_text import STYLES

REPO = Path(__file__).resolve().parents[2]
PEER_PYTHON = Path(
    os.environ.get("RECIPE_PEER_PYTHON", REPO / "bench" / ".peer-venv" / "bin" / "python")
)
TOKENIZER = REPO / "recipe-rs" / "deepseek-recipe" / "data" / "deepseek-v4" / "tokenizer.json"
API_KEY = "sk-peer-host-0123"
MODEL = "DeepSeek-V4-Pro"

pytestmark = pytest.mark.skipif(
    not PEER_PYTHON.exists(), reason="no bench/.peer-venv (make bench-peer)"
)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, RunResult]]:
    """One peer host per stand-in style, the whole suite against each (at once)."""
    outside = tmp_path_factory.mktemp("peer")  # a cwd outside the repository
    hosts = {
        style: subprocess.Popen(
            [
                str(PEER_PYTHON),
                "-I",
                str(REPO / "tests/conformance/peer_host.py"),
                style,
                API_KEY,
                str(TOKENIZER),
            ],
            cwd=outside,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for style in STYLES
    }
    try:
        ports = {style: int(host.stdout.readline()) for style, host in hosts.items()}  # type: ignore[union-attr]

        async def run_all() -> dict[str, RunResult]:
            cases = load_cases(MODEL)
            runs = [
                run_suite(
                    cases,
                    RunConfig(f"http://127.0.0.1:{port}", API_KEY, MODEL, timeout_s=60, retries=0),
                    RecipeOracle(MODEL),
                )
                for port in ports.values()
            ]
            return dict(zip(ports, await asyncio.gather(*runs), strict=True))

        yield asyncio.run(run_all())
    finally:
        for host in hosts.values():
            host.communicate(timeout=30)


@pytest.mark.parametrize("style", STYLES)
def test_published_library_host_raises_nothing(style: str, results: dict[str, RunResult]) -> None:
    result = results[style]
    found = [
        f"{f.case} {f.check}: {f.observed[:160]}"
        for f in result.findings()
        if f.severity is not Severity.INFO
    ]
    errors = [f"{r.case.id}: {r.error}" for r in result.results if r.error is not None]
    assert found + errors == [], "\n".join(found + errors)
    assert result.passed and len(result.results) == len(load_cases(MODEL))
