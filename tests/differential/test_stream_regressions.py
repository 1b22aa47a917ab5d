"""The stream regressions of the differential harness: each file is one minimal record, with the
published reference's `expect`, of a rule this library once got wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.differential.streams_check import check

REGRESSIONS = Path(__file__).parent / "regressions" / "streams"


@pytest.mark.parametrize("path", sorted(REGRESSIONS.glob("*.json")), ids=lambda path: path.stem)
def test_stream_regression(path: Path) -> None:
    record = json.loads(path.read_text(encoding="utf-8"))
    assert check(record) == []


def test_regressions_are_there() -> None:
    assert len(list(REGRESSIONS.glob("*.json"))) >= 40
