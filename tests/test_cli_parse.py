"""`deepseek-recipe parse`: raw model output → the response or SSE stream a host must send."""

from __future__ import annotations

import json

from deepseek_recipe.cli import main

OUTPUT = (
    "Let me check.</think>Sure.\n\n<｜DSML｜tool_calls>\n"
    '<｜DSML｜invoke name="get_weather">\n'
    '<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n'
    "</｜DSML｜invoke>\n</｜DSML｜tool_calls>"
)
REQUEST = {
    "model": "DeepSeek-V4-Pro",
    "messages": [{"role": "user", "content": "Weather in Paris?"}],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ],
}


def _files(tmp_path):
    output, request = tmp_path / "out.txt", tmp_path / "req.json"
    output.write_text(OUTPUT, encoding="utf-8")
    request.write_text(json.dumps(REQUEST), encoding="utf-8")
    return str(output), str(request)


def test_parse_prints_the_complete_response(capsys, tmp_path):
    output, request = _files(tmp_path)
    assert main(["parse", output, "--request", request, "--seed", "7"]) == 0
    response = json.loads(capsys.readouterr().out)
    choice = response["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["reasoning_content"] == "Let me check."
    assert choice["message"]["content"] == "Sure."
    call = choice["message"]["tool_calls"][0]
    assert call["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert response["usage"]["completion_tokens_details"]["reasoning_tokens"] > 0


def test_parse_stream_ends_with_done(capsys, tmp_path):
    output, request = _files(tmp_path)
    assert main(["parse", output, "--request", request, "--stream"]) == 0
    frames = [f for f in capsys.readouterr().out.split("\n\n") if f]
    assert frames[-1] == "data: [DONE]"
    assert all(frame.startswith("data: ") for frame in frames)
    assert "｜DSML｜" not in "".join(frames[:-1])
