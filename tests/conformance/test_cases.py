"""The bundled case files: format, coverage, and fidelity of data copied from the golden vectors."""

import json

import pytest

from deepseek_recipe_conformance.cases import (
    CaseFileError,
    builtin_dir,
    case_files,
    load_cases,
    load_file,
)
from deepseek_recipe_conformance.checks import BASELINE, REGISTRY
from deepseek_recipe_conformance.model import PROTOCOLS
from tests.conformance.recordings import vectors_dir

FAMILIES = {
    "validation",
    "thinking",
    "reasoning_passback",
    "thinking_tool_choice",
    "tools",
    "dsml",
    "streaming",
    "equivalence",
    "stop",
    "json_output",
    "max_tokens",
    "logprobs",
    "usage",
    "prompt_parity",
    "cache",
    "auth",
    "models",
    "http_errors",
}


def test_every_family_has_its_own_file_and_cases():
    cases = load_cases("m")
    assert {c.family for c in cases} == FAMILIES
    assert {p.name.removesuffix(".json") for p in case_files(builtin_dir())} == FAMILIES
    assert len({c.id for c in cases}) == len(cases)


def test_checks_exist_and_model_is_substituted():
    for case in load_cases("my-model"):
        assert all(spec.name in REGISTRY for spec in case.checks), case.id
        for step in case.steps:
            if step.method == "GET" or step.raw is not None:
                assert "{model}" not in (step.raw or "") and step.body == {}
                continue
            unknown = case.id.startswith("validation.unknown_model.")
            assert step.body["model"] == ("no-such-model" if unknown else "my-model")
            assert "{model}" not in json.dumps(step.body)
            assert (step.body.get("stream") is True) == step.stream


def test_every_case_runs_the_baseline_and_few_checks_assume_the_model():
    cases = load_cases("m")
    for case in cases:
        assert {spec.name for spec in case.checks} >= set(BASELINE), case.id
        names = [spec.name for spec in case.checks]
        assert all(names.count(name) == 1 for name in BASELINE), case.id
    assuming = {(s.name, s.assumes_model) for c in cases for s in c.checks if s.assumes_model}
    assert assuming == {
        ("equivalence.stream_vs_body", "identical texts in both modes need a deterministic model")
    }
    assert all(s.required is False for c in cases for s in c.checks if s.assumes_model), (
        "a check that assumes the model never fails a run"
    )


def test_every_route_and_key_form_has_auth_cases():
    cases = [c for c in load_cases("m") if c.family == "auth"]
    routes = {c.id.rsplit(".", 1)[1] for c in cases}
    assert routes == {"chat", "responses", "messages", "models"}
    for route in routes:
        kinds = {c.id.split(".")[1] for c in cases if c.id.endswith("." + route)}
        assert {"missing", "wrong", "empty", "bearer"} <= kinds, route
    forms = [c.steps[0].headers for c in cases if c.id == "auth.x_api_key.messages"]
    assert forms == [{"x-api-key": "{api_key}", "anthropic-version": "2023-06-01"}]


def test_assumes_model_needs_a_reason(tmp_path):
    case = {
        "id": "x",
        "protocol": "chat",
        "title": "t",
        "source": "spec:x",
        "body": {},
        "checks": [{"check": "http.status", "assumes_model": True}],
    }
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"family": "x", "cases": [case]}), encoding="utf-8")
    with pytest.raises(CaseFileError, match="assumes_model"):
        load_file(path, "m")


def test_framing_is_covered_for_all_protocols():
    cases = load_cases("m")
    for family in ("streaming", "tools", "usage", "thinking", "equivalence"):
        assert {c.protocol for c in cases if c.family == family} == set(PROTOCOLS), family


def _vectors():
    found = {}
    for stem in ("chat_completions", "responses", "messages"):
        with (vectors_dir() / "requests" / f"{stem}.jsonl").open(encoding="utf-8") as lines:
            for line in lines:
                record = json.loads(line)
                found[record["id"]] = record
    return found


def test_cases_copied_from_vectors_match_them():
    vectors = _vectors()
    copied = [c for c in load_cases("DeepSeek-V4-Pro") if c.source.kind == "vector"]
    assert len(copied) >= 50
    for case in copied:
        record = vectors[case.source.ref]
        assert case.steps[0].body == {**record["request"], "model": "DeepSeek-V4-Pro"}, case.id
        error = record["expect"].get("error")
        expectations = {s.name: s.params for s in case.checks}
        if error is None:
            assert "usage.prompt_parity" in expectations, case.id
            continue
        assert expectations["http.error_body"] == {
            "status": error["status_code"],
            "body": error["body"],
        }, case.id
        assert expectations["http.status"] == {"equals": error["status_code"]}, case.id
