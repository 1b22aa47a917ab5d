"""The conformance suite against the live reference server (self-test), through the CLI: every
family, model checks on (the tiny random model is judged by the same rules as any model)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from deepseek_recipe.cli import main as recipe_main
from tests.server.live import API_KEY, LiveServer, official_rule_server

CAP = 32
"""Completion tokens per answer the server generates (the tiny model rarely stops by itself)."""


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    yield from official_rule_server(CAP)


def test_conformance_self_test(server: LiveServer, tmp_path: Path) -> None:
    report = tmp_path / "conformance.json"
    status = recipe_main(
        [
            "conformance",
            "--base-url",
            server.base_url,
            "--api-key",
            API_KEY,
            "--model",
            "DeepSeek-V4-Pro",
            "--max-completion-tokens",
            str(CAP),
            "--no-progress",
            "--concurrency",
            "4",
            "--timeout",
            "60",
            "--json",
            str(report),
        ]
    )
    result = json.loads(report.read_text(encoding="utf-8"))
    summary = result["summary"]
    print(
        f"\nconformance self-test: {summary['cases_passed']}/{summary['cases']} cases, "
        f"{summary['checks_passed']}/{summary['checks']} checks passed in {result['duration_s']} s"
    )
    failures = [f for f in result["findings"] if f["required"] and f["severity"] != "info"]
    assert failures == [], json.dumps(failures, indent=1)[:4000]
    assert status == 0
    assert server.wait_blocks_free()
