"""Case files: one JSON file per feature family in this directory, loaded into `Case` objects.

File layout::

    {"family": "tools", "description": "...", "common_checks": [...],
     "cases": [{"id": "tools.auto", "protocol": "chat", "title": "...", "scenario": "tool_call",
                "source": "docs:https://...", "required": true,
                "modes": ["body", "stream"],  # or "steps": [{"body": {...}, "stream": true}]
                "body": {"model": "{model}", ...},
                "checks": [{"check": "tools.called", "min": 1, "severity": "major"}]}]}

`common_checks` are prepended to the checks of every case in the file, and the `BASELINE`
checks (`deepseek_recipe_conformance.checks`) are added to every case unless it lists one
itself. `modes` expands one case into `<id>.body` / `<id>.stream`. `{model}` in any string is
replaced by the model under test. Streaming steps get `"stream": true` in their body. A case
(or a step) may set `headers` (credentials sent instead of the configured key; `{api_key}`
stands for it), `method` and `path` (a request outside the protocol's endpoint) and `raw` (a
body sent verbatim instead of `body`, e.g. malformed JSON).

A check entry may set `exercise: true` (the case is built to produce the situation the check
judges) and `assumes_model: "<why>"` (the expectation depends on the model's choices; the
reason is required).
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deepseek_recipe_conformance.checks import BASELINE, REGISTRY
from deepseek_recipe_conformance.model import PROTOCOLS, Case, CheckSpec, Severity, Source, Step

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

CHECK_KEYS = ("check", "severity", "required", "source", "assumes_model", "exercise")
METHODS = ("POST", "GET")


class CaseFileError(ValueError):
    """A case file does not follow the format."""


def substitute(value: Any, model: str) -> Any:
    """Replace `{model}` in every string of a JSON value."""
    if isinstance(value, str):
        return value.replace("{model}", model)
    if isinstance(value, list):
        return [substitute(v, model) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, model) for k, v in value.items()}
    return value


def _check_spec(raw: Any, where: str) -> CheckSpec:
    if not isinstance(raw, dict) or not isinstance(raw.get("check"), str):
        raise CaseFileError(f"{where}: a check needs a 'check' name")
    if raw["check"] not in REGISTRY:
        raise CaseFileError(f"{where}: unknown check {raw['check']!r}")
    reason = raw.get("assumes_model")
    if reason is not None and (not isinstance(reason, str) or not reason.strip()):
        raise CaseFileError(f"{where}: assumes_model must say why the check depends on the model")
    return CheckSpec(
        name=raw["check"],
        params={k: v for k, v in raw.items() if k not in CHECK_KEYS},
        severity=Severity(raw["severity"]) if "severity" in raw else None,
        required=raw.get("required"),
        source=Source.parse(raw["source"]) if "source" in raw else None,
        assumes_model=reason,
        exercise=bool(raw.get("exercise", False)),
    )


def _with_baseline(checks: list[CheckSpec]) -> tuple[CheckSpec, ...]:
    """The case's checks plus every baseline check it does not list itself."""
    listed = {spec.name for spec in checks}
    return tuple(checks) + tuple(CheckSpec(name) for name in BASELINE if name not in listed)


def _with_stream(body: dict[str, Any], stream: bool) -> dict[str, Any]:
    return {**body, "stream": True} if stream else body


def _step(
    raw: dict[str, Any], defaults: dict[str, Any], model: str, stream: bool, where: str
) -> Step:
    """One request: the body (streaming steps say so in it) and the HTTP settings, taken from
    `raw` (a step) or else from `defaults` (its case)."""

    def setting(key: str, default: Any = None) -> Any:
        return substitute(raw.get(key, defaults.get(key, default)), model)

    headers, method, path, verbatim = (
        setting("headers"),
        str(setting("method", "POST")),
        setting("path"),
        setting("raw"),
    )
    if method not in METHODS:
        raise CaseFileError(f"{where}: method is one of {METHODS}")
    if headers is not None and not (
        isinstance(headers, dict) and all(isinstance(v, str) for v in headers.values())
    ):
        raise CaseFileError(f"{where}: headers map names to strings")
    if path is not None and not (isinstance(path, str) and path.startswith("/")):
        raise CaseFileError(f"{where}: path starts with '/'")
    if verbatim is not None and not isinstance(verbatim, str):
        raise CaseFileError(f"{where}: raw is the body text")
    body = _with_stream(setting("body", {}), stream)
    return Step(body, stream, headers, method, path, verbatim)


def _expand(
    raw: dict[str, Any], family: str, model: str, where: str, common_checks: list[Any]
) -> list[Case]:
    for key in ("id", "protocol", "title", "source", "checks"):
        if key not in raw:
            raise CaseFileError(f"{where}: missing {key!r}")
    if raw["protocol"] not in PROTOCOLS:
        raise CaseFileError(f"{where}: unknown protocol {raw['protocol']!r}")
    checks = _with_baseline(
        [
            _check_spec(substitute(c, model), f"{where}.checks[{i}]")
            for i, c in enumerate(common_checks + raw["checks"])
        ]
    )
    common = {
        "family": family,
        "protocol": raw["protocol"],
        "title": raw["title"],
        "checks": checks,
        "required": bool(raw.get("required", True)),
        "source": Source.parse(raw["source"]),
        "scenario": str(raw.get("scenario", "plain")),
    }
    if "steps" in raw:
        steps = tuple(
            _step(s, raw, model, bool(s.get("stream")), f"{where}.steps[{i}]")
            for i, s in enumerate(raw["steps"])
        )
        return [Case(id=raw["id"], steps=steps, **common)]
    modes = raw.get("modes", ["body"])
    if any(m not in ("body", "stream") for m in modes):
        raise CaseFileError(f"{where}: modes are 'body' and 'stream'")
    suffix = len(modes) > 1
    return [
        Case(
            id=f"{raw['id']}.{mode}" if suffix else raw["id"],
            steps=(_step({}, raw, model, mode == "stream", where),),
            **common,
        )
        for mode in modes
    ]


def load_file(path: Path | Traversable, model: str) -> list[Case]:
    """Cases of one family file."""
    data = json.loads(path.read_text(encoding="utf-8"))
    family = data.get("family")
    if not isinstance(family, str) or not isinstance(data.get("cases"), list):
        raise CaseFileError(f"{path.name}: needs 'family' and a 'cases' list")
    common = data.get("common_checks", [])
    cases = []
    for i, raw in enumerate(data["cases"]):
        cases += _expand(raw, family, model, f"{path.name}: cases[{i}]", common)
    return cases


def builtin_dir() -> Traversable:
    """The directory of the bundled case files (package data)."""
    return resources.files("deepseek_recipe_conformance.cases")


def case_files(directory: Path | Traversable) -> list[Path | Traversable]:
    """The `*.json` files of `directory`, by name."""
    files = [entry for entry in directory.iterdir() if entry.name.endswith(".json")]
    return sorted(files, key=lambda entry: entry.name)


def load_cases(model: str, directory: Path | None = None) -> list[Case]:
    """Every case of every `*.json` file in `directory` (default: the bundled cases)."""
    cases: list[Case] = []
    for path in case_files(directory or builtin_dir()):
        cases += load_file(path, model)
    ids = [c.id for c in cases]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise CaseFileError(f"duplicate case ids: {duplicates}")
    return cases
