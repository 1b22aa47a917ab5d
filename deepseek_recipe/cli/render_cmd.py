"""`deepseek-recipe render`: the prompt (or token ids) the official API feeds its model."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from deepseek_recipe.images import (
    FetchPolicy,
    ImageResolver,
    ImageSource,
    ResolvedImages,
    request_image_sources,
)
from deepseek_recipe.requests import ConversionOptions, ConvertedRequest, Protocol, convert
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
            "requests print the official error status and body and exit with status 2. "
            "V4.1 requests with images also list every image placeholder: its source, request "
            "path, detail, preprocessed size and token count, then the image tokens and the "
            "prompt token count including them (images are decoded or fetched for this; an "
            "image the official API would refuse prints its error and exits with status 2)."
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
    parser.add_argument(
        "--no-images",
        action="store_true",
        help="do not resolve images: print the prompt only",
    )
    parser.add_argument(
        "--image-fetch",
        choices=("public", "any", "none"),
        default="public",
        help="which image URLs may be fetched: public addresses only (default), any address "
        "including loopback and private networks, or none (URL images then fail)",
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
    if args.no_images or rendered.image_count == 0:
        return 0
    return _write_images(converted, args)


def _write_images(converted: ConvertedRequest, args: argparse.Namespace) -> int:
    """Lists the prompt's images with their token counts, then the prompt token count."""
    from deepseek_recipe.errors import EncodeError, ImageError

    sources = request_image_sources(converted)
    sys.stdout.write(f"images: {len(sources)}\n")
    try:
        resolved = _resolver(args.image_fetch).resolve(sources)
    except ImageError as error:
        for index, source in enumerate(sources, start=1):
            sys.stdout.write(_source_line(index, source) + "\n")
        sys.stdout.write(f"image error ({error.kind}): {error}\n")
        return 2
    for index, (source, image) in enumerate(zip(sources, resolved.images, strict=True), start=1):
        sys.stdout.write(
            f"{_source_line(index, source)} -> {image.width}x{image.height} {image.format} "
            f"(from {image.source_format}), {image.token_count} tokens\n"
        )
    sys.stdout.write(_totals(resolved) + "\n")
    tokenizer = None if args.tokenizer is None else Tokenizer.from_file(args.tokenizer)
    if tokenizer is None and converted.model_version != "DeepseekV4Pro":
        sys.stdout.write("prompt tokens: pass --tokenizer to count the text of a V4.1 prompt\n")
        return 0
    try:
        text_tokens = len(converted.encode(tokenizer))
    except EncodeError as error:
        sys.stdout.write(f"prompt tokens: {error}\n")
        return 0
    total = text_tokens + resolved.token_adjustment
    sys.stdout.write(
        f"prompt tokens: {total} ({text_tokens} encoded, placeholders included, "
        f"+ {resolved.token_adjustment} for images)\n"
    )
    return 0


def _resolver(fetch: str) -> ImageResolver:
    if fetch == "none":
        return ImageResolver(offline=True)
    return ImageResolver(fetch=FetchPolicy(allow_special_addresses=fetch == "any"))


def _source_line(index: int, source: ImageSource) -> str:
    path = source.path or "-"
    return f"  [{index}] {path}  {source.describe()}  detail={source.detail}"


def _totals(resolved: ResolvedImages) -> str:
    tokens = sum(image.token_count for image in resolved.images)
    return (
        f"image tokens: {tokens}; a prompt count adds {resolved.token_adjustment} "
        "(each placeholder already counts as one token)"
    )


def _read_body(path: Path | None) -> str:
    if path is None or str(path) == "-":
        return sys.stdin.read()
    return path.read_text(encoding="utf-8")


def _read_options(path: Path | None) -> ConversionOptions | None:
    if path is None:
        return None
    raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return ConversionOptions(**raw)
