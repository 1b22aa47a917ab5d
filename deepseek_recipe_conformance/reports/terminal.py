"""Terminal output with rich: a progress bar while running, then the family table, the findings
and what the model never exercised."""

from __future__ import annotations

from collections import Counter
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from deepseek_recipe_conformance.model import CaseResult, RunResult, Severity
from deepseek_recipe_conformance.reports.json_report import latency_summary

SEVERITY_STYLE = {
    Severity.CRITICAL: "bold red",
    Severity.MAJOR: "red",
    Severity.MINOR: "yellow",
    Severity.INFO: "dim",
}


class ProgressReporter:
    """A progress bar advanced by `on_result`; a no-op when disabled."""

    def __init__(self, console: Console, total: int, enabled: bool = True) -> None:
        self.enabled = enabled
        self.failed = 0
        self.progress = Progress(
            TextColumn("[bold]conformance"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]} failing"),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            disable=not enabled,
        )
        self.task = self.progress.add_task("cases", total=total, failed=0)

    def __enter__(self) -> ProgressReporter:
        self.progress.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.progress.stop()

    def on_result(self, result: CaseResult) -> None:
        """Advance by one finished case."""
        self.failed += result.status != "passed"
        self.progress.update(self.task, advance=1, failed=self.failed)


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.0f} ms"


def print_summary(console: Console, run: RunResult, max_findings: int = 40) -> None:
    """Family scores, the most severe findings and latency."""
    table = Table(title=f"Conformance of {run.model} at {run.base_url}")
    for column in ("family", "score", "cases", "checks", "required failures"):
        table.add_column(column, justify="left" if column == "family" else "right")
    for score in run.family_scores():
        style = "green" if score.score == 1.0 else "red" if score.required_failures else "yellow"
        table.add_row(
            score.family,
            f"[{style}]{100 * score.score:.1f}%[/]",
            f"{score.cases_passed}/{score.cases}",
            f"{score.checks_passed}/{score.checks}",
            str(score.required_failures),
        )
    console.print(table)
    everything = run.findings()
    findings = [f for f in everything if f.severity is not Severity.INFO]
    unexercised = Counter(f.check for f in everything if f.severity is Severity.INFO)
    if findings:
        listing = Table(title=f"Findings ({len(findings)})", show_lines=False)
        for column in ("severity", "case", "check", "expected", "observed", "source"):
            listing.add_column(column, overflow="fold")
        for f in findings[:max_findings]:
            severity = f.severity.value + ("" if f.required else " (optional)")
            listing.add_row(
                f"[{SEVERITY_STYLE[f.severity]}]{severity}[/]",
                f.case,
                f.check,
                f.expected,
                f.observed,
                str(f.source),
            )
        console.print(listing)
        if len(findings) > max_findings:
            console.print(
                f"[dim]... {len(findings) - max_findings} more in the JSON/HTML report[/]"
            )
    if unexercised:
        counts = ", ".join(f"{check} ({n})" for check, n in unexercised.most_common())
        console.print(f"[dim]not exercised (the model never produced the situation): {counts}[/]")
    errors = [r for r in run.results if r.error]
    for result in errors:
        console.print(f"[red]error[/] {result.case.id}: {result.error}")
    latency = latency_summary(run)
    console.print(
        f"TTFT p50 {_seconds(latency['ttft_p50_s'])}, p90 {_seconds(latency['ttft_p90_s'])}; "
        f"median {latency['tokens_per_s_p50'] or 0:.1f} tokens/s "
        f"over {latency['measured_cases']} streamed cases"
    )
    verdict = "[bold green]PASS[/]" if run.passed else "[bold red]FAIL[/]"
    console.print(
        f"{verdict}: score {100 * run.score:.1f}%, "
        f"{len(run.required_failures())} required failure(s)"
    )
