"""Checks: small pure functions over captured exchanges, registered by name in `REGISTRY`.

`BASELINE` names the checks every case runs on every step besides its own: rules that hold
for any answer (each skips what it does not apply to, and judges only what the host returned).
"""

from deepseek_recipe_conformance.checks import (
    equivalence,
    finish,
    framing,
    http,
    logprobs,
    output,
    replay,
    tools,
    usage,
)
from deepseek_recipe_conformance.checks.base import (
    REGISTRY,
    CheckContext,
    CheckInfo,
    NotApplicable,
    NotExercised,
    StepView,
    Target,
    Violation,
)

BASELINE: tuple[str, ...] = (
    "http.content_type",
    "http.json_body",
    "stream.events_parse",
    "stream.terminator",
    "stream.role_first",
    "stream.finish_last",
    "stream.usage_chunk",
    "stream.event_order",
    "output.reasoning",
    "output.content",
    "output.no_markup_leak",
    "output.json",
    "output.stop_respected",
    "output.max_tokens",
    "output.signatures",
    "finish.valid",
    "finish.length",
    "finish.tool_calls",
    "tools.none_called",
    "tools.arguments_json",
    "tools.arguments_schema",
    "tools.call_ids",
    "usage.present",
    "usage.arithmetic",
    "usage.cache_fields",
    "usage.prompt_parity",
    "usage.reasoning_tokens",
    "logprobs.shape",
    "replay.answer",
)
"""Checks run on every step of every case (a case's own entry for one replaces it)."""

__all__ = [
    "BASELINE",
    "REGISTRY",
    "CheckContext",
    "CheckInfo",
    "NotApplicable",
    "NotExercised",
    "StepView",
    "Target",
    "Violation",
    "equivalence",
    "finish",
    "framing",
    "http",
    "logprobs",
    "output",
    "replay",
    "tools",
    "usage",
]
