"""The `tokenize` and `count` commands of the `deepseek-recipe` CLI."""

from __future__ import annotations

import io
import json

import pytest
from tokenizer_corpus import TOKENIZER_JSON

from deepseek_recipe import Tokenizer
from deepseek_recipe.cli import COMMANDS, main


def test_tokenize_json_from_argument(capsys):
    assert main(["tokenize", "Hello world", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ids"] == Tokenizer.deepseek_v4().encode("Hello world")
    assert out["tokens"] == ["Hello", "Ġworld"]


def test_tokenize_lines_and_special(capsys):
    assert main(["tokenize", "<think>hi", "--special"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == ['128821\t"<think>"', '6366\t"hi"']
    assert main(["tokenize", "<think>"]) == 0
    assert len(capsys.readouterr().out.splitlines()) > 1


def test_count_from_file_and_stdin(capsys, tmp_path, monkeypatch):
    path = tmp_path / "text.txt"
    path.write_text("one two three\n中文", encoding="utf-8")
    expected = Tokenizer.deepseek_v4().count("one two three\n中文")
    assert main(["count", "--file", str(path)]) == 0
    assert capsys.readouterr().out == f"{expected}\n"
    monkeypatch.setattr("sys.stdin", io.StringIO("one two three\n中文"))
    assert main(["count"]) == 0
    assert capsys.readouterr().out == f"{expected}\n"


def test_custom_tokenizer_path(capsys):
    assert main(["count", "abc", "--tokenizer", str(TOKENIZER_JSON)]) == 0
    assert capsys.readouterr().out == "1\n"


def test_errors_exit_with_status_1(capsys, tmp_path):
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{}", encoding="utf-8")
    assert main(["count", "x", "--tokenizer", str(bad)]) == 1
    assert "invalid tokenizer.json" in capsys.readouterr().err
    assert main(["count", "--file", str(tmp_path / "missing.txt")]) == 1


def test_help_lists_commands(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for command in ("tokenize", "count"):
        assert command in out
    assert all(hasattr(module, "register") for module in COMMANDS)
