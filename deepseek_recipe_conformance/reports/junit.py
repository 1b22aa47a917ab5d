"""JUnit XML: one testsuite per family, one testcase per case, a failure per failing case."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from deepseek_recipe_conformance.model import RunResult, Severity


def render_junit(run: RunResult) -> str:
    """The JUnit XML text (CI systems show failing cases and their findings)."""
    root = ET.Element("testsuites", name="deepseek-recipe conformance")
    by_family: dict[str, list] = {}
    for result in run.results:
        by_family.setdefault(result.case.family, []).append(result)
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for family in sorted(by_family):
        results = by_family[family]
        suite = ET.SubElement(root, "testsuite", name=family)
        counts = {"tests": len(results), "failures": 0, "errors": 0, "skipped": 0}
        for result in results:
            latency = result.latency
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"conformance.{family}",
                name=result.case.id,
                time=f"{latency.total_s:.3f}" if latency else "0",
            )
            properties = ET.SubElement(case, "properties")
            ET.SubElement(properties, "property", name="protocol", value=result.case.protocol)
            ET.SubElement(
                properties, "property", name="required", value=str(result.case.required).lower()
            )
            if latency and latency.ttft_s is not None:
                ET.SubElement(properties, "property", name="ttft_s", value=f"{latency.ttft_s:.4f}")
            if latency and latency.tokens_per_s is not None:
                ET.SubElement(
                    properties, "property", name="tokens_per_s", value=f"{latency.tokens_per_s:.2f}"
                )
            if result.error is not None:
                counts["errors"] += 1
                ET.SubElement(case, "error", message=result.error[:500], type="transport")
            elif result.status == "failed":
                failing = [f for f in result.findings if f.severity is not Severity.INFO]
                worst = min(failing, key=lambda f: f.severity.rank)
                if not any(f.required for f in failing):
                    counts["skipped"] += 1
                    ET.SubElement(case, "skipped", message=f"optional case failed: {worst.check}")
                    continue
                counts["failures"] += 1
                failure = ET.SubElement(
                    case,
                    "failure",
                    message=f"{worst.check}: expected {worst.expected}"[:500],
                    type=worst.severity.value,
                )
                failure.text = "\n".join(
                    f"[{f.severity.value}] {f.check}: expected {f.expected}; "
                    f"observed {f.observed} (source {f.source})"
                    for f in failing
                )
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
