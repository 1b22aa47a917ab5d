"""Checks on token usage: presence, arithmetic, cache fields, cache hits, prompt-token parity,
reasoning tokens."""

from __future__ import annotations

import functools
from typing import Any

from deepseek_recipe import Tokenizer
from deepseek_recipe_conformance.checks.base import (
    CheckContext,
    NotApplicable,
    StepView,
    Violation,
    check,
    short,
)
from deepseek_recipe_conformance.checks.output import thinking
from deepseek_recipe_conformance.model import Severity
from deepseek_recipe_conformance.views import Usage


def _usage(step: StepView) -> Usage:
    step.require_success()
    usage = step.output.usage
    if usage is None:
        raise NotApplicable("no usage reported (see usage.present)")
    return usage


@check(
    "usage.present", Severity.MAJOR, "docs:https://api-docs.deepseek.com/api/create-chat-completion"
)
def present(step: StepView) -> list[Violation]:
    """Usage with prompt, completion and (Chat, Responses) total token counts."""
    step.require_success()
    usage = step.output.usage
    if usage is None:
        return [Violation("a usage object", "none")]
    missing = [n for n in ("prompt", "completion", "total") if getattr(usage, n) is None]
    return (
        [Violation("prompt, completion and total token counts", f"missing {missing}")]
        if missing
        else []
    )


@check(
    "usage.arithmetic",
    Severity.MAJOR,
    "docs:https://api-docs.deepseek.com/api/create-chat-completion",
)
def arithmetic(step: StepView) -> list[Violation]:
    """total = prompt + completion; cache hit + miss = prompt; cached_tokens = hit."""
    u = _usage(step)
    violations = []
    if None not in (u.total, u.prompt, u.completion) and u.total != (u.prompt or 0) + (
        u.completion or 0
    ):
        violations.append(
            Violation("total = prompt + completion", f"{u.total} != {u.prompt} + {u.completion}")
        )
    if (
        None not in (u.cache_hit, u.cache_miss, u.prompt)
        and (u.cache_hit or 0) + (u.cache_miss or 0) != u.prompt
    ):
        violations.append(
            Violation(
                "cache hit + miss = prompt tokens", f"{u.cache_hit} + {u.cache_miss} != {u.prompt}"
            )
        )
    if u.cached is not None and u.cache_hit is not None and u.cached != u.cache_hit:
        violations.append(
            Violation("cached_tokens = prompt_cache_hit_tokens", f"{u.cached} != {u.cache_hit}")
        )
    if any(isinstance(v, int) and v < 0 for v in vars(u).values()):
        violations.append(Violation("non-negative counts", short(vars(u))))
    return violations


CACHE_FIELDS: dict[str, tuple[tuple[str, ...], ...]] = {
    "chat": (
        ("prompt_cache_hit_tokens",),
        ("prompt_cache_miss_tokens",),
        ("prompt_tokens_details", "cached_tokens"),
    ),
    "responses": (("input_tokens_details", "cached_tokens"),),
    "messages": (("cache_read_input_tokens",), ("cache_creation_input_tokens",)),
}
"""Cache fields the official API reports, per protocol."""


def _raw_usage(step: StepView) -> Any:
    if step.exchange.stream:
        objects = [p for p in step.exchange.sse().payloads() if isinstance(p, dict)]
        if step.protocol == "chat":
            return next(
                (o["usage"] for o in reversed(objects) if isinstance(o.get("usage"), dict)), None
            )
        if step.protocol == "responses":
            return next(
                (
                    o["response"].get("usage")
                    for o in reversed(objects)
                    if isinstance(o.get("response"), dict) and o["response"].get("usage")
                ),
                None,
            )
        return next(
            (o.get("usage") for o in reversed(objects) if o.get("type") == "message_delta"), None
        )
    body = step.exchange.json()
    return body.get("usage") if isinstance(body, dict) else None


@check("usage.cache_fields", Severity.MAJOR, "docs:https://api-docs.deepseek.com/guides/kv_cache")
def cache_fields(step: StepView) -> list[Violation]:
    """The official cache-hit/miss fields are reported (hosts often drop them)."""
    step.require_success()
    raw = _raw_usage(step)
    missing = []
    for path in CACHE_FIELDS[step.protocol]:
        node = raw
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if not isinstance(node, int) or isinstance(node, bool):
            missing.append(".".join(path))
    return (
        [
            Violation(
                f"usage fields {', '.join('.'.join(p) for p in CACHE_FIELDS[step.protocol])}",
                f"missing {missing}",
            )
        ]
        if missing
        else []
    )


@check(
    "usage.cache_hit",
    Severity.MAJOR,
    "docs:https://api-docs.deepseek.com/guides/kv_cache",
    scope="case",
)
def cache_hit(ctx: CheckContext, step: int = -1) -> list[Violation]:
    """A repeated request reports prompt cache hits on the repeat."""
    view = ctx.step(step)
    u = _usage(view)
    if not u.cache_hit:
        return [Violation("prompt cache hit tokens > 0 on a repeated prefix", short(u.cache_hit))]
    return []


@check("usage.prompt_parity", Severity.MAJOR, "spec:requests.md#1-pipeline-and-error-model")
def prompt_parity(step: StepView) -> list[Violation]:
    """prompt_tokens equals the recipe's own count for the same request."""
    u = _usage(step)
    expected = step.oracle.count_prompt_tokens(step.protocol, step.request)
    if expected is None:
        raise NotApplicable("the oracle has no prompt-token count for this request")
    if u.prompt != expected:
        return [Violation(f"prompt tokens {expected} (recipe count)", short(u.prompt))]
    return []


@functools.cache
def _v4_tokenizer() -> Tokenizer:
    return Tokenizer.deepseek_v4()


@check("usage.reasoning_tokens", Severity.MAJOR, "spec:streaming.md#4-usage-accounting")
def reasoning_tokens(step: StepView) -> list[Violation]:
    """Chat (thinking mode) and Responses report reasoning tokens: the V4 tokenizer's count of
    the reasoning text (0 without reasoning); Messages reports none."""
    u = _usage(step)
    if step.protocol == "messages":
        raise NotApplicable("Messages usage has no reasoning count")
    converted = step.require_converted()
    if step.protocol == "chat" and not thinking(step):
        raise NotApplicable("Chat reports reasoning tokens in thinking mode only")
    if u.reasoning is None:
        details = (
            "completion_tokens_details" if step.protocol == "chat" else "output_tokens_details"
        )
        return [Violation(f"usage.{details}.reasoning_tokens", "absent")]
    if converted.model_version != "DeepseekV4Pro":
        return []  # V4.1 counts with its own tokenizer
    expected = _v4_tokenizer().count(step.output.reasoning or "", allow_special=True)
    if u.reasoning != expected:
        return [
            Violation(
                f"{expected} reasoning tokens (the reasoning text's count)", short(u.reasoning)
            )
        ]
    return []
