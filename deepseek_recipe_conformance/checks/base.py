"""The check registry and what a check sees: the case, its captured exchanges and the oracle."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from deepseek_recipe import ConvertedRequest
from deepseek_recipe_conformance.model import Case, Exchange, Severity, Source
from deepseek_recipe_conformance.oracle import Oracle
from deepseek_recipe_conformance.views import Output, output_from_body, output_from_stream


@dataclass(frozen=True)
class Violation:
    """What a check returns for each deviation; the runner turns it into a `Finding`."""

    expected: str
    observed: str
    severity: Severity | None = None


class NotApplicable(Exception):
    """Raised by a check that cannot judge this exchange (the outcome is `skipped`)."""


class NotExercised(NotApplicable):
    """Raised by a check whose rule applies to the request but whose situation (a tool call, a
    length finish, a stop in the text) the model did not produce: skipped, or, when the case
    exercises the check, retried and then reported as not exercised."""


@dataclass(frozen=True)
class Target:
    """What the suite knows about the host beyond the protocol: `completion_cap` is the most
    completion tokens it generates per answer (None: the request's budget)."""

    completion_cap: int | None = None


class StepView:
    """One exchange (step `index` of its case) plus its lazily computed views."""

    def __init__(
        self, exchange: Exchange, oracle: Oracle, index: int, target: Target | None = None
    ) -> None:
        self.exchange = exchange
        self.oracle = oracle
        self.index = index
        self.target = target or Target()

    @property
    def protocol(self) -> str:
        """Protocol short name."""
        return self.exchange.protocol

    @property
    def request(self) -> dict[str, Any]:
        """The request body that was sent."""
        return self.exchange.body

    @cached_property
    def output(self) -> Output:
        """Client-visible output, from the stream or the body."""
        return output_of(self.exchange)

    @cached_property
    def converted(self) -> ConvertedRequest | None:
        """The request as the recipe converts it (None without an oracle, or when it fails)."""
        return self.oracle.convert(self.protocol, self.request)

    def require_converted(self) -> ConvertedRequest:
        """The converted request; skips the calling check when the oracle has none."""
        converted = self.converted
        if converted is None:
            raise NotApplicable("the oracle cannot convert this request")
        return converted

    def require_success(self) -> None:
        """Skip the calling check unless the step is a protocol request that answered 200."""
        if not self.exchange.endpoint:
            raise NotApplicable("not a request to the protocol's endpoint")
        if self.exchange.status != 200:
            raise NotApplicable(f"step answered {self.exchange.status}, not 200")


def output_of(exchange: Exchange) -> Output:
    """The view of an exchange (computed from the stream or the body)."""
    if exchange.stream:
        return output_from_stream(exchange.protocol, exchange.sse())
    return output_from_body(exchange.protocol, exchange.json())


@dataclass
class CheckContext:
    """Input of every check: the case, its exchanges (one per step) and the oracle."""

    case: Case
    exchanges: list[Exchange]
    oracle: Oracle
    target: Target = field(default_factory=Target)

    def step(self, index: int = 0) -> StepView:
        """View of step `index` (negative indexes count from the end)."""
        try:
            exchange = self.exchanges[index]
        except IndexError as exc:
            raise NotApplicable(f"case has no step {index}") from exc
        return StepView(exchange, self.oracle, index % len(self.exchanges), self.target)


CheckFn = Callable[..., list[Violation]]
"""A check: `fn(step_or_ctx, **params) -> violations`; pure, no I/O."""


@dataclass(frozen=True)
class CheckInfo:
    """A registered check with its defaults.

    `scope` is `step` (called once per step with a `StepView`, or only for the step named by
    the `step` parameter) or `case` (called once with the whole `CheckContext`).
    """

    name: str
    fn: CheckFn
    severity: Severity
    source: Source
    summary: str
    scope: str


REGISTRY: dict[str, CheckInfo] = {}
"""Every check by name; filled when `deepseek_recipe_conformance.checks` is imported."""


def check(
    name: str, severity: Severity, source: str, scope: str = "step"
) -> Callable[[CheckFn], CheckFn]:
    """Register a check under `name` with its default severity, source reference and scope."""

    def register(fn: CheckFn) -> CheckFn:
        if name in REGISTRY:
            raise ValueError(f"check {name!r} registered twice")
        summary = (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else name
        REGISTRY[name] = CheckInfo(name, fn, severity, Source.parse(source), summary, scope)
        return fn

    return register


def short(value: Any, limit: int = 200) -> str:
    """Compact, bounded rendering of a value for a finding."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
