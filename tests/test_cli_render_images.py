"""`deepseek-recipe render` with V4.1 images: placeholders, per-image token counts, totals."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from deepseek_recipe import Tokenizer, convert, preprocess
from deepseek_recipe.cli import main
from tests.test_images_api import GIF_17x9, PNG_40x50


def _request(tmp_path: Path, *urls: str, model: str = "DeepSeek-V4.1-Flash") -> Path:
    parts: list[dict[str, object]] = [{"type": "text", "text": "Compare"}]
    parts += [{"type": "image_url", "image_url": {"url": url}} for url in urls]
    body = {"model": model, "messages": [{"role": "user", "content": parts}]}
    path = tmp_path / "request.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def _data_url(data: bytes, mime: str) -> str:
    return f"data:{mime};base64," + base64.b64encode(data).decode()


def test_render_lists_images_and_counts_prompt_tokens(capsys, tmp_path):
    request = _request(
        tmp_path, _data_url(PNG_40x50, "image/png"), _data_url(GIF_17x9, "image/gif")
    )
    tokenizer = tmp_path / "tokenizer.json"
    tokenizer.write_text(Tokenizer.deepseek_v41_json(), encoding="utf-8")
    assert main(["render", str(request), "--plain", "--tokenizer", str(tokenizer)]) == 0
    out = capsys.readouterr().out
    assert out.count("⟦<｜image｜>⟧") == 2
    lines = out.splitlines()
    at = lines.index("images: 2")
    png, gif = preprocess(PNG_40x50), preprocess(GIF_17x9)
    assert lines[at + 1].startswith("  [1] .messages[0]  data URL data:image/png;base64")
    assert lines[at + 1].endswith("detail=high -> 490x616 webp (from png), 197 tokens")
    assert lines[at + 2].endswith(
        f"-> {gif.width}x{gif.height} webp (from gif), {gif.token_count} tokens"
    )
    adjustment = png.token_adjustment + gif.token_adjustment
    assert lines[at + 3].startswith(f"image tokens: {png.token_count + gif.token_count}; ")
    text = len(convert(json.loads(request.read_text())).encode(Tokenizer.deepseek_v41()))
    assert lines[at + 4] == (
        f"prompt tokens: {text + adjustment} ({text} encoded, placeholders included, "
        f"+ {adjustment} for images)"
    )


def test_render_without_tokenizer_still_counts_images(capsys, tmp_path):
    request = _request(tmp_path, _data_url(PNG_40x50, "image/png"))
    assert main(["render", str(request), "--plain"]) == 0
    out = capsys.readouterr().out
    assert "image tokens: 197; a prompt count adds 196" in out
    assert "prompt tokens: pass --tokenizer" in out


def test_render_reports_refused_images(capsys, tmp_path):
    request = _request(tmp_path, "http://127.0.0.1:9/x.png")
    assert main(["render", str(request), "--plain"]) == 2
    out = capsys.readouterr().out
    assert "  [1] .messages[0]  http://127.0.0.1:9/x.png  detail=high" in out
    assert "image error (DestinationRejected): .messages[0].image[0]: Failed to download" in out
    assert main(["render", str(request), "--plain", "--image-fetch", "none"]) == 2
    assert "image error (Fetch)" in capsys.readouterr().out


def test_render_no_images_flag_and_v4(capsys, tmp_path):
    request = _request(tmp_path, "http://127.0.0.1:9/x.png")
    assert main(["render", str(request), "--plain", "--no-images"]) == 0
    assert "images:" not in capsys.readouterr().out
    v4 = _request(tmp_path, "http://127.0.0.1:9/x.png", model="DeepSeek-V4-Pro")
    assert main(["render", str(v4), "--plain"]) == 0
    out = capsys.readouterr().out
    assert "[Unsupported Image]" in out and "images:" not in out


def test_render_help_mentions_images(capsys):
    try:
        main(["render", "--help"])
    except SystemExit as exit_:
        assert exit_.code == 0
    out = capsys.readouterr().out
    assert "--image-fetch" in out and "--no-images" in out and "token count" in out
