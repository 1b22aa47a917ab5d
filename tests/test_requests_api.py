"""The request API's Python surface: what `convert`, `render` and `encode` return."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

import deepseek_recipe as dr

BODY = {
    "model": "DeepSeek-V4-Pro",
    "messages": [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Say <｜User｜> back, then 中文 and 😀."},
    ],
}


def test_every_request_form_converts_alike():
    text = json.dumps(BODY, ensure_ascii=False)
    expected = dr.convert(BODY).to_json()
    assert dr.convert(text).to_json() == expected
    assert dr.convert(text.encode()).to_json() == expected
    assert dr.convert(text, protocol="chat_completions").to_json() == expected


def test_render_makes_the_prompt_string_once():
    converted = dr.convert(BODY)
    first, second = converted.render(), converted.render()
    assert first.prompt is second.prompt
    assert first.special_ranges == second.special_ranges
    # Each call gets its own ranges list: changing one changes no later result.
    first.special_ranges.clear()
    assert converted.render().special_ranges == second.special_ranges != []
    for start, end in second.special_ranges:
        assert second.prompt[start:end].startswith("<")


def test_rendered_prompts_are_the_frozen_dataclass_init_makes():
    rendered = dr.render(BODY)
    made = dr.RenderedPrompt(rendered.prompt, rendered.special_ranges, rendered.image_count)
    assert rendered == made and repr(rendered) == repr(made)
    assert vars(rendered) == vars(made)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rendered.prompt = ""  # type: ignore[misc]


def test_encode_after_render_is_the_fresh_encode():
    converted = dr.convert(BODY)
    converted.render()
    assert converted.encode() == dr.convert(BODY).encode() == dr.encode(BODY)


def test_long_prompts_of_every_character_width_render_exactly():
    # Long non-ASCII prompts are built piece by piece (a wide character early, late, cut by a
    # piece boundary, or absent; long narrow stretches alone); the text must come out whole
    # whatever the mix.
    def body(content: str) -> dict[str, object]:
        return {**BODY, "messages": [{"role": "user", "content": content}]}

    template = dr.render(body("@")).prompt
    for content in [
        "plain ascii words " * 5000,
        "é" * 20_000 + "中" * 20_000 + "😀" * 20_000,
        "x" * 16_383 + "😀" + "y" * 40_000,
        "中文" * 30_000 + "z",
        ("a😀é中\n" * 9000)[:-1],
        # Long narrow stretches (own pieces) between wide characters, and short ones.
        ("ascii and é " * 300 + "😀中") * 40,
        "😀" + "ÿ" * 1023 + "中" + "a" * 1024 + "😀" + "b" * 5000,
    ]:
        rendered = dr.render(body(content))
        assert rendered.prompt == template.replace("@", content)
        for start, end in rendered.special_ranges:
            assert rendered.prompt[start:end].startswith("<")


def test_plain_requests_do_not_load_the_typed_models() -> None:
    # Token counting and prompt rendering of plain JSON need neither pydantic nor the models
    # (about 20 MB and a fifth of a second of import); a typed request still converts.
    script = (
        "import sys, json, deepseek_recipe as dr\n"
        f"body = {json.dumps(BODY)!r}\n"
        "dr.render(body); dr.encode(json.loads(body)); dr.count_prompt_tokens(body)\n"
        "assert 'pydantic' not in sys.modules and 'deepseek_recipe.models' not in sys.modules\n"
        "from deepseek_recipe.models import ChatCompletionRequest\n"
        "typed = ChatCompletionRequest.model_validate_json(body)\n"
        "assert dr.encode(typed) == dr.encode(body)\n"
        "from deepseek_recipe.requests import infer_protocol\n"
        "assert infer_protocol(typed) == 'chat_completions'\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)
