"""The JSON report: the whole result model as plain data (also the input of the HTML renderer)."""

from __future__ import annotations

import datetime
import json
import statistics
from typing import Any

from deepseek_recipe_conformance.model import CaseResult, Finding, Latency, RunResult, Severity

SCHEMA = "deepseek-recipe-conformance/1"
"""Identifier of this report layout; bumped on incompatible changes."""


def _finding(f: Finding) -> dict[str, Any]:
    return {
        "case": f.case,
        "check": f.check,
        "expected": f.expected,
        "source": str(f.source),
        "observed": f.observed,
        "severity": f.severity.value,
        "required": f.required,
    }


def _latency(latency: Latency | None) -> dict[str, Any] | None:
    if latency is None:
        return None
    return {
        "ttft_s": latency.ttft_s,
        "total_s": latency.total_s,
        "completion_tokens": latency.completion_tokens,
        "tokens_per_s": latency.tokens_per_s,
    }


def _case(result: CaseResult) -> dict[str, Any]:
    case = result.case
    return {
        "id": case.id,
        "family": case.family,
        "protocol": case.protocol,
        "title": case.title,
        "status": result.status,
        "required": case.required,
        "source": str(case.source),
        "error": result.error,
        "latency": _latency(result.latency),
        "checks": [
            {"name": o.name, "status": o.status, "detail": o.detail} for o in result.outcomes
        ],
        "findings": [_finding(f) for f in result.findings],
    }


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def latency_summary(run: RunResult) -> dict[str, Any]:
    """Median and p90 time to first token, median tokens/s over the cases that measured them."""
    ttft = [r.latency.ttft_s for r in run.results if r.latency and r.latency.ttft_s is not None]
    rates = [r.latency.tokens_per_s for r in run.results if r.latency and r.latency.tokens_per_s]
    return {
        "ttft_p50_s": statistics.median(ttft) if ttft else None,
        "ttft_p90_s": _quantile(ttft, 0.9),
        "tokens_per_s_p50": statistics.median(rates) if rates else None,
        "measured_cases": len(ttft),
    }


def to_dict(run: RunResult) -> dict[str, Any]:
    """The report as JSON-ready data."""
    families = run.family_scores()
    started = datetime.datetime.fromtimestamp(run.started_at, tz=datetime.timezone.utc)
    statuses = [r.status for r in run.results]
    return {
        "schema": SCHEMA,
        "target": {"base_url": run.base_url, "model": run.model},
        "started_at": started.isoformat(timespec="seconds"),
        "duration_s": round(run.finished_at - run.started_at, 3),
        "summary": {
            "passed": run.passed,
            "score": run.score,
            "cases": len(run.results),
            "cases_passed": statuses.count("passed"),
            "cases_failed": statuses.count("failed"),
            "cases_errored": statuses.count("error"),
            "checks": sum(s.checks for s in families),
            "checks_passed": sum(s.checks_passed for s in families),
            "required_failures": len(run.required_failures()),
            "not_exercised": sum(f.severity is Severity.INFO for f in run.findings()),
        },
        "families": [
            {
                "family": s.family,
                "score": s.score,
                "cases": s.cases,
                "cases_passed": s.cases_passed,
                "checks": s.checks,
                "checks_passed": s.checks_passed,
                "required_failures": s.required_failures,
            }
            for s in families
        ],
        "latency": latency_summary(run),
        "findings": [_finding(f) for f in run.findings()],
        "cases": [_case(r) for r in run.results],
    }


def render_json(run: RunResult) -> str:
    """The JSON report text."""
    return json.dumps(to_dict(run), ensure_ascii=False, indent=2) + "\n"
