"""`deepseek-recipe parse`: the response (or SSE stream) a host must send for a model output."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from deepseek_recipe.cli.render_cmd import PROTOCOLS
from deepseek_recipe.requests import convert
from deepseek_recipe.stream import StreamProcessor
from deepseek_recipe.tokenizer import Tokenizer


def register(subparsers: Any) -> None:
    """Add the `parse` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "parse",
        help="turn raw model output into the response a host must send",
        description=(
            "Parse raw model output (the text the model generated after the prompt: reasoning, "
            "</think>, content, DSML tool calls) for a request, and print the complete response "
            "JSON, or with --stream the exact SSE stream. The output is fed as token ids of the "
            "bundled V4 tokenizer, as a model would produce it."
        ),
    )
    parser.add_argument("output", type=Path, metavar="OUTPUT.txt", help="the raw model output")
    parser.add_argument(
        "--request", type=Path, required=True, metavar="REQUEST.json", help="the request body"
    )
    parser.add_argument("--protocol", choices=PROTOCOLS, help="default: inferred from the body")
    parser.add_argument("--stream", action="store_true", help="print the SSE stream instead")
    parser.add_argument(
        "--finish-reason",
        choices=("stop", "length", "content_filter"),
        default="stop",
        help="why the model stopped (default: stop)",
    )
    parser.add_argument("--seed", type=int, help="seed for the random tool-call ids")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Parse the output file for the request and print the response or stream."""
    converted = convert(args.request.read_text(encoding="utf-8"), protocol=args.protocol)
    tokenizer = Tokenizer.deepseek_v4()
    output_ids = tokenizer.encode(args.output.read_text(encoding="utf-8"), allow_special=True)
    prompt_tokens = len(converted.encode()) if converted.model_version == "DeepseekV4Pro" else 0
    processor = StreamProcessor(converted, seed=args.seed)
    chunks: list[dict[str, Any]] = [
        {"kind": "ready", "prompt_tokens": prompt_tokens, "prompt_cache_hit_tokens": 0},
        {"kind": "tokens", "token_ids": output_ids},
        {"kind": "finish", "finish_reason": args.finish_reason},
    ]
    sse = bytearray()
    for chunk in chunks:
        if processor.finished:
            break
        sse += processor.push_sse(chunk)
    sse += processor.finish_sse()
    if args.stream:
        sys.stdout.write(sse.decode("utf-8"))
    else:
        sys.stdout.write(
            json.dumps(json.loads(processor.response_json()), ensure_ascii=False, indent=2) + "\n"
        )
    return 0
