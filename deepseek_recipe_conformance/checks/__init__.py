"""Checks: small pure functions over captured exchanges, registered by name in `REGISTRY`."""

from deepseek_recipe_conformance.checks import (
    equivalence,
    framing,
    http,
    logprobs,
    output,
    tools,
    usage,
)
from deepseek_recipe_conformance.checks.base import (
    REGISTRY,
    CheckContext,
    CheckInfo,
    NotApplicable,
    StepView,
    Violation,
)

__all__ = [
    "REGISTRY",
    "CheckContext",
    "CheckInfo",
    "NotApplicable",
    "StepView",
    "Violation",
    "equivalence",
    "framing",
    "http",
    "logprobs",
    "output",
    "tools",
    "usage",
]
