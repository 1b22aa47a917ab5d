"""The `vectors` command of the `deepseek-recipe` CLI."""

from __future__ import annotations

import json
import shutil

import pytest

from deepseek_recipe.cli import main
from tests.vectors import VECTORS, load_jsonl


def _requests_dir():
    load_jsonl("requests/messages.jsonl")  # skips or fails when the vectors are missing
    return VECTORS / "requests"


def test_real_request_and_stream_vectors_pass(capsys, tmp_path):
    report = tmp_path / "report.json"
    assert main(["vectors", str(_requests_dir()), "--json", str(report)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "messages.jsonl: 342 passed, 0 failed" in out
    assert out[-1] == f"{1500} passed, 0 failed"
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["passed"] == 1500 and data["failed"] == 0
    cases = [case for file in data["files"] for case in file["cases"]]
    assert {case["status"] for case in cases} == {"passed"}
    assert main(["vectors", str(VECTORS / "streams")]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1500 passed, 0 failed"


def test_doctored_copy_fails(capsys, tmp_path):
    source = _requests_dir()
    text = (source / "chat_completions.jsonl").read_text(encoding="utf-8")
    everything = [json.loads(line) for line in text.splitlines() if line.strip()]
    ok = next(r for r in everything if "prompt" in r["expect"])
    ok["expect"]["prompt"] += "!"
    bad = next(
        r
        for r in everything
        if "error" in r["expect"] and r["expect"]["error"]["stage"] == "convert"
    )
    bad["expect"]["error"]["body"]["error"]["message"] = "something else"
    records = [*[r for r in everything if r is not ok and r is not bad][:18], ok, bad]
    doctored = tmp_path / "doctored"
    doctored.mkdir()
    (doctored / "chat_completions.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    shutil.copy(source / "manifest.json", doctored / "manifest.json")
    report = tmp_path / "report.json"
    assert main(["vectors", str(doctored), "--json", str(report)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "18 passed, 2 failed"
    failed = [
        case
        for file in json.loads(report.read_text(encoding="utf-8"))["files"]
        for case in file["cases"]
        if case["status"] == "failed"
    ]
    assert {case["id"] for case in failed} == {ok["id"], bad["id"]}
    assert all(case["mismatches"] and "expected" in case for case in failed)


def test_unreadable_file_and_empty_dir(capsys, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["vectors", str(empty)]) == 1
    assert "no vectors found" in capsys.readouterr().err
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "requests.jsonl").write_text("{not json\n", encoding="utf-8")
    assert main(["vectors", str(broken)]) == 1
    assert "unreadable" in capsys.readouterr().out
    assert main(["vectors", str(tmp_path / "missing")]) != 0


@pytest.mark.parametrize("name", ["image_tokens.jsonl"])
def test_image_records(capsys, name):
    load_jsonl(f"images/{name}")
    assert main(["vectors", str(VECTORS / "images" / name)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].endswith("passed, 0 failed")
