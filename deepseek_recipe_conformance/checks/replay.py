"""The answer as a whole: every chunk, event and field equals what the recipe sends for a model
output that carries it (`deepseek_recipe_conformance.replay`)."""

from __future__ import annotations

from typing import Any

from deepseek_recipe_conformance.checks.base import NotApplicable, StepView, Violation, check, short
from deepseek_recipe_conformance.model import Severity
from deepseek_recipe_conformance.replay import (
    Expected,
    NotRecipeOutput,
    NotReplayable,
    coalesce,
    expected_answers,
    first_difference,
    normalize,
)


def _host_answer(step: StepView) -> Any:
    exchange = step.exchange
    if not exchange.stream:
        return exchange.json()
    events = exchange.sse().data_events()
    if any(not isinstance(e.json(), dict) for e in events):
        raise NotApplicable("events that are not JSON objects (see stream.events_parse)")
    return coalesce(step.protocol, [(e.event, e.json()) for e in events])


def _difference(step: StepView, expected: Expected, got: Any) -> tuple[str, Any, Any] | None:
    exact = step.require_converted().model_version == "DeepseekV4Pro"
    if not step.exchange.stream:
        return first_difference(normalize(expected.body, exact), normalize(got, exact))
    wanted = normalize(coalesce(step.protocol, expected.events), exact)
    found = first_difference(wanted, normalize(got, exact))
    if found is None:
        return None
    path, want, have = found
    if path.startswith("$["):
        index = int(path[2 : path.index("]")])
        events = wanted if index < len(wanted) else normalize(got, exact)
        kind = events[index][1].get("type") if isinstance(events[index][1], dict) else None
        path = f"event {index}{f' ({kind})' if kind else ''}: ${path[path.index(']') + 4 :]}"
    return path, want, have


@check("replay.answer", Severity.MAJOR, "spec:streaming.md#1-inputs-inference-chunks")
def answer(step: StepView) -> list[Violation]:
    """The answer is exactly what the recipe sends for a model output it carries (ids,
    timestamps, prompt usage and delta granularity are the host's; where what the client sees
    fits more than one model output, any may match)."""
    step.require_success()
    converted = step.require_converted()
    out = step.output
    got = _host_answer(step)
    usage = out.usage
    prompt_usage = (usage.prompt or 0, usage.cache_hit or 0) if usage else (0, 0)
    try:
        answers = expected_answers(converted, out, step.exchange.stream, prompt_usage)
    except NotRecipeOutput as exc:
        return [Violation("output the recipe can produce", str(exc))]
    except NotReplayable as exc:
        raise NotApplicable(f"not re-derivable: {exc}") from exc
    found = [_difference(step, expected, got) for expected in answers]
    differences = [difference for difference in found if difference is not None]
    if len(differences) < len(found):
        return []
    path, want, have = differences[0]  # against the preferred reading
    return [Violation(f"{path} = {short(want, 120)} (the recipe's answer)", short(have, 160))]
