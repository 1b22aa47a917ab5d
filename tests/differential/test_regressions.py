"""Differences the differential harness found, kept as records with the reference's `expect`
(no peer needed): every file of `regressions/requests/` and `regressions/streams/` must pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepseek_recipe.vectors import check_record, iter_records

REGRESSIONS = Path(__file__).resolve().parent / "regressions"
FILES = sorted(p for kind in ("requests", "streams") for p in (REGRESSIONS / kind).glob("*.json"))


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_regression(path: Path) -> None:
    for record in iter_records(path):
        mismatches = check_record(record)
        assert not mismatches, f"{record.get('id')}: " + "\n".join(mismatches)
