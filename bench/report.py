"""Reporting: per-row statistics, the results and scaling tables (terminal and markdown), the
speed-up summary and the machine description."""

from __future__ import annotations

import os
import platform
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.runner import Outcome

SUPER_LINEAR = 1.5
"""Cost per unit at 16x above this multiple of the cost at 1x is flagged as super-linear."""


@dataclass
class Row:
    """One implementation's numbers on one case, checked against ours."""

    outcome: Outcome
    status: str
    reference: Outcome | None

    @property
    def seconds(self) -> list[float]:
        """Seconds of each timed run (empty when the process failed)."""
        return [] if self.outcome.result is None else self.outcome.result["seconds"]

    @property
    def median(self) -> float:
        """Median seconds per run."""
        return statistics.median(self.seconds)

    def ratio(self) -> float | None:
        """This row's median time over ours (above 1: ours is faster)."""
        reference = self.reference
        if reference is None or reference is self.outcome or reference.result is None:
            return None
        if not self.seconds:
            return None
        return self.median / statistics.median(reference.result["seconds"])

    def numbers(self) -> dict[str, Any]:
        """The raw numbers of this row, for `--json`."""
        result = self.outcome.result or {}
        case = self.outcome.case
        numbers: dict[str, Any] = {
            "case": case.name,
            "family": case.family,
            "implementation": self.outcome.runner.label,
            "threads": self.outcome.runner.threads,
            "library": result.get("library"),
            "items": case.items,
            "item": case.item,
            "units": case.units,
            "unit": case.unit,
            "series": case.series,
            "scale": case.scale,
            "seconds": self.seconds,
            "peak_rss_kib": result.get("peak_rss_kib"),
            "setup_rss_kib": result.get("setup_rss_kib"),
            "peak_reset": result.get("peak_reset"),
            "check": self.status,
            "time_over_ours": self.ratio(),
            "error": self.outcome.error,
        }
        if self.seconds:
            numbers.update(min_s=min(self.seconds), median_s=self.median)
        return numbers


def duration(seconds: float) -> str:
    """`seconds` with a readable unit (ns, µs, ms, s)."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def throughput(row: Row) -> str:
    """MB/s for the tokenizer, requests/s or pieces/s otherwise, at the median."""
    case = row.outcome.case
    if case.family == "tokenize":
        return f"{case.units / row.median:.3g} MB/s"
    return f"{case.items / row.median:.3g} {case.item}s/s"


RESULT_HEADER = ["case", "implementation", "min", "median", "throughput", "per item", "peak RSS"]
RESULT_HEADER += ["time/ours", "output check"]


def result_cells(row: Row) -> list[str]:
    """One line of the results table."""
    case, runner = row.outcome.case, row.outcome.runner
    if not row.seconds:
        return [case.name, runner.label, "-", "-", "-", "-", "-", "-", row.outcome.error or "?"]
    result = row.outcome.result or {}
    ratio = row.ratio()
    return [
        case.name,
        runner.label,
        duration(min(row.seconds)),
        duration(row.median),
        throughput(row),
        f"{duration(row.median / case.items)}/{case.item}",
        f"{result['peak_rss_kib'] / 1024:.0f} MiB",
        "-" if ratio is None else f"{ratio:.2f}",
        row.status,
    ]


SCALING_HEADER = ["series", "implementation", "unit", "1x", "4x", "16x", "16x/1x", "growth"]


def scaling_cells(rows: list[Row]) -> list[list[str]]:
    """Cost per unit at each scale of every series, flagging super-linear growth."""
    series: dict[tuple[str, str], dict[int, Row]] = {}
    for row in rows:
        case = row.outcome.case
        if case.series and row.seconds:
            series.setdefault((case.series, row.outcome.runner.label), {})[case.scale] = row
    lines = []
    for (name, label), by_scale in series.items():
        unit = next(iter(by_scale.values())).outcome.case.unit
        costs = {scale: row.median / row.outcome.case.units for scale, row in by_scale.items()}
        cells = [duration(costs[scale]) if scale in costs else "-" for scale in (1, 4, 16)]
        if 1 in costs and 16 in costs:
            growth = costs[16] / costs[1]
            verdict = "SUPER-LINEAR" if growth > SUPER_LINEAR else "linear"
            lines.append([name, label, f"per {unit}", *cells, f"{growth:.2f}", verdict])
        else:
            lines.append([name, label, f"per {unit}", *cells, "-", "incomplete"])
    return lines


def summary_lines(rows: list[Row]) -> list[str]:
    """Plain-words ratios: ours against each peer, the two-thread speed-up and the batch calls'
    speed-up over one call per item."""
    lines = []
    for row in rows:
        ratio = row.ratio()
        if ratio is None:
            continue
        case, runner = row.outcome.case, row.outcome.runner
        if runner.implementation == "ours":
            reference = "1 thread" if runner.threads > 1 else "one call per item"
            speed = f"{1 / ratio:.2f}x the speed of {reference}"
            lines.append(f"{case.name}: {runner.label} is {speed}")
        else:
            lines.append(f"{case.name}: ours is {ratio:.2f}x as fast as {runner.label} (median)")
    return lines


def text_table(header: list[str], lines: list[list[str]]) -> str:
    """An aligned plain-text table."""
    widths = [max(len(cells[i]) for cells in [header, *lines]) for i in range(len(header))]
    rule = "  ".join("-" * width for width in widths)
    rendered = [
        "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip()
        for cells in [header, *lines]
    ]
    return "\n".join([rendered[0], rule, *rendered[1:]])


def markdown_table(header: list[str], lines: list[list[str]]) -> str:
    """A GitHub markdown table."""
    rendered = ["| " + " | ".join(cells) + " |" for cells in [header, *lines]]
    rendered.insert(1, "|" + "---|" * len(header))
    return "\n".join(rendered)


def machine() -> dict[str, Any]:
    """CPU model and core count from /proc/cpuinfo, usable CPUs, OS and Python."""
    model, cores = "unknown", 0
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name") and model == "unknown":
                model = line.split(":", 1)[1].strip()
            if line.startswith("processor"):
                cores += 1
    return {
        "cpu": model,
        "cores": cores,
        "usable_cpus": len(os.sched_getaffinity(0)),
        "os": platform.platform(),
        "python": platform.python_version(),
    }
