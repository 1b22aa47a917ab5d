"""`deepseek-recipe serve`: the reference server (needs the `engine` and `server` extras)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, cast

from deepseek_recipe.requests import ConversionOptions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The server's options (shared with `python -m deepseek_recipe_engine`)."""
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--model", default="tiny", help="engine model config (default tiny)")
    parser.add_argument(
        "--api-key", default=None, help="require this key (Bearer or x-api-key); default: none"
    )
    parser.add_argument("--weights", default=None, help="safetensors weights for the model")
    parser.add_argument("--device", default="cpu", help="torch device (default cpu)")
    parser.add_argument(
        "--max-model-len", type=int, default=2048, help="prompt + completion tokens (default 2048)"
    )
    parser.add_argument(
        "--max-concurrency",
        type=int,
        default=256,
        help="generations in flight before 429 (default 256)",
    )
    parser.add_argument(
        "--max-body-bytes",
        type=int,
        default=8 * 1024 * 1024,
        help="largest request body, else 413 (default 8 MiB)",
    )
    parser.add_argument(
        "--keepalive",
        type=float,
        default=10.0,
        help="seconds without output before a keep-alive is sent (default 10)",
    )
    parser.add_argument(
        "--max-completion-tokens",
        type=int,
        default=None,
        help="cap every generation's budget (for toy models; default: the official budget)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="sampling seed of requests without one (Responses, Messages; default: random)",
    )
    parser.add_argument(
        "--conversion-options",
        type=Path,
        default=None,
        metavar="FILE",
        help="JSON object of ConversionOptions fields (see docs/requests.md)",
    )
    parser.add_argument(
        "--reasoning-content-behavior",
        choices=["fill_empty", "reject"],
        default=None,
        help="missing reasoning_content after a tool call: fill it or answer the official 400",
    )
    parser.add_argument(
        "--tokenizer", default=None, help="tokenizer.json (default: the bundled V4 tokenizer)"
    )
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--log-level", default="info", help="uvicorn log level (default info)")


def register(subparsers: Any) -> None:
    """Add the `serve` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "serve",
        help="run the reference DeepSeek-compatible HTTP server",
        description="Serve /v1/chat/completions, /v1/responses, /v1/messages and /v1/models "
        "over the reference engine.",
    )
    add_arguments(parser)
    parser.set_defaults(handler=run)


def conversion_options(args: argparse.Namespace) -> ConversionOptions:
    """The options from `--conversion-options FILE`, then the flags that override them."""
    fields: dict[str, Any] = {}
    if args.conversion_options is not None:
        loaded: object = json.loads(args.conversion_options.read_text(encoding="utf-8"))
        if not isinstance(loaded, dict):
            raise ValueError("--conversion-options must hold a JSON object")
        fields.update(cast(dict[str, Any], loaded))
    if args.reasoning_content_behavior is not None:
        fields["reasoning_content_behavior"] = args.reasoning_content_behavior
    return ConversionOptions(**fields)


def run(args: argparse.Namespace) -> int:
    """Start the server; returns when it stops."""
    try:
        from deepseek_recipe_engine.serve import serve_from_args
    except ImportError as error:
        sys.stderr.write(
            f"deepseek-recipe serve: the server needs the engine and server extras ({error}); "
            "install them with: pip install 'deepseek-recipe[engine,server]'\n"
        )
        return 1
    return serve_from_args(args, conversion_options(args))
