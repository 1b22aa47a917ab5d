"""Renderers of one `RunResult`: terminal (rich), JSON, JUnit XML and a self-contained HTML file."""

from conformance.reports.html import render_html
from conformance.reports.json_report import render_json, to_dict
from conformance.reports.junit import render_junit
from conformance.reports.terminal import ProgressReporter, print_summary

__all__ = [
    "ProgressReporter",
    "print_summary",
    "render_html",
    "render_json",
    "render_junit",
    "to_dict",
]
