"""Renderers of one `RunResult`: terminal (rich), JSON, JUnit XML and a self-contained HTML file."""

from deepseek_recipe_conformance.reports.html import render_html
from deepseek_recipe_conformance.reports.json_report import render_json, to_dict
from deepseek_recipe_conformance.reports.junit import render_junit
from deepseek_recipe_conformance.reports.terminal import ProgressReporter, print_summary

__all__ = [
    "ProgressReporter",
    "print_summary",
    "render_html",
    "render_json",
    "render_junit",
    "to_dict",
]
