"""Report renderers: JSON layout, JUnit XML that parses, one self-contained HTML file."""

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest
from rich.console import Console

from deepseek_recipe_conformance.model import (
    CaseResult,
    CheckSpec,
    Finding,
    RunResult,
    Severity,
    Source,
)
from deepseek_recipe_conformance.oracle import NoOracle
from deepseek_recipe_conformance.reports import (
    print_summary,
    render_html,
    render_json,
    render_junit,
)
from deepseek_recipe_conformance.runner import evaluate, latency_of
from tests.conformance.conftest import (
    body_exchange,
    chat_chunk,
    good_chat_stream,
    make_case,
    stream_exchange,
)


def sample_run() -> RunResult:
    results = []
    good = stream_exchange("chat", good_chat_stream())
    leak = "<script>alert(1)</script>｜DSML｜"
    bad_events = [*good_chat_stream()[:-1], (None, chat_chunk({"content": leak}))]
    bad = stream_exchange("chat", bad_events)
    checks = (
        CheckSpec("http.status", {"equals": 200}),
        CheckSpec("stream.terminator"),
        CheckSpec("output.no_markup_leak"),
    )
    for exchange, ident in ((good, "a"), (bad, "b")):
        case = make_case(checks=checks)
        case = type(case)(**{**case.__dict__, "id": f"fam.{ident}"})
        outcomes, findings = evaluate(case, [exchange], NoOracle())
        results.append(CaseResult(case, outcomes, findings, latency_of([exchange])))
    optional = type(results[0].case)(
        **{**results[0].case.__dict__, "id": "fam.c", "required": False}
    )
    unreachable = body_exchange("chat", {}, status=200)
    unreachable.transport_error, unreachable.status = "ConnectError: refused", None
    outcomes, findings = evaluate(optional, [unreachable], NoOracle())
    results.append(CaseResult(optional, outcomes, findings, None, error="ConnectError: refused"))
    unexercised = Finding(
        "fam.a",
        "finish.tool_calls",
        "the situation",
        Source("spec", "x"),
        "not exercised",
        Severity.INFO,
        False,
    )
    results[0].findings.append(unexercised)
    return RunResult("http://host", "model", 1000.0, 1002.5, results)


def test_json_report_layout():
    data = json.loads(render_json(sample_run()))
    assert data["schema"] == "deepseek-recipe-conformance/1"
    assert data["summary"]["passed"] is False
    assert data["summary"]["cases"] == 3 and data["summary"]["cases_passed"] == 1
    assert data["summary"]["cases_failed"] == 1 and data["summary"]["cases_errored"] == 1
    assert data["summary"]["not_exercised"] == 1 and data["cases"][0]["status"] == "passed"
    assert [f["family"] for f in data["families"]] == ["t"]
    finding = data["findings"][0]
    assert set(finding) == {
        "case",
        "check",
        "expected",
        "source",
        "observed",
        "severity",
        "required",
    }
    assert {f["check"] for f in data["findings"]} >= {"stream.terminator", "output.no_markup_leak"}
    case = data["cases"][0]
    assert case["latency"]["ttft_s"] is not None and case["status"] == "passed"
    assert all({"name", "status", "detail"} == set(c) for c in case["checks"])


def test_junit_parses_and_counts():
    root = ET.fromstring(render_junit(sample_run()))
    assert root.tag == "testsuites"
    assert root.get("tests") == "3" and root.get("failures") == "1" and root.get("errors") == "1"
    names = [tc.get("name") for tc in root.iter("testcase")]
    assert names == ["fam.a", "fam.b", "fam.c"]
    failure = root.find(".//testcase[@name='fam.b']/failure")
    assert failure is not None and "stream.terminator" in failure.text


class ExternalReferences(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found = []
        self.tags = set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        for name, value in attrs:
            if name in ("src", "href", "action", "srcset") and value:
                self.found.append(f"{tag}.{name}={value}")


def test_html_is_one_self_contained_file(tmp_path):
    html = render_html(sample_run())
    parser = ExternalReferences()
    parser.feed(html)
    assert parser.found == []
    assert not {"script", "link", "img", "iframe"} & parser.tags
    assert "url(" not in html and "@import" not in html
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    path = tmp_path / "report.html"
    path.write_text(html, encoding="utf-8")
    browser = (
        shutil.which("chromium")
        or shutil.which("chromium-browser")
        or shutil.which("google-chrome")
    )
    if browser is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium)")
    dom = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--dump-dom",
            path.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert "DeepSeek API conformance" in dom and "FAIL" in dom
    assert "fam.b" in dom and "output.no_markup_leak" in dom


def test_terminal_lists_deviations_and_counts_what_was_not_exercised():
    console = Console(record=True, width=200)
    print_summary(console, sample_run())
    text = console.export_text()
    assert "output.no_markup_leak" in text and "Findings (3)" in text
    assert "not exercised (the model never produced the situation): finish.tool_calls (1)" in text
