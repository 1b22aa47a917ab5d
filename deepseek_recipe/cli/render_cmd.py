"""`deepseek-recipe render`: the prompt (or token ids) the official API feeds its model."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from deepseek_recipe.requests import ConversionOptions, Protocol, convert
from deepseek_recipe.tokenizer import Tokenizer

PROTOCOLS: tuple[Protocol, ...] = ("chat_completions", "responses", "messages")


def register(subparsers: Any) -> None:
    """Add the `render` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "render",
        help="render a request into the prompt the model sees",
        description=(
            "Convert a Chat Completions, Responses or Messages request (JSON) and print the "
            "rendered prompt with special tokens marked, or its token ids with --ids. Invalid "
            "requests print the official error status and body and exit with status 2."
        ),
    )
    parser.add_argument(
        "request",
        nargs="?",
        type=Path,
        metavar="REQUEST.json",
        help="the request body; standard input when absent or '-'",
    )
    parser.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        help="the request's protocol (default: inferred from the body)",
    )
    parser.add_argument("--ids", action="store_true", help="print the prompt token ids instead")
    parser.add_argument(
        "--tokenizer",
        type=Path,
        metavar="PATH",
        help="tokenizer.json for --ids (default: the bundled V4 tokenizer; V4.1 needs one)",
    )
    parser.add_argument(
        "--options",
        type=Path,
        metavar="OPTIONS.json",
        help="conversion options as a JSON object (keys as in docs/requests.md)",
    )
    parser.add_argument(
        "--plain",
        action="store_true",
        help="mark special tokens with ⟦…⟧ instead of reverse video (default when not a terminal)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Render the request; print the prompt, or its ids with `--ids`."""
    from deepseek_recipe.errors import ConversionError

    body = _read_body(args.request)
    options = _read_options(args.options)
    try:
        converted = convert(body, protocol=args.protocol, options=options)
    except ConversionError as error:
        sys.stdout.write(f"{error.status_code} {json.dumps(error.body, ensure_ascii=False)}\n")
        return 2
    if args.ids:
        tokenizer = None if args.tokenizer is None else Tokenizer.from_file(args.tokenizer)
        sys.stdout.write(json.dumps(converted.encode(tokenizer)) + "\n")
        return 0
    rendered = converted.render()
    if args.plain or not sys.stdout.isatty():
        sys.stdout.write(rendered.marked("⟦", "⟧") + "\n")
    else:
        sys.stdout.write(rendered.marked() + "\n")
    return 0


def _read_body(path: Path | None) -> str:
    if path is None or str(path) == "-":
        return sys.stdin.read()
    return path.read_text(encoding="utf-8")


def _read_options(path: Path | None) -> ConversionOptions | None:
    if path is None:
        return None
    raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return ConversionOptions(**raw)
