"""Checks on the HTTP layer: status codes, error bodies, content types."""

from __future__ import annotations

from typing import Any

from deepseek_recipe_conformance.checks.base import NotApplicable, StepView, Violation, check, short
from deepseek_recipe_conformance.model import Severity

ERROR_SHAPE_KEYS = ("message", "type", "param", "code")


@check(
    "http.status", Severity.CRITICAL, "docs:https://api-docs.deepseek.com/quick_start/error_codes"
)
def status(step: StepView, equals: int = 200) -> list[Violation]:
    """The HTTP status code is the official one."""
    got = step.exchange.status
    if step.exchange.transport_error is not None:
        return [Violation(f"HTTP {equals}", f"no response: {step.exchange.transport_error}")]
    if got != equals:
        body = step.exchange.raw[:300].decode("utf-8", errors="replace")
        return [Violation(f"HTTP {equals}", f"HTTP {got}: {body}")]
    return []


@check("http.error_body", Severity.MAJOR, "spec:requests.md#1-pipeline-and-error-model")
def error_body(
    step: StepView, status: int | None = None, body: dict[str, Any] | None = None
) -> list[Violation]:
    """An invalid request gets the official status and `{"error": {...}}` body, exactly."""
    expected: tuple[int, Any] | None = None
    if body is not None and status is not None:
        expected = (status, body)
    expected = expected or step.oracle.expected_error(step.protocol, step.request)
    if expected is None:
        raise NotApplicable("no expected error body in the case and none from the oracle")
    wanted_status, wanted = expected
    violations = []
    if step.exchange.status != wanted_status:
        violations.append(Violation(f"HTTP {wanted_status}", f"HTTP {step.exchange.status}"))
    got = step.exchange.json()
    error, text = _error_object(step)
    if error is None:
        violations.append(
            Violation(
                'an OpenAI-style body {"error": {"message", "type", "param", "code"}}', short(text)
            )
        )
    elif got != wanted:
        expected_message = wanted.get("error", {}).get("message")
        if error.get("message") != expected_message:
            violations.append(
                Violation(f"message {expected_message!r}", short(error.get("message")))
            )
        else:
            violations.append(Violation(short(wanted), short(got), Severity.MINOR))
    return violations


@check(
    "http.content_type",
    Severity.MINOR,
    "docs:https://api-docs.deepseek.com/api/create-chat-completion",
)
def content_type(step: StepView) -> list[Violation]:
    """Streams are `text/event-stream`, other answers `application/json`."""
    if step.exchange.status is None:
        raise NotApplicable("no response")
    got = step.exchange.headers.get("content-type", "")
    wanted = (
        "text/event-stream"
        if step.exchange.stream and step.exchange.status == 200
        else "application/json"
    )
    if got.split(";")[0].strip().lower() != wanted:
        return [Violation(f"Content-Type {wanted}", f"Content-Type {got or '(none)'}")]
    return []


@check(
    "http.json_body",
    Severity.CRITICAL,
    "docs:https://api-docs.deepseek.com/api/create-chat-completion",
)
def json_body(step: StepView) -> list[Violation]:
    """A non-streaming answer is one JSON object."""
    if step.exchange.stream and step.exchange.status == 200:
        raise NotApplicable("streamed answer")
    if not isinstance(step.exchange.json(), dict):
        text = step.exchange.raw[:200].decode("utf-8", errors="replace")
        return [Violation("a JSON object body", short(text))]
    return []


def _error_object(step: StepView) -> tuple[dict[str, Any] | None, str]:
    """The `error` object of an official-shaped error body (None otherwise), and the raw text."""
    got = step.exchange.json()
    error = got.get("error") if isinstance(got, dict) else None
    text = step.exchange.raw[:200].decode("utf-8", errors="replace")
    if not isinstance(error, dict) or any(k not in error for k in ERROR_SHAPE_KEYS):
        return None, text
    return error, text


@check(
    "http.error_shape", Severity.MAJOR, "docs:https://api-docs.deepseek.com/quick_start/error_codes"
)
def error_shape(step: StepView, status: int | list[int] = 400) -> list[Violation]:
    """An error the recipe does not word (unknown route, wrong method, malformed JSON) still
    has an official status and the `{"error": {message, type, param, code}}` shape."""
    allowed = [status] if isinstance(status, int) else list(status)
    violations = []
    if step.exchange.status not in allowed:
        wanted = " or ".join(f"HTTP {s}" for s in allowed)
        violations.append(Violation(wanted, f"HTTP {step.exchange.status}"))
    error, text = _error_object(step)
    if error is None or not isinstance(error.get("message"), str) or not error["message"]:
        violations.append(
            Violation('{"error": {"message", "type", "param", "code"}} with a message', short(text))
        )
    return violations


@check("models.list", Severity.MAJOR, "docs:https://api-docs.deepseek.com/api/list-models")
def models_list(step: StepView, model: str | None = None) -> list[Violation]:
    """`GET /models` answers `{"object": "list", "data": [{"id", "object": "model", "owned_by"}]}`
    and lists the model under test."""
    if step.exchange.status != 200:
        raise NotApplicable(f"step answered {step.exchange.status}, not 200")
    got = step.exchange.json()
    data = got.get("data") if isinstance(got, dict) else None
    if not isinstance(got, dict) or got.get("object") != "list" or not isinstance(data, list):
        return [Violation('{"object": "list", "data": [...]}', short(got))]
    bad = [
        m
        for m in data
        if not isinstance(m, dict)
        or not isinstance(m.get("id"), str)
        or m.get("object") != "model"
        or not isinstance(m.get("owned_by"), str)
    ]
    if bad:
        return [Violation('entries {"id", "object": "model", "owned_by"}', short(bad[0]))]
    ids = [m["id"] for m in data]
    if model is not None and model not in ids:
        return [Violation(f"{model!r} among the listed models", short(ids))]
    return []
