"""`deepseek-recipe render`: prompts, ids and official errors from a request file or stdin."""

from __future__ import annotations

import io
import json

from deepseek_recipe.cli import main

REQUEST = {
    "model": "DeepSeek-V4-Pro",
    "messages": [{"role": "user", "content": "Hi <｜User｜>"}],
    "thinking": {"type": "disabled"},
}


def test_render_marks_only_real_special_tokens(capsys, tmp_path):
    path = tmp_path / "request.json"
    path.write_text(json.dumps(REQUEST), encoding="utf-8")
    assert main(["render", str(path), "--plain"]) == 0
    out = capsys.readouterr().out
    assert out == "⟦<｜begin▁of▁sentence｜>⟧⟦<｜User｜>⟧Hi <｜User｜>⟦<｜Assistant｜>⟧⟦</think>⟧\n"


def test_render_ids_from_stdin(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(REQUEST)))
    assert main(["render", "--ids"]) == 0
    ids = json.loads(capsys.readouterr().out)
    assert ids[:2] == [0, 128803]
    assert ids[-2:] == [128804, 128822]
    assert 128803 not in ids[2:-2], "typed special-token spelling must stay plain text"


def test_render_invalid_request_prints_official_error(capsys, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"model": "DeepSeek-V4-Pro", "messages": []}), encoding="utf-8")
    assert main(["render", str(path)]) == 2
    status, body = capsys.readouterr().out.split(" ", 1)
    assert status == "400"
    assert json.loads(body)["error"]["message"] == "Empty input messages"


def test_render_protocol_flag(capsys, tmp_path):
    path = tmp_path / "messages.json"
    body = {
        "model": "DeepSeek-V4-Pro",
        "max_tokens": 16,
        "messages": [{"role": "user", "content": "Hi"}],
    }
    path.write_text(json.dumps(body), encoding="utf-8")
    assert main(["render", str(path), "--protocol", "messages", "--plain"]) == 0
    assert "⟦<｜User｜>⟧Hi⟦<｜Assistant｜>⟧" in capsys.readouterr().out
