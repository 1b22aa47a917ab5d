"""The HTML report: one self-contained file (inline CSS, no scripts, no external references)."""

from __future__ import annotations

from importlib import resources

import jinja2

from deepseek_recipe_conformance.model import RunResult
from deepseek_recipe_conformance.reports.json_report import to_dict


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def render_html(run: RunResult) -> str:
    """The HTML report text."""
    source = (
        resources.files("deepseek_recipe_conformance.reports")
        .joinpath("report.html.j2")
        .read_text(encoding="utf-8")
    )
    environment = jinja2.Environment(
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True
    )
    template = environment.from_string(source)
    return template.render(r=to_dict(run), seconds=_seconds, rate=_rate)
