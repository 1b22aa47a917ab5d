"""The bundled case files: format, coverage, and fidelity of data copied from the golden vectors."""

import json

from deepseek_recipe_conformance.cases import builtin_dir, case_files, load_cases
from deepseek_recipe_conformance.checks import REGISTRY
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
            assert step.body["model"] == "my-model"
            assert "{model}" not in json.dumps(step.body)
            assert (step.body.get("stream") is True) == step.stream


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
