"""`deepseek-recipe serve`: the reference server (needs the `engine` and `server` extras)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, cast

from deepseek_recipe.cli._extras import report_missing_extra
from deepseek_recipe.requests import ConversionOptions

EXTRAS = ("engine", "server")
"""The extras the command needs."""

RANDOM_WEIGHTS_COMPLETION_CAP = 32
"""The default budget cap when the model has seeded random weights (no `--weights`)."""

OFFICIAL_REASONING_CONTENT_BEHAVIOR = "reject"
"""What the official API does when an assistant tool call lacks `reasoning_content`: the server's
default, where the library's `ConversionOptions` default fills it in."""


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
        "--dtype",
        default="float32",
        choices=["float32", "bfloat16"],
        help="compute dtype; bfloat16 needs a CUDA device (default float32)",
    )
    parser.add_argument(
        "--max-model-len",
        type=int,
        default=2048,
        help="prompt + completion tokens per sequence; the KV cache is sized to hold one "
        "(default 2048; e.g. 131072 for 64K-token prompts)",
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
        "--max-body-memory",
        type=int,
        default=256 * 1024 * 1024,
        metavar="BYTES",
        help="request bodies held in memory at once, else 503 (default 256 MiB)",
    )
    parser.add_argument(
        "--max-connections",
        type=int,
        default=2048,
        help="open connections; beyond it the one waiting longest for its headers is closed, "
        "else 503 (default 2048, lowered to fit the file-descriptor limit)",
    )
    parser.add_argument(
        "--header-timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds a client has to send a request's headers, else 408 (default 10)",
    )
    parser.add_argument(
        "--body-timeout",
        type=float,
        default=60.0,
        metavar="S",
        help="seconds a client has to send a request's body after its headers, else 408 "
        "(default 60)",
    )
    parser.add_argument(
        "--prepare-threads",
        type=int,
        default=2,
        help="requests converted and encoded at once, off the event loop (default 2)",
    )
    parser.add_argument(
        "--image-threads",
        type=int,
        default=4,
        help="requests whose V4.1 images are fetched and decoded at once (default 4)",
    )
    parser.add_argument(
        "--keepalive",
        type=float,
        default=10.0,
        help="seconds without output before a keep-alive is sent (default 10)",
    )
    parser.add_argument(
        "--max-completion-tokens",
        type=_non_negative,
        default=None,
        metavar="N",
        help="cap every generation's budget at N tokens, 0 for no cap (default: "
        f"{RANDOM_WEIGHTS_COMPLETION_CAP} with seeded random weights, which never end an answer "
        "on their own; none with --weights: the official budget)",
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
        choices=["reject", "fill_empty"],
        default=None,
        help="missing reasoning_content after a tool call: answer the official 400 (reject, the "
        "default unless --conversion-options sets it) or fill it in (fill_empty)",
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
    fields.setdefault("reasoning_content_behavior", OFFICIAL_REASONING_CONTENT_BEHAVIOR)
    return ConversionOptions(**fields)


def completion_cap(args: argparse.Namespace) -> int | None:
    """The cap on every generation's budget (None: the official budget): `--max-completion-tokens`
    (0: none), by default `RANDOM_WEIGHTS_COMPLETION_CAP` without `--weights`."""
    if args.max_completion_tokens is None:
        return RANDOM_WEIGHTS_COMPLETION_CAP if args.weights is None else None
    return args.max_completion_tokens or None


def _non_negative(text: str) -> int:
    if not (text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(f"must be a whole number, 0 or more, got {text!r}")
    return int(text)


def run(args: argparse.Namespace) -> int:
    """Start the server; returns when it stops."""
    try:
        from deepseek_recipe_engine.serve import serve_from_args
    except ImportError as error:
        return report_missing_extra("serve", error, EXTRAS)
    return serve_from_args(args, conversion_options(args))
