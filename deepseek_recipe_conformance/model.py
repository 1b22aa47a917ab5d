"""The result model every part of the suite shares: cases, captured exchanges, findings, scores."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Any

from deepseek_recipe_conformance.sse import SseStream, parse_sse

PROTOCOLS: tuple[str, ...] = ("chat", "responses", "messages")
"""Protocol short names, in report order."""

PROTOCOL_PATHS: dict[str, str] = {
    "chat": "/v1/chat/completions",
    "responses": "/v1/responses",
    "messages": "/v1/messages",
}
"""Request path of each protocol, relative to the base URL."""


class Severity(str, enum.Enum):
    """How much a deviation hurts a client; `INFO` findings never fail a case."""

    CRITICAL = "critical"
    MAJOR = "major"
    MINOR = "minor"
    INFO = "info"

    @property
    def rank(self) -> int:
        """Sort key: 0 for the most severe."""
        return list(Severity).index(self)


@dataclass(frozen=True)
class Source:
    """Where an expectation comes from: a golden vector, a spec section, official docs, an issue."""

    kind: str
    ref: str

    KINDS = ("vector", "spec", "docs", "issue")

    @classmethod
    def parse(cls, text: str) -> Source:
        """Parse `kind:ref`, e.g. `vector:s1-cc-00042` or `docs:https://api-docs.deepseek.com/...`."""
        kind, sep, ref = text.partition(":")
        if not sep or kind not in cls.KINDS or not ref:
            raise ValueError(f"source must be one of {cls.KINDS} followed by ':ref', got {text!r}")
        return cls(kind, ref)

    def __str__(self) -> str:
        return f"{self.kind}:{self.ref}"


NOT_EXERCISED = "not_exercised"
"""Outcome of a check whose situation the model never produced (neither passed nor failed)."""


@dataclass(frozen=True)
class CheckSpec:
    """One check applied to a case: registered check name, parameters and per-case overrides."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    severity: Severity | None = None
    required: bool | None = None
    source: Source | None = None
    assumes_model: str | None = None
    """Why the expectation depends on what the model chooses to generate rather than on what
    the host guarantees (None: it does not); `--no-model-checks` skips such checks."""
    exercise: bool = False
    """The case is built to produce the situation this check judges (a tool call, a length
    finish, a stop in the text): when the model does not produce it, the case is retried and
    then reported as not exercised."""


@dataclass(frozen=True)
class Step:
    """One HTTP request of a case (cases with several steps run them in order).

    `headers` replaces the credentials the runner sends (None: the configured key, as a bearer
    token and, for Messages, as `x-api-key` with `anthropic-version`); `path` replaces the
    protocol's path and `method` the POST; a GET sends no body; `raw` is sent verbatim
    instead of the JSON body (a malformed request).
    """

    body: dict[str, Any]
    stream: bool
    headers: dict[str, str] | None = None
    method: str = "POST"
    path: str | None = None
    raw: str | None = None


@dataclass(frozen=True)
class Case:
    """A conformance case: requests to send and the checks their responses must pass."""

    id: str
    family: str
    protocol: str
    title: str
    steps: tuple[Step, ...]
    checks: tuple[CheckSpec, ...]
    required: bool
    source: Source
    scenario: str

    @property
    def exercises(self) -> bool:
        """Whether a check of the case waits for a situation the model must produce."""
        return any(spec.exercise for spec in self.checks)


@dataclass
class Exchange:
    """One captured HTTP exchange: the request sent and everything observed about the answer."""

    protocol: str
    body: dict[str, Any]
    stream: bool
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes = b""
    chunk_times: list[tuple[int, float]] = field(default_factory=list)
    started_at: float = 0.0
    finished_at: float = 0.0
    transport_error: str | None = None
    attempts: int = 0
    endpoint: bool = True
    """Whether the request went to the protocol's endpoint as a JSON POST (protocol checks
    judge only those)."""
    _parsed_json: tuple[bytes, Any] | None = field(default=None, repr=False, compare=False)
    _parsed_sse: tuple[bytes, SseStream] | None = field(default=None, repr=False, compare=False)

    def json(self) -> Any:
        """The body parsed as JSON, or None when it is not JSON (parsed once per body)."""
        if self._parsed_json is None or self._parsed_json[0] is not self.raw:
            try:
                value = json.loads(self.raw)
            except ValueError:
                value = None
            self._parsed_json = (self.raw, value)
        return self._parsed_json[1]

    def sse(self) -> SseStream:
        """The body parsed as a server-sent event stream (parsed once per body)."""
        if self._parsed_sse is None or self._parsed_sse[0] is not self.raw:
            self._parsed_sse = (self.raw, parse_sse(self.raw))
        return self._parsed_sse[1]

    def time_at_offset(self, offset: int) -> float | None:
        """Arrival time (seconds since the request started) of the byte at `offset`."""
        for end, at in self.chunk_times:
            if offset <= end:
                return at - self.started_at
        return None


@dataclass(frozen=True)
class Finding:
    """A deviation: which case and check, what was expected (and why), what the host did."""

    case: str
    check: str
    expected: str
    source: Source
    observed: str
    severity: Severity
    required: bool

    @property
    def fails_run(self) -> bool:
        """Whether this finding makes the run exit non-zero."""
        return self.required and self.severity is not Severity.INFO


@dataclass(frozen=True)
class CheckOutcome:
    """The result of one check on one case: passed, failed (with findings), skipped or
    not exercised (`NOT_EXERCISED`)."""

    name: str
    status: str
    detail: str = ""


@dataclass(frozen=True)
class Latency:
    """Timing of a case's first streamed step (or its first step when nothing streamed)."""

    ttft_s: float | None
    total_s: float
    completion_tokens: int | None
    tokens_per_s: float | None


@dataclass
class CaseResult:
    """Everything the reports need about one case."""

    case: Case
    outcomes: list[CheckOutcome]
    findings: list[Finding]
    latency: Latency | None
    error: str | None = None

    @property
    def status(self) -> str:
        """`passed`, `failed` (a non-info finding) or `error` (the case could not run)."""
        if self.error is not None:
            return "error"
        if any(f.severity is not Severity.INFO for f in self.findings):
            return "failed"
        return "passed"


@dataclass(frozen=True)
class FamilyScore:
    """Per-family summary: checks passed over checks run (skipped and not exercised checks are
    not counted)."""

    family: str
    cases: int
    cases_passed: int
    checks: int
    checks_passed: int
    required_failures: int

    @property
    def score(self) -> float:
        """Fraction of checks passed, 1.0 when no check ran."""
        return self.checks_passed / self.checks if self.checks else 1.0


@dataclass
class RunResult:
    """A whole run: the target, timing and every case result."""

    base_url: str
    model: str
    started_at: float
    finished_at: float
    results: list[CaseResult]

    def findings(self) -> list[Finding]:
        """All findings, most severe first."""
        found = [f for r in self.results for f in r.findings]
        return sorted(found, key=lambda f: (f.severity.rank, f.case, f.check))

    def required_failures(self) -> list[Finding]:
        """Findings that fail the run."""
        return [f for f in self.findings() if f.fails_run]

    @property
    def passed(self) -> bool:
        """True when no required check failed and no required case errored."""
        errored = any(r.error is not None and r.case.required for r in self.results)
        return not errored and not self.required_failures()

    def family_scores(self) -> list[FamilyScore]:
        """One score per family, in family-name order."""
        by_family: dict[str, list[CaseResult]] = {}
        for result in self.results:
            by_family.setdefault(result.case.family, []).append(result)
        scores = []
        for family in sorted(by_family):
            results = by_family[family]
            outcomes = [o for r in results for o in r.outcomes if o.status in ("passed", "failed")]
            scores.append(
                FamilyScore(
                    family=family,
                    cases=len(results),
                    cases_passed=sum(r.status == "passed" for r in results),
                    checks=len(outcomes),
                    checks_passed=sum(o.status == "passed" for o in outcomes),
                    required_failures=sum(f.fails_run for r in results for f in r.findings)
                    + sum(r.error is not None and r.case.required for r in results),
                )
            )
        return scores

    @property
    def score(self) -> float:
        """Fraction of all checks passed."""
        scores = self.family_scores()
        checks = sum(s.checks for s in scores)
        return sum(s.checks_passed for s in scores) / checks if checks else 1.0
