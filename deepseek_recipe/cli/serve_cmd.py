"""`deepseek-recipe serve`: the reference server (needs the `engine` and `server` extras)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, cast

from deepseek_recipe.cli._extras import report_missing_extra
from deepseek_recipe.requests import ConversionOptions

EXTRAS = ("engine", "server")
"""The extras the command needs."""

RANDOM_WEIGHTS_COMPLETION_CAP = 32
"""The default budget cap when the model has seeded random weights (no `--weights`)."""

DEFAULT_MAX_MODEL_LEN = 2048
"""The bundled engine's context length unless `--max-model-len` says otherwise."""

BACKENDS = ("engine", "vllm", "sglang")
"""What `--backend` may name: the bundled engine, or a serving engine at `--backend-url`."""

OFFICIAL_REASONING_CONTENT_BEHAVIOR = "reject"
"""What the official API does when an assistant tool call lacks `reasoning_content`: the server's
default, where the library's `ConversionOptions` default fills it in."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The server's options (shared with `python -m deepseek_recipe_engine`)."""
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default="engine",
        help="what generates: the bundled engine (default), or vLLM / SGLang servers at "
        "--backend-url, which get the prompt token ids and return generated ids "
        "(docs/backends.md)",
    )
    parser.add_argument(
        "--backend-url",
        action="append",
        default=[],
        metavar="URL",
        help="base URL of a vLLM or SGLang server (e.g. http://127.0.0.1:8100); repeat for "
        "several, which share the load (fewest requests in flight first)",
    )
    parser.add_argument(
        "--backend-api-key",
        default=None,
        metavar="KEY",
        help="sent to the backend servers as `Authorization: Bearer KEY`",
    )
    parser.add_argument(
        "--backend-timeout",
        type=float,
        default=600.0,
        metavar="S",
        help="longest wait for a backend's next output, queueing included (default 600)",
    )
    parser.add_argument(
        "--backend-connect-timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="longest wait to connect to a backend server (default 10)",
    )
    parser.add_argument(
        "--backend-retry",
        type=float,
        default=10.0,
        metavar="S",
        help="a backend server out of reach is left out this long, then tried again (default 10)",
    )
    parser.add_argument(
        "--model", default="tiny", help="engine model config (default tiny; engine only)"
    )
    parser.add_argument(
        "--api-key", default=None, help="require this key (Bearer or x-api-key); default: none"
    )
    parser.add_argument(
        "--weights", default=None, help="safetensors weights for the model (engine only)"
    )
    parser.add_argument("--device", default="cpu", help="torch device (default cpu; engine only)")
    parser.add_argument(
        "--dtype",
        default="float32",
        choices=["float32", "bfloat16"],
        help="compute dtype; bfloat16 needs a CUDA device (default float32; engine only)",
    )
    parser.add_argument(
        "--max-model-len",
        type=int,
        default=None,
        help="prompt + completion tokens per sequence; the engine's KV cache is sized to hold "
        f"one (default {DEFAULT_MAX_MODEL_LEN}; e.g. 131072 for 64K-token prompts; with "
        "--backend-url: the smallest max_model_len the servers list)",
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
        f"{RANDOM_WEIGHTS_COMPLETION_CAP} for the engine with seeded random weights, which never "
        "end an answer on their own; none with --weights or --backend-url: the official budget)",
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
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (engine only)")
    parser.add_argument("--log-level", default="info", help="uvicorn log level (default info)")


def register(subparsers: Any) -> None:
    """Add the `serve` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "serve",
        help="run the reference DeepSeek-compatible HTTP server",
        description="Serve /v1/chat/completions, /v1/responses, /v1/messages and /v1/models "
        "over the reference engine, or in front of vLLM or SGLang servers (--backend).",
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
        random_weights = args.backend == "engine" and args.weights is None
        return RANDOM_WEIGHTS_COMPLETION_CAP if random_weights else None
    return args.max_completion_tokens or None


def backend_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the backend options, if anything."""
    if args.backend == "engine" and args.backend_url:
        return "--backend-url needs --backend vllm or --backend sglang"
    if args.backend != "engine" and not args.backend_url:
        return f"--backend {args.backend} needs at least one --backend-url"
    return None


def _non_negative(text: str) -> int:
    if not (text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(f"must be a whole number, 0 or more, got {text!r}")
    return int(text)


def run(args: argparse.Namespace) -> int:
    """Start the server; returns when it stops."""
    problem = backend_problem(args)
    if problem is not None:
        sys.stderr.write(f"deepseek-recipe serve: error: {problem}\n")
        return 2
    try:
        from deepseek_recipe_engine.serve import serve_from_args
    except ImportError as error:
        return report_missing_extra("serve", error, EXTRAS)
    return serve_from_args(args, conversion_options(args))
